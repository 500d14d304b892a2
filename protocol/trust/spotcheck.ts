/**
 * `spotcheck perMille` (protocol/README.md "Verification and fraud proofs"): the requester re-runs a
 * share of its jobs on another provider and compares. Whether job J is re-run is a pure function of J's
 * id and a 32-byte seed the requester keeps secret, so the provider cannot tell a checked job from an
 * unchecked one, and once the requester reveals the seed anyone can recompute every decision it made
 * (it cannot have checked more or fewer jobs than the rate says without it showing).
 *
 *   draw(J, seed) = the first 4 bytes, big-endian, of sha2-256(UTF-8 "gpumesh/spotcheck/1\n" ‖ seed ‖ J's binary CID)
 *   J is re-run  ⇔  draw × 1000 < perMille × 2³²
 *
 * The check runs the same job id again (a new award attempt that excludes the first provider), so both
 * receipts name the same job and inputs, and the comparison is compareReplicas over the two providers:
 * they agree (a majority of two), or the buyer is told of the mismatch (no majority of two; a third run
 * breaks the tie).
 */
import { sha256, type CID } from '../../crypto/index.js'
import { fromString } from 'uint8arrays/from-string'
import type { OpenedMessage } from '../message.js'
import { InvalidVerificationInputError } from './invalid-input.js'
import { compareReplicas, type ReplicationOutcome } from './replicate.js'

export const SPOTCHECK_DOMAIN = 'gpumesh/spotcheck/1\n'
export const SPOTCHECK_SEED_BYTES = 32
/** 2³²: the draw's range. */
const DRAW_RANGE = 0x1_0000_0000
const PER_MILLE = 1000

const DOMAIN_BYTES = fromString(SPOTCHECK_DOMAIN)

/** The job's draw, 0 … 2³² − 1. Throws InvalidVerificationInputError unless the seed is 32 bytes. */
export function spotcheckDraw (job: CID, seed: Uint8Array): number {
  if (!(seed instanceof Uint8Array) || seed.byteLength !== SPOTCHECK_SEED_BYTES) throw new InvalidVerificationInputError('seed', `expected ${SPOTCHECK_SEED_BYTES} bytes`)
  const id = job.bytes
  const preimage = new Uint8Array(DOMAIN_BYTES.byteLength + seed.byteLength + id.byteLength)
  preimage.set(DOMAIN_BYTES, 0)
  preimage.set(seed, DOMAIN_BYTES.byteLength)
  preimage.set(id, DOMAIN_BYTES.byteLength + seed.byteLength)
  const digest = sha256(preimage)
  return (((digest[0] as number) << 24) >>> 0) + ((digest[1] as number) << 16) + ((digest[2] as number) << 8) + (digest[3] as number)
}

/**
 * Whether a draw selects its job at `perMille` (1 … 1000): draw × 1000 < perMille × 2³², exact integer
 * arithmetic (below 2⁵³), so every node agrees. Throws InvalidVerificationInputError for another perMille.
 */
export function drawSelects (draw: number, perMille: number): boolean {
  if (!Number.isInteger(perMille) || perMille < 1 || perMille > PER_MILLE) throw new InvalidVerificationInputError('perMille', `expected an integer in 1..${PER_MILLE}`)
  return draw * PER_MILLE < perMille * DRAW_RANGE
}

/** Whether job `job` is re-run at `perMille` (1 … 1000) under `seed`. */
export function spotchecked (job: CID, seed: Uint8Array, perMille: number): boolean {
  return drawSelects(spotcheckDraw(job, seed), perMille)
}

export interface SpotcheckComparisonInput {
  readonly request: OpenedMessage<'job-request'>
  /** The provider that ran the job first. */
  readonly original: string
  /** The provider that re-ran it. */
  readonly checker: string
  /** Every verified receipt held for the job. */
  readonly receipts: ReadonlyArray<OpenedMessage<'receipt'>>
}

/** Compare the original run with the check: a `majority` outcome is agreement; `no-majority` goes to the buyer. */
export function compareSpotcheck (input: SpotcheckComparisonInput): ReplicationOutcome {
  if (input.original === input.checker) throw new InvalidVerificationInputError('checker', 'the check must run on another provider')
  return compareReplicas({ request: input.request, replicas: [input.original, input.checker], receipts: input.receipts })
}
