/**
 * Fixed, signed material for the verification tests (test/unit/protocol/trust/): a wasm job request,
 * receipts of it by fixed provider keys, and the opened forms the pure code reads. Everything is
 * deterministic (fixed seeds, nonces and times), so the fraud-proof vector can be built from it.
 */
import { Identity, cidOfRaw, cidOfValue, type CID } from '../../crypto/index.js'
import { openMessage, sealMessage, type JobRequest, type OpenedMessage, type Receipt } from '../../protocol/index.js'

/** 2026-01-01T00:00:00Z. */
export const T = 1_767_225_600_000
export const HOUR = 3_600_000

/** Seed 07: the requester (the README §8 key). */
export const REQUESTER = new Identity(new Uint8Array(32).fill(7))
/** Provider n has the seed of 32 bytes of n (n = 0x10 … keeps clear of the other fixed keys). */
export const provider = (n: number): Identity => new Identity(new Uint8Array(32).fill(0x10 + n))

export const INPUT = cidOfRaw(new TextEncoder().encode('(module)'))
export const DATA = cidOfRaw(new TextEncoder().encode('1 2 3\n'))

export function jobPayload (overrides: Partial<JobRequest['workload']> = {}): JobRequest {
  return {
    v: 1,
    issuedAt: T,
    expiresAt: T + HOUR,
    nonce: new Uint8Array(16).fill(0xaa),
    workload: {
      executor: 'wasm',
      argv: ['sum.wasm', 'data.txt'],
      env: {},
      inputs: [{ path: 'sum.wasm', cid: INPUT, size: 8 }, { path: 'data.txt', cid: DATA, size: 6 }],
      outputs: ['sum.txt'],
      maxRuntimeSec: 60,
      network: false,
      ...overrides
    },
    resources: { gpus: 0, minVramGB: 0, models: [], cpuCores: 1, memoryMiB: 256, diskMiB: 64 },
    sla: { tier: 'silver', maxPrice: 2_000_000, maxStartDelaySec: 600 },
    placement: { regions: [], residency: 'prefer' },
    verification: { mode: 'replicate', k: 3 },
    auction: { bidWindowMs: 2000, paymentRule: 'first-price' }
  }
}

/** A job request as a receiver holds it (sealed by REQUESTER, opened). */
export function openedJob (payload: JobRequest = jobPayload(), signer: Identity = REQUESTER): OpenedMessage<'job-request'> {
  return openMessage(sealMessage(signer, 'job-request', payload).bytes, 'job-request', { now: T, historical: true })
}

/** The CID of an output manifest naming one file whose content is `content`. */
export function outputs (content: string): CID {
  const bytes = new TextEncoder().encode(content)
  return cidOfValue({ files: [{ path: 'sum.txt', size: bytes.byteLength, cid: cidOfRaw(bytes) }] }).cid
}

/** An award CID for attempt `n` (receipts name the award they answer). */
export const awardCid = (n: number): CID => cidOfValue({ award: n }).cid

/** A receipt of `job` by `signer`, opened as a receiver holds it. */
export function receipt (signer: Identity, job: OpenedMessage<'job-request'>, fields: Partial<Receipt> = {}): OpenedMessage<'receipt'> {
  const payload: Receipt = {
    v: 1,
    issuedAt: T + 120_000,
    expiresAt: T + 30 * 24 * HOUR,
    job: job.cid,
    award: awardCid(1),
    requester: job.signer,
    inputs: job.payload.workload.inputs.map((i) => i.cid),
    outputs: outputs('6'),
    exitCode: 0,
    startedAt: T + 60_000,
    endedAt: T + 61_000,
    gpuSeconds: 0,
    gpus: [],
    executor: 'wasm',
    ...fields
  }
  return openMessage(sealMessage(signer, 'receipt', payload).bytes, 'receipt', { now: T, historical: true })
}
