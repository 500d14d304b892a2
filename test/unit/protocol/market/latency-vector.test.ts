/**
 * protocol/README.md on latency (issue 12): §8's job request still has its job id (old requests keep
 * theirs), the same request with `latencySensitive` and `maxRttMs` has the id the spec shows, and §5.6's
 * latency-sensitive scores and RTT estimates are what the reference code computes.
 */
import assert from 'node:assert/strict'
import { CID } from 'multiformats/cid'
import { jobIdOf, jobRequestSchema, type JobRequest } from '../../../../protocol/index.js'
import { defaultScoringParams, effectivePrice, scoreFactor, scoringParamsForJob } from '../../../../protocol/market/scoring.js'
import { countryRttMs, estimateRttMs } from '../../../../protocol/market/rtt-estimate.js'
import { SPEC_TEXT, specSection } from '../../../helpers/spec-text.js'

const hex = (h: string): Uint8Array => Uint8Array.from((h.match(/../g) ?? []).map((x) => parseInt(x, 16)))
const flat = (text: string): string => text.replace(/\s+/g, ' ')

/** §8's job request. */
const EXAMPLE: JobRequest = {
  v: 1,
  issuedAt: 1767225600000,
  expiresAt: 1767229200000,
  nonce: hex('000102030405060708090a0b0c0d0e0f'),
  workload: {
    executor: 'process', argv: ['python3', 'eval.py', '--batch', '64'], env: { HF_HUB_OFFLINE: '1' },
    inputs: [{ path: 'eval.py', cid: CID.decode(hex('01551220b80792336156c7b0f7fe02eeef24610d2d52a10d1810397744471d1dc5738180')), size: 15 }],
    outputs: ['results.json'], maxRuntimeSec: 3600, network: false
  },
  resources: { gpus: 1, minVramGB: 40, models: [], cpuCores: 4, memoryMiB: 16384, diskMiB: 20480 },
  sla: { tier: 'silver', maxPrice: 2500000, maxStartDelaySec: 600 },
  placement: { regions: ['eu'], residency: 'prefer' },
  verification: { mode: 'none' },
  auction: { bidWindowMs: 5000, paymentRule: 'first-price' }
}

describe('protocol/README.md: latency-aware scoring (vectors)', () => {
  it('§8\'s request keeps its job id; with latencySensitive and maxRttMs it has the id §8 shows', () => {
    const old = jobIdOf(EXAMPLE).toString()
    assert.equal(old, 'bafyreif4u3jwioyfrffk4saxcumbhrp6b5tq23u2p46furwn3266m2civu')
    assert.ok(SPEC_TEXT.includes(old))
    const latency = { ...EXAMPLE, placement: { ...EXAMPLE.placement, latencySensitive: true as const, maxRttMs: 80 } }
    assert.ok(jobRequestSchema.safeParse(latency).success)
    const id = jobIdOf(latency).toString()
    assert.ok(flat(specSection('8.')).includes(`has the job id \`${id}\``), id)
  })

  it('§5.6\'s latency-sensitive factors and scores', () => {
    const p = scoringParamsForJob(defaultScoringParams, { latencySensitive: true })
    const text = flat(specSection('5.6'))
    const at = (t: number | undefined): [number, number] => [scoreFactor({ rttMs: t }, 'silver', p), effectivePrice({ price: 1_800_000, rttMs: t }, 'silver', p)]
    const [f20, s20] = at(20)
    const [f120, s120] = at(120)
    const [fu, su] = at(undefined)
    assert.ok(text.includes(`at *t* = 20 ms factor = 1.375 × 1.05 = ${f20}, score ${s20}`))
    assert.ok(text.includes(`at *t* = 120 ms factor = 1.375 × 1.3 = ${f120}, score ${s120}`))
    assert.ok(text.includes(`at an unknown RTT (200 ms) factor = ${fu}, score ${su}`))
  })

  it('§5.6\'s RTT estimates', () => {
    const text = flat(specSection('5.6'))
    const [de, au, west] = [countryRttMs('DE', 'DE'), countryRttMs('DE', 'AU'), estimateRttMs({ country: 'DE' }, { region: 'eu-west' })]
    assert.ok(text.includes(`estimates a bid from \`DE\` at ${de} ms, from \`AU\` at ${au} ms, and from region \`eu-west\` without a country at ${west} ms`))
  })
})
