/**
 * Content ids (DESIGN §3): CIDv1 with sha2-256, codec dag-cbor (0x71) for structured values and
 * raw (0x55) for blobs.
 */
import * as dagCbor from '@ipld/dag-cbor'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { CID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'

export const SHA2_256 = 0x12
export const RAW_CODEC = 0x55
export const DAG_CBOR_CODEC = dagCbor.code

/** A synchronous SHA-256: the portable @noble/hashes one by default, OpenSSL's once node/ installs it. */
export type Sha256 = (bytes: Uint8Array) => Uint8Array

let sha256Impl: Sha256 = nobleSha256

export function sha256 (bytes: Uint8Array): Uint8Array {
  return sha256Impl(bytes)
}

/** Install a faster SHA-256 (node/native-crypto.ts does, for the daemon's large blobs). Same digests. */
export function setSha256 (impl: Sha256): void {
  sha256Impl = impl
}

function cidOf (codec: number, bytes: Uint8Array): CID {
  return CID.createV1(codec, Digest.create(SHA2_256, sha256(bytes)))
}
/** CID of bytes that are already canonical DAG-CBOR (e.g. a message payload). */
export function cidOfCborBytes (bytes: Uint8Array): CID {
  return cidOf(DAG_CBOR_CODEC, bytes)
}

/** CID of a raw blob. */
export function cidOfRaw (bytes: Uint8Array): CID {
  return cidOf(RAW_CODEC, bytes)
}

/** Encode a value canonically and return its CID with the bytes. */
export function cidOfValue (value: unknown): { cid: CID, bytes: Uint8Array } {
  const bytes = dagCbor.encode(value)
  return { cid: cidOfCborBytes(bytes), bytes }
}

/** True when `bytes` hash to `cid` under the CID's own codec and sha2-256. */
export function cidMatches (cid: CID, bytes: Uint8Array): boolean {
  if (cid.version !== 1 || cid.multihash.code !== SHA2_256) return false
  const expected = cidOf(cid.code, bytes)
  return expected.equals(cid)
}

export { CID }
