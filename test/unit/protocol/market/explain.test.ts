import assert from 'node:assert/strict'
import fc from 'fast-check'
import type { CapabilityAd, GpuInfo } from '../../../../protocol/messages/capability-ad.js'
import type { JobRequest } from '../../../../protocol/messages/job-request.js'
import { decideBid } from '../../../../protocol/market/bid-policy.js'
import { EXPLAINED_CONSTRAINTS, explainNoBids, type KnownProviders } from '../../../../protocol/market/explain.js'
import { ALWAYS, H, M, MON_10H as NOW } from '../../../helpers/market-time.js'

const H100 = 'nvidia-h100-80gb-hbm3'
const A100 = 'nvidia-a100-sxm4-40gb'
const T4 = 'tesla-t4'
const VRAM: Record<string, number> = { [H100]: 81_559, [A100]: 40_536, [T4]: 15_360 }

function makeAd (region: string, workloads: CapabilityAd['workloads'], models: string[], floor: number, windows = ALWAYS, timeZone = 'UTC'): CapabilityAd {
  const gpus: GpuInfo[] = models.map((model, index) => ({ index, uuid: `GPU-${index}`, name: model, model, vramMiB: VRAM[model] ?? 0, provenance: 'declared' }))
  return {
    v: 1, issuedAt: NOW - H, expiresAt: NOW + 24 * H, seq: 1, gpus,
    host: { cpuCores: 32, memoryMiB: 256_000, diskGiB: 1000 },
    region, price: { floor }, availability: { timeZone, windows }, workloads,
    limits: {}, attestations: [], addrs: []
  }
}

function makeJob (over: { gpus?: number, expiresAt?: number, maxStartDelaySec?: number } = {}): JobRequest {
  return {
    v: 1, issuedAt: NOW - M, expiresAt: over.expiresAt ?? NOW + 24 * H,
    nonce: new Uint8Array(16),
    workload: { executor: 'docker', argv: ['serve'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 7200, network: false },
    resources: { gpus: over.gpus ?? 2, minVramGB: 80, models: ['h100'], cpuCores: 4, memoryMiB: 16_000, diskMiB: 10_000 },
    sla: { tier: 'silver', maxPrice: 1_500_000, maxStartDelaySec: over.maxStartDelaySec ?? 600 },
    placement: { regions: ['eu'], residency: 'strict' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 5000, paymentRule: 'first-price' }
  }
}

/** Each ad fails one constraint (or a few), so each count is checked on its own. */
const ADS: CapabilityAd[] = [
  makeAd('eu-west', ['docker'], [H100, H100, H100, H100], 2_000_000), // 0: PRICE
  makeAd('us-east', ['docker'], [H100, H100], 1_000_000), // 1: REGION
  makeAd('eu', ['process'], [H100, H100], 1_000_000), // 2: WORKLOAD
  makeAd('eu-north', ['docker'], [A100, A100, A100, A100], 800_000), // 3: MODEL, VRAM
  makeAd('eu', ['docker'], [H100], 1_200_000), // 4: GPU_COUNT
  makeAd('eu', ['docker', 'wasm'], [H100, H100], 1_400_000, [{ day: 1, start: 840, end: 1080 }]), // 5: CALENDAR (Mon 14–18)
  makeAd('eu-west', ['docker'], [H100, A100], 1_000_000), // 6: meets each alone, not together
  makeAd('eu', ['docker'], [T4, T4], 1_000_000) // 7: MODEL, VRAM
]

/** The ads as this node knows them: ad i from peer `peer-i`. */
function known (ads: readonly CapabilityAd[], unreachable: string[] = []): KnownProviders {
  return { providers: ads.map((ad, i) => ({ peerId: `peer-${i}`, ad })), unreachable }
}

describe('market/explain', () => {
  it('counts providers meeting each constraint on its own, and names the cheapest floor and nearest window', () => {
    const e = explainNoBids(makeJob(), known(ADS), NOW)
    assert.equal(e.total, 8)
    assert.deepEqual(e.perConstraint.map((c) => [c.constraint, c.meeting]), [
      ['WORKLOAD', 7], ['REGION', 7], ['MODEL', 6], ['VRAM', 6], ['GPU_COUNT', 7], ['PRICE', 7], ['CALENDAR', 7]
    ])
    assert.equal(e.hardware, 2, 'ads 0 and 5')
    assert.equal(e.meetingAll, 0)
    assert.deepEqual(e.cheapestFloor, { price: 1_400_000, provider: 'peer-5' })
    assert.deepEqual(e.nearestWindow, { start: NOW, provider: 'peer-0' })
  })

  it('prints a summary a CLI can show', () => {
    assert.deepEqual(explainNoBids(makeJob(), known(ADS), NOW).summary, [
      'No bids: 0 of 8 known providers meet every constraint.',
      '  runs docker: 7 of 8',
      '  in eu: 7 of 8',
      '  GPU model h100: 6 of 8',
      '  ≥ 80 GB VRAM per GPU: 6 of 8',
      '  ≥ 2 GPUs: 7 of 8',
      '  floor ≤ 1.50 credits/GPU-h: 7 of 8',
      '  free for 2 h within 10 min: 7 of 8',
      '2 of 8 have the hardware (workload, region and 2 matching GPUs on one machine).',
      'Cheapest floor among them: 1.40 credits/GPU-h (provider peer-5); your max price is 1.50.',
      'Nearest free 2 h window among them: 2024-01-01T10:00:00.000Z (provider peer-0), in 0 s; your max start delay is 10 min.'
    ])
  })

  it('finds the nearest window beyond the start delay', () => {
    const e = explainNoBids(makeJob(), known([ADS[1] as CapabilityAd, ADS[5] as CapabilityAd]), NOW)
    assert.deepEqual(e.nearestWindow, { start: NOW + 4 * H, provider: 'peer-1' })
    assert.equal(e.summary.at(-1), 'Nearest free 2 h window among them: 2024-01-01T14:00:00.000Z (provider peer-1), in 4 h; your max start delay is 10 min.')
    const later = explainNoBids(makeJob(), known([ADS[5] as CapabilityAd]), NOW + 7 * H)
    assert.equal(later.nearestWindow?.start, NOW + 7 * 24 * H + 4 * H, 'next Monday')
  })

  it('says when no provider with the hardware has a window in the horizon, and skips unknown time zones', () => {
    const never = makeAd('eu', ['docker'], [H100, H100], 1_000_000, [{ day: 3, start: 0, end: 60 }])
    const mars = makeAd('eu', ['docker'], [H100, H100], 900_000, ALWAYS, 'Mars/Olympus_Mons')
    const e = explainNoBids(makeJob(), known([never, mars]), NOW)
    assert.equal(e.nearestWindow, undefined)
    assert.deepEqual(e.cheapestFloor, { price: 900_000, provider: 'peer-1' })
    assert.equal(e.perConstraint.find((c) => c.constraint === 'CALENDAR')?.meeting, 0)
    assert.equal(e.summary.at(-1), 'None of them has a free 2 h window within 28 d.')
  })

  it('counts providers that meet everything yet did not bid (busy, hot, peak-priced)', () => {
    const fine = makeAd('eu', ['docker'], [H100, H100], 1_000_000)
    const e = explainNoBids(makeJob(), known([fine]), NOW)
    assert.equal(e.meetingAll, 1)
    assert.equal(e.summary[0], 'No bids: 1 of 1 known providers meet every constraint (they may be busy, too hot, or pricier at the start time).')
  })

  it('treats every GPU constraint as met for a CPU-only job', () => {
    const e = explainNoBids(makeJob({ gpus: 0 }), known(ADS), NOW)
    assert.deepEqual(e.perConstraint.map((c) => c.meeting), [7, 7, 8, 8, 8, 7, 7])
    assert.equal(e.hardware, 6, 'workload and region only: all but ads 1 and 2')
  })

  it('handles no known providers and an expired job', () => {
    const e = explainNoBids(makeJob({ expiresAt: NOW }), known([]), NOW)
    assert.equal(e.total, 0)
    assert.equal(e.cheapestFloor, undefined)
    assert.equal(e.nearestWindow, undefined)
    assert.equal(e.unreachable, 0)
    assert.equal(e.largestVram, undefined)
    assert.deepEqual(e.summary, ['The job expired at 2024-01-01T10:00:00.000Z.', 'No bids: this node knows no provider that could take the job (the DHT named none).'])
    assert.deepEqual(e.perConstraint.map((c) => c.constraint), [...EXPLAINED_CONSTRAINTS])
  })

  it('counts every known provider for a VRAM request larger than any GPU, and gives the largest VRAM on offer', () => {
    const job = makeJob()
    const huge: JobRequest = { ...job, resources: { ...job.resources, minVramGB: 500 } }
    const e = explainNoBids(huge, known(ADS), NOW)
    assert.equal(e.total, 8)
    assert.equal(e.perConstraint.find((c) => c.constraint === 'VRAM')?.meeting, 0)
    assert.deepEqual(e.largestVram, { vramMiB: 81_559, provider: 'peer-0' }, 'ties (ads 0, 1, 2, 4, 5, 6) go to the lowest peer id')
    assert.equal(e.hardware, 0)
    assert.ok(e.summary.includes('  ≥ 500 GB VRAM per GPU: 0 of 8 (the largest on offer: 80 GB (79.6 GiB reported), provider peer-0)'), e.summary.join('\n'))
    // when some provider meets the VRAM term the line stays as it was
    assert.ok(explainNoBids(job, known(ADS), NOW).summary.includes('  ≥ 80 GB VRAM per GPU: 6 of 8'))
    // a GPU of unknown size (0 MiB) is never the largest
    const unknownSize = makeAd('eu', ['docker'], ['nvidia-gb10'], 1_000_000)
    assert.equal(explainNoBids(huge, known([unknownSize]), NOW).largestVram, undefined)
  })

  it('names providers by peer id, whatever order their ads came in (ties: the lowest peer id)', () => {
    const cheapA = makeAd('eu', ['docker'], [H100, H100], 1_000_000)
    const cheapB = makeAd('eu', ['docker'], [H100, H100], 1_000_000)
    const given: KnownProviders = { providers: [{ peerId: '12D3KooWZz', ad: cheapB }, { peerId: '12D3KooWAa', ad: cheapA }] }
    const e = explainNoBids(makeJob(), given, NOW)
    assert.deepEqual(e.cheapestFloor, { price: 1_000_000, provider: '12D3KooWAa' })
    assert.deepEqual(e.nearestWindow, { start: NOW, provider: '12D3KooWAa' })
    const text = explainNoBids({ ...makeJob(), sla: { ...makeJob().sla, maxPrice: 900_000 } }, given, NOW).summary.join('\n')
    assert.match(text, /\(provider 12D3KooWAa\)/)
    assert.doesNotMatch(text, /#\d/)
  })

  it('counts DHT answers without an ad apart, and each peer once', () => {
    const fine = makeAd('eu', ['docker'], [H100, H100], 2_000_000)
    const e = explainNoBids(makeJob(), { providers: [{ peerId: 'a', ad: fine }, { peerId: 'a', ad: ADS[1] as CapabilityAd }], unreachable: ['b', 'c', 'c', 'a'] }, NOW)
    assert.equal(e.total, 1, 'peer a twice is one provider (its first ad)')
    assert.equal(e.unreachable, 2, 'b and c; a has an ad')
    assert.equal(e.hardware, 1)
    assert.equal(e.summary[0], 'No bids: 0 of 1 known providers meet every constraint. 2 more found on the DHT could not be reached, were not selling or refused.')
    const none = explainNoBids(makeJob(), { providers: [], unreachable: ['b'] }, NOW)
    assert.deepEqual(none.summary, ['No bids: this node fetched no provider\'s ad (1 found on the DHT could not be reached, were not selling or refused).'])
  })

  it('agrees with the bid policy: a provider meeting everything has a bid unless load, telemetry or peak price stop it (property)', () => {
    const adArb = fc.record({
      region: fc.constantFrom('eu', 'eu-west', 'us-east'),
      workloads: fc.constantFrom<CapabilityAd['workloads']>(['docker'], ['process'], ['docker', 'wasm']),
      models: fc.array(fc.constantFrom(H100, A100, T4), { maxLength: 4 }),
      floor: fc.integer({ min: 0, max: 3_000_000 }),
      windows: fc.oneof(fc.constant(ALWAYS), fc.array(fc.record({ day: fc.integer({ min: 1, max: 7 }), start: fc.integer({ min: 0, max: 23 }).map((h) => h * 60) })
        .map((w) => ({ ...w, end: Math.min(1440, w.start + 180) })), { maxLength: 4 }))
    }).map((a) => makeAd(a.region, a.workloads, a.models, a.floor, a.windows))
    fc.assert(fc.property(fc.array(adArb, { maxLength: 6 }), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 86_400 }), (ads, gpus, delay) => {
      const job = makeJob({ gpus, maxStartDelaySec: delay })
      const e = explainNoBids(job, known(ads), NOW)
      const bids = ads.filter((ad) => decideBid(job, { ad, allocations: [] }, NOW).kind === 'bid').length
      // without load, telemetry or peaks, meeting everything is exactly what a bid needs
      assert.equal(e.meetingAll, bids)
      for (const c of e.perConstraint) assert.ok(c.meeting >= e.meetingAll && c.meeting <= e.total)
      assert.ok(e.hardware >= e.meetingAll)
      if (e.hardware > 0 && e.meetingAll > 0) assert.ok(e.nearestWindow !== undefined && e.nearestWindow.start <= NOW + delay * 1000)
    }), { numRuns: 150 })
  })
})
