/**
 * Deterministic ids for the harness. A daemon names messages by the CID of their signed payload;
 * the harness signs nothing, so it names them by a counter instead: each id is a well-formed CIDv1
 * (dag-cbor, sha2-256) whose digest spells the id's namespace and number, so the schemas' CID
 * checks and `CID.equals` work as on the wire, and the same run gives the same ids.
 */
import { CID } from '../../crypto/index.js'

const DAG_CBOR = 0x71
const SHA2_256 = 0x12
const DIGEST_BYTES = 32

/** A CID whose digest holds `tag` (its first 8 characters, as bytes) and `n` (big-endian). */
export function counterCid (tag: string, n: number): CID {
  const bytes = new Uint8Array(4 + DIGEST_BYTES)
  bytes.set([0x01, DAG_CBOR, SHA2_256, DIGEST_BYTES])
  for (let i = 0; i < 8 && i < tag.length; i++) bytes[4 + i] = tag.charCodeAt(i) & 0x7f
  let rest = Math.floor(n)
  for (let i = DIGEST_BYTES + 3; i >= 4 + 8 && rest > 0; i--) {
    bytes[i] = rest % 256
    rest = Math.floor(rest / 256)
  }
  return CID.decode(bytes)
}

/** Hands out ids from per-namespace counters. */
export class IdFactory {
  private readonly counters = new Map<string, number>()

  /** The next number in `namespace` (1, 2, …). */
  next (namespace: string): number {
    const n = (this.counters.get(namespace) ?? 0) + 1
    this.counters.set(namespace, n)
    return n
  }

  /** A fresh CID in `namespace` (e.g. 'job', 'bid', 'award', 'ad'). */
  cid (namespace: string): CID {
    return counterCid(namespace, this.next(namespace))
  }

  /** A fresh nonce (8 bytes) from the counter: unique within a run, like a random one. */
  nonce (): Uint8Array {
    const n = this.next('nonce')
    const out = new Uint8Array(8)
    let rest = n
    for (let i = 7; i >= 0 && rest > 0; i--) {
      out[i] = rest % 256
      rest = Math.floor(rest / 256)
    }
    return out
  }
}

/** A harness node's peer id: readable and unique (`peer:<name>`); the harness checks no signatures. */
export function peerIdOf (name: string): string {
  return `peer:${name}`
}
