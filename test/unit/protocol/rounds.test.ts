import assert from 'node:assert/strict'
import { Identity } from '../../../crypto/index.js'
import {
  MessageRejectedError, RejectReason, jobTopics, marketTopic, openMessage, openRoundRequest, providerTopics, sealMessage,
  type JobRequest
} from '../../../protocol/index.js'
import { NOW } from '../../helpers/arbitraries.js'

const requester = new Identity(new Uint8Array(32).fill(2))
const other = new Identity(new Uint8Array(32).fill(3))

function job (nonce: number, expiresAt = NOW + 3_600_000): JobRequest {
  return {
    v: 1,
    issuedAt: NOW,
    expiresAt,
    nonce: new Uint8Array(16).fill(nonce),
    workload: { executor: 'process', argv: ['true'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 60, network: false },
    resources: { gpus: 1, minVramGB: 0, models: [], cpuCores: 0, memoryMiB: 0, diskMiB: 0 },
    sla: { tier: 'silver', maxPrice: 1_000_000, maxStartDelaySec: 60 },
    placement: { regions: [], residency: 'prefer' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule: 'first-price' }
  }
}

function round (signer: Identity, request: Uint8Array, jobId = openMessage(request, 'job-request', { now: NOW }).cid) {
  const sealed = sealMessage(signer, 'auction-round', {
    v: 1, issuedAt: NOW + 1000, expiresAt: NOW + 60_000, job: jobId, round: 2, attempt: 1, excluded: [other.peerId], request
  })
  return openMessage(sealed.bytes, 'auction-round', { now: NOW + 1000 })
}

const rejectsWith = (reason: string, fn: () => unknown): void => {
  assert.throws(fn, (err: unknown) => err instanceof MessageRejectedError && err.reason === reason)
}

describe('auction rounds (protocol/message.ts openRoundRequest)', () => {
  const request = sealMessage(requester, 'job-request', job(1))

  it('opens the embedded job request of a round by its requester, even after the request was seen', () => {
    const opened = openRoundRequest(round(requester, request.bytes), NOW + 1000)
    assert.ok(opened.cid.equals(request.cid))
    assert.equal(opened.signer, requester.peerId)
  })

  it('refuses a round signed by someone else than the requester', () => {
    rejectsWith(RejectReason.EMBEDDED_MISMATCH, () => openRoundRequest(round(other, request.bytes), NOW + 1000))
  })

  it('refuses a round that embeds another job than it names', () => {
    const another = sealMessage(requester, 'job-request', job(2))
    rejectsWith(RejectReason.EMBEDDED_MISMATCH, () => openRoundRequest(round(requester, another.bytes, request.cid), NOW + 1000))
  })

  it('refuses to revive an expired job', () => {
    const short = sealMessage(requester, 'job-request', job(3, NOW + 5_000))
    rejectsWith(RejectReason.EXPIRED, () => openRoundRequest(round(requester, short.bytes), NOW + 6_000))
  })

  it('refuses garbage in place of the request', () => {
    rejectsWith(RejectReason.MALFORMED_ENVELOPE, () => openRoundRequest(round(requester, new Uint8Array([1, 2, 3]), request.cid), NOW + 1000))
  })
})

describe('market topics (protocol/discovery.ts)', () => {
  const placement = (regions: string[], residency: 'strict' | 'prefer'): JobRequest['placement'] => ({ regions, residency })

  it('a job goes to its top-level regions, and to global when it has none or only prefers them', () => {
    assert.deepEqual(jobTopics(placement([], 'strict')), [marketTopic()])
    assert.deepEqual(jobTopics(placement(['eu-west', 'eu-north', 'us'], 'strict')), [marketTopic('eu'), marketTopic('us')])
    assert.deepEqual(jobTopics(placement(['eu-west'], 'prefer')), [marketTopic('eu'), marketTopic()])
  })

  it('a provider listens on its top-level region and global, so it hears every job it may take', () => {
    assert.deepEqual(providerTopics('eu-west-2'), [marketTopic('eu'), marketTopic()])
    const region: string = 'eu-west-2'
    const cases: Array<[string[], 'strict' | 'prefer']> = [[['eu'], 'strict'], [['eu-west'], 'strict'], [[], 'strict'], [['us'], 'prefer'], [['us'], 'strict']]
    for (const [regions, residency] of cases) {
      const heard = jobTopics(placement(regions, residency)).some((t) => providerTopics(region).includes(t))
      const allowed = residency === 'prefer' || regions.length === 0 || regions.some((r) => region === r || region.startsWith(`${r}-`))
      assert.equal(heard, allowed, `${regions.join(',')} ${residency}`)
    }
  })
})
