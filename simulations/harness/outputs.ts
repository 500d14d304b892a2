/**
 * What a job's outputs are, as output-manifest CIDs (the receipt's `outputs`): the harness runs no code,
 * so a job's true output is a function of the job's id — every honest provider that runs the job names
 * the same CID, as a deterministic job's honest replicas do — and colluding cheaters (provider-node.ts
 * `collude`) all name one other CID per job, so two cheaters on one job agree with each other and
 * disagree with every honest provider. Both are well-formed CIDv1 (dag-cbor, sha2-256) like ids.ts's.
 */
import { CID } from '../../crypto/index.js'

const DAG_CBOR = 0x71
const SHA2_256 = 0x12
const DIGEST_BYTES = 32
const TAG_BYTES = 8

/** A CID whose digest is `tag` (8 bytes) then the last 24 bytes of `job`'s digest: one per job and tag. */
function outputCid (tag: string, job: string): CID {
  const digest = CID.parse(job).multihash.digest
  const bytes = new Uint8Array(4 + DIGEST_BYTES)
  bytes.set([0x01, DAG_CBOR, SHA2_256, DIGEST_BYTES])
  for (let i = 0; i < TAG_BYTES && i < tag.length; i++) bytes[4 + i] = tag.charCodeAt(i) & 0x7f
  const rest = DIGEST_BYTES - TAG_BYTES
  bytes.set(digest.slice(Math.max(0, digest.length - rest)), 4 + TAG_BYTES + Math.max(0, rest - digest.length))
  return CID.decode(bytes)
}

/** The output manifest every honest run of `job` (its id, a CID string) produces. */
export function trueOutput (job: string): CID {
  return outputCid('true-out', job)
}

/** The one wrong output manifest colluding cheaters all return for `job`. */
export function colludedOutput (job: string): CID {
  return outputCid('wrongout', job)
}
