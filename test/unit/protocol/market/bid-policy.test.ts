import assert from 'node:assert/strict'
import fc from 'fast-check'
import type { CapabilityAd, GpuInfo } from '../../../../protocol/messages/capability-ad.js'
import type { JobRequest } from '../../../../protocol/messages/job-request.js'
import { bidFit, choosePreemption, decideBid, matchingGpus } from '../../../../protocol/market/bid-policy.js'
import { fits } from '../../../../protocol/market/calendar.js'
import { priceFor } from '../../../../protocol/market/pricing.js'
import type { Allocation, BidDecision, ProviderState, Tier } from '../../../../protocol/market/types.js'
import { ALWAYS, H, M, MON_10H as NOW } from '../../../helpers/market-time.js'

const H100 = 'nvidia-h100-80gb-hbm3'
const T4 = 'tesla-t4'

function gpu (index: number, model = H100, vramMiB = 81_559): GpuInfo {
  return { index, uuid: `GPU-${index}`, name: model, model, vramMiB, provenance: 'declared' }
}

function makeAd (over: Partial<CapabilityAd> = {}): CapabilityAd {
  return {
    v: 1, issuedAt: NOW - H, expiresAt: NOW + 24 * H, seq: 1,
    gpus: [0, 1, 2, 3].map((i) => gpu(i)),
    host: { cpuCores: 64, memoryMiB: 512_000, diskGiB: 2000 },
    region: 'eu-west',
    price: { floor: 2_000_000 },
    availability: { timeZone: 'UTC', windows: ALWAYS },
    workloads: ['process', 'docker'],
    limits: { maxTempC: 85, maxPowerW: 2000 },
    attestations: [],
    addrs: [],
    ...over
  }
}

interface JobOver {
  expiresAt?: number
  workload?: Partial<JobRequest['workload']>
  resources?: Partial<JobRequest['resources']>
  sla?: Partial<JobRequest['sla']>
  placement?: Partial<JobRequest['placement']>
}

function makeJob (over: JobOver = {}): JobRequest {
  return {
    v: 1, issuedAt: NOW - M, expiresAt: over.expiresAt ?? NOW + 24 * H,
    nonce: new Uint8Array(16),
    workload: { executor: 'process', argv: ['train'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 7200, network: false, ...over.workload },
    resources: { gpus: 2, minVramGB: 40, models: [], cpuCores: 4, memoryMiB: 16_000, diskMiB: 10_000, ...over.resources },
    sla: { tier: 'silver', maxPrice: 3_000_000, maxStartDelaySec: 600, ...over.sla },
    placement: { regions: ['eu'], residency: 'strict', ...over.placement },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 5000, paymentRule: 'first-price' }
  }
}

function state (ad: CapabilityAd = makeAd(), allocations: Allocation[] = [], telemetry?: ProviderState['telemetry']): ProviderState {
  return telemetry === undefined ? { ad, allocations } : { ad, allocations, telemetry }
}

function alloc (job: string, tier: Tier, gpus: number[], endsAt: number, price = 1_000_000, startedAt = NOW - H): Allocation {
  return { job, tier, gpus: gpus.map((i) => `GPU-${i}`), price, startedAt, endsAt }
}

function bid (decision: BidDecision): Extract<BidDecision, { kind: 'bid' }> {
  assert.equal(decision.kind, 'bid', decision.kind === 'decline' ? `${decision.reason}: ${decision.detail}` : '')
  return decision as Extract<BidDecision, { kind: 'bid' }>
}

function reason (decision: BidDecision): string {
  return decision.kind === 'decline' ? decision.reason : 'bid'
}

describe('market/bid-policy', () => {
  describe('bids', () => {
    it('bids the floor on the lowest-index free matching GPUs, starting now', () => {
      assert.deepEqual(decideBid(makeJob(), state(), NOW), {
        kind: 'bid', price: 2_000_000, gpus: ['GPU-0', 'GPU-1'], startBy: NOW, preempts: [], fit: 1_000_000 / 3_000_001
      })
    })

    it('computes fit as (maxPrice − price + tightness) / (maxPrice + 1), tightness = runtime / rest of the window', () => {
      const ad = makeAd({ availability: { timeZone: 'UTC', windows: [{ day: 1, start: 600, end: 780 }] } })
      assert.equal(bid(decideBid(makeJob(), state(ad), NOW)).fit, (1_000_000 + 2 / 3) / 3_000_001)
      assert.equal(bidFit(3_000_000, 3_000_000, 0), 0)
      assert.equal(bidFit(0, 3_000_000, 1), 1)
      assert.equal(bidFit(0, 0, 0.5), 0.5)
      assert.ok(bidFit(1_999_999, 3_000_000, 0) > bidFit(2_000_000, 3_000_000, 0.999), 'one micro cheaper outweighs tightness')
      assert.ok(bidFit(2_000_000, 3_000_000, 0.5) > bidFit(2_000_000, 3_000_000, 0.4), 'tightness orders equal prices')
    })

    it('starts when the next free window opens within the start delay', () => {
      const ad = makeAd({ availability: { timeZone: 'UTC', windows: [{ day: 1, start: 630, end: 750 }] } })
      const b = bid(decideBid(makeJob({ sla: { maxStartDelaySec: 1800 } }), state(ad), NOW))
      assert.equal(b.startBy, NOW + 30 * M)
      assert.equal(b.fit, (1_000_000 + 1) / 3_000_001, 'the 2 h job fills the 2 h gap')
    })

    it('asks the time-weighted peak price for the interval', () => {
      const ad = makeAd({ price: { floor: 2_000_000, peak: { price: 4_000_000, windows: [{ day: 1, start: 540, end: 1020 }] } } })
      const b = bid(decideBid(makeJob(), state(ad), NOW + 6 * H))
      assert.equal(b.price, 3_000_000)
      assert.equal(b.fit, 0)
    })

    it('maxStartDelaySec 0 bids only a start at now; a start exactly the delay after now is still in time', () => {
      const now0 = makeJob({ sla: { maxStartDelaySec: 0 } })
      assert.equal(bid(decideBid(now0, state(), NOW)).startBy, NOW)
      const opensLater = makeAd({ availability: { timeZone: 'UTC', windows: [{ day: 1, start: 601, end: 900 }] } })
      assert.equal(reason(decideBid(now0, state(opensLater), NOW)), 'CALENDAR')
      assert.equal(bid(decideBid(makeJob({ sla: { maxStartDelaySec: 60 } }), state(opensLater), NOW)).startBy, NOW + M)
      // GPUs held until exactly now are free now; GPUs freeing one minute later are not, with no delay allowed
      const endsNow = [alloc('A', 'silver', [0, 1, 2, 3], NOW)]
      assert.equal(bid(decideBid(now0, state(makeAd(), endsNow), NOW)).startBy, NOW)
      const endsSoon = [alloc('A', 'silver', [0, 1, 2, 3], NOW + M)]
      assert.equal(reason(decideBid(now0, state(makeAd(), endsSoon), NOW)), 'BUSY')
      assert.equal(bid(decideBid(makeJob({ sla: { maxStartDelaySec: 60 } }), state(makeAd(), endsSoon), NOW)).startBy, NOW + M)
      assert.equal(reason(decideBid(makeJob({ sla: { maxStartDelaySec: 59 } }), state(makeAd(), endsSoon), NOW)), 'BUSY')
    })

    it('bids on CPU-only jobs without GPU checks, per job-hour', () => {
      const ad = makeAd({ gpus: [] })
      assert.deepEqual(decideBid(makeJob({ resources: { gpus: 0, minVramGB: 0 } }), state(ad, [], { maxGpuTempC: 99 }), NOW), {
        kind: 'bid', price: 2_000_000, gpus: [], startBy: NOW, preempts: [], fit: 1_000_000 / 3_000_001
      })
      assert.equal(reason(decideBid(makeJob({ resources: { gpus: 0 }, sla: { maxPrice: 1 } }), state(ad), NOW)), 'PRICE')
    })
  })

  describe('declines, one reason each', () => {
    it('EXPIRED when expiresAt ≤ now', () => {
      assert.deepEqual(decideBid(makeJob({ expiresAt: NOW }), state(), NOW),
        { kind: 'decline', reason: 'EXPIRED', detail: 'the job expired at 2024-01-01T10:00:00.000Z' })
      assert.equal(reason(decideBid(makeJob({ expiresAt: NOW + 1 }), state(), NOW)), 'bid')
    })

    it('WORKLOAD when the executor is not offered', () => {
      assert.deepEqual(decideBid(makeJob({ workload: { executor: 'wasm' } }), state(), NOW),
        { kind: 'decline', reason: 'WORKLOAD', detail: 'executor "wasm" is not offered (offers process, docker)' })
    })

    it('REGION only for strict residency outside every listed region', () => {
      assert.deepEqual(decideBid(makeJob({ placement: { regions: ['us', 'ap'] } }), state(), NOW),
        { kind: 'decline', reason: 'REGION', detail: 'region eu-west is outside the required regions us, ap' })
      assert.equal(reason(decideBid(makeJob({ placement: { regions: ['us'], residency: 'prefer' } }), state(), NOW)), 'bid')
      assert.equal(reason(decideBid(makeJob({ placement: { regions: [] } }), state(), NOW)), 'bid')
      assert.equal(reason(decideBid(makeJob({ placement: { regions: ['us', 'eu-west'] } }), state(), NOW)), 'bid')
      assert.equal(reason(decideBid(makeJob({ placement: { regions: ['eu-west-2'] } }), state(), NOW)), 'REGION')
      assert.equal(reason(decideBid(makeJob({ placement: { regions: ['eu-we'] } }), state(), NOW)), 'REGION')
    })

    it('NO_GPUS when a GPU job meets a machine without GPUs', () => {
      assert.deepEqual(decideBid(makeJob(), state(makeAd({ gpus: [] })), NOW),
        { kind: 'decline', reason: 'NO_GPUS', detail: 'the job needs 2 GPU(s); this provider has none' })
    })

    it('MODEL when no GPU is one of the wanted models', () => {
      assert.deepEqual(decideBid(makeJob({ resources: { models: ['nvidia-a100'] } }), state(), NOW),
        { kind: 'decline', reason: 'MODEL', detail: `no GPU is one of nvidia-a100 (has ${H100})` })
      assert.equal(reason(decideBid(makeJob({ resources: { models: ['nvidia-a100', 'h100'] } }), state(), NOW)), 'bid')
    })

    it('MODEL by whole words, never by substring: a10 is not an A100, l4 not an L40S', () => {
      const a100 = makeAd({ gpus: [gpu(0, 'nvidia-a100-sxm4-80gb'), gpu(1, 'nvidia-a100-sxm4-80gb')] })
      const l40s = makeAd({ gpus: [gpu(0, 'nvidia-l40s', 46_068), gpu(1, 'nvidia-l40s', 46_068)] })
      assert.equal(reason(decideBid(makeJob({ resources: { models: ['a10'] } }), state(a100), NOW)), 'MODEL')
      assert.equal(reason(decideBid(makeJob({ resources: { minVramGB: 24, models: ['l4'] } }), state(l40s), NOW)), 'MODEL')
      assert.equal(reason(decideBid(makeJob({ resources: { models: ['a100'] } }), state(a100), NOW)), 'bid')
      assert.equal(reason(decideBid(makeJob({ resources: { minVramGB: 24, models: ['l40s'] } }), state(l40s), NOW)), 'bid')
      assert.deepEqual(matchingGpus(a100, makeJob({ resources: { models: ['a10'] } })), [])
    })

    it('VRAM when no allowed GPU has the memory', () => {
      assert.deepEqual(decideBid(makeJob({ resources: { minVramGB: 96 } }), state(), NOW),
        { kind: 'decline', reason: 'VRAM', detail: 'no allowed GPU has 96 GB (largest 81559 MiB)' })
      const mixed = makeAd({ gpus: [gpu(0, T4, 15_360), gpu(1)] })
      assert.deepEqual(decideBid(makeJob({ resources: { gpus: 1, models: ['t4'] } }), state(mixed), NOW),
        { kind: 'decline', reason: 'VRAM', detail: 'no allowed GPU has 40 GB (largest 15360 MiB)' })
    })

    it('GPU_COUNT when too few GPUs match model and VRAM together', () => {
      assert.deepEqual(decideBid(makeJob({ resources: { gpus: 5 } }), state(), NOW),
        { kind: 'decline', reason: 'GPU_COUNT', detail: 'the job needs 5 GPUs; 4 match' })
      const mixed = makeAd({ gpus: [gpu(0, T4, 15_360), gpu(1), gpu(2, T4, 15_360), gpu(3)] })
      assert.equal(reason(decideBid(makeJob({ resources: { gpus: 3 } }), state(mixed), NOW)), 'GPU_COUNT')
      assert.deepEqual(bid(decideBid(makeJob({ resources: { gpus: 2 } }), state(mixed), NOW)).gpus, ['GPU-1', 'GPU-3'])
    })

    it('THERMAL and POWER when telemetry is above the ad\'s limits', () => {
      assert.deepEqual(decideBid(makeJob(), state(makeAd(), [], { maxGpuTempC: 86 }), NOW),
        { kind: 'decline', reason: 'THERMAL', detail: 'GPUs at 86 °C, above the 85 °C limit' })
      assert.deepEqual(decideBid(makeJob(), state(makeAd(), [], { powerW: 2001 }), NOW),
        { kind: 'decline', reason: 'POWER', detail: 'drawing 2001 W, above the 2000 W limit' })
      assert.equal(reason(decideBid(makeJob(), state(makeAd(), [], { maxGpuTempC: 85, powerW: 2000 }), NOW)), 'bid')
      assert.equal(reason(decideBid(makeJob(), state(makeAd({ limits: {} }), [], { maxGpuTempC: 120, powerW: 9000 }), NOW)), 'bid')
    })

    it('CALENDAR when the runtime cannot start within the delay in a free window', () => {
      const gap = makeAd({ availability: { timeZone: 'UTC', windows: [{ day: 1, start: 840, end: 900 }] } })
      assert.deepEqual(decideBid(makeJob({ sla: { maxStartDelaySec: 86_400 } }), state(gap), NOW),
        { kind: 'decline', reason: 'CALENDAR', detail: 'no free window of 2 h starts within 1 d' })
      const later = makeAd({ availability: { timeZone: 'UTC', windows: [{ day: 1, start: 630, end: 780 }] } })
      assert.equal(reason(decideBid(makeJob({ sla: { maxStartDelaySec: 1799 } }), state(later), NOW)), 'CALENDAR')
      assert.equal(reason(decideBid(makeJob({ sla: { maxStartDelaySec: 1800 } }), state(later), NOW)), 'bid')
      const mars = makeAd({ availability: { timeZone: 'Mars/Olympus_Mons', windows: ALWAYS } })
      assert.deepEqual(decideBid(makeJob(), state(mars), NOW),
        { kind: 'decline', reason: 'CALENDAR', detail: 'unknown time zone "Mars/Olympus_Mons"' })
    })

    it('BUSY when allocations hold the GPUs for the whole start delay', () => {
      const busy = [alloc('J1', 'silver', [0, 1, 2], NOW + 5 * H)]
      assert.deepEqual(decideBid(makeJob(), state(makeAd(), busy), NOW), {
        kind: 'decline', reason: 'BUSY',
        detail: 'the job needs 2 GPUs; 1 of 4 matching are free at 2024-01-01T10:00:00.000Z and not enough free up within 10 min'
      })
      assert.deepEqual(bid(decideBid(makeJob({ resources: { gpus: 1 } }), state(makeAd(), busy), NOW)).gpus, ['GPU-3'])
    })

    it('PRICE when the interval\'s price is above the cap', () => {
      assert.deepEqual(decideBid(makeJob({ sla: { maxPrice: 1_999_999 } }), state(), NOW), {
        kind: 'decline', reason: 'PRICE',
        detail: 'asks 2.00 credits per GPU-hour from 2024-01-01T10:00:00.000Z, above the cap of 1.999999'
      })
      const peak = makeAd({ price: { floor: 2_000_000, peak: { price: 4_000_000, windows: [{ day: 1, start: 540, end: 1020 }] } } })
      assert.equal(reason(decideBid(makeJob(), state(peak), NOW)), 'PRICE')
      assert.equal(reason(decideBid(makeJob(), state(peak), NOW + 6 * H - 1)), 'PRICE', '3,000,000.0003 rounds up past the cap')
      assert.equal(reason(decideBid(makeJob(), state(peak), NOW + 6 * H + 1)), 'bid', '2,999,999.9997 rounds up to the cap')
    })

    it('reports the first failing reason in the documented order', () => {
      const bad = makeAd({
        gpus: [gpu(0, T4, 15_360)],
        region: 'us-east',
        workloads: ['process'],
        availability: { timeZone: 'UTC', windows: [] },
        price: { floor: 9_000_000 }
      })
      const job = makeJob({ workload: { executor: 'docker' }, resources: { gpus: 2, models: ['h100'] } })
      const hot = { maxGpuTempC: 99 }
      assert.equal(reason(decideBid({ ...job, expiresAt: NOW }, state(bad, [], hot), NOW)), 'EXPIRED')
      assert.equal(reason(decideBid(job, state(bad, [], hot), NOW)), 'WORKLOAD')
      bad.workloads = ['docker']
      assert.equal(reason(decideBid(job, state(bad, [], hot), NOW)), 'REGION')
      bad.region = 'eu'
      assert.equal(reason(decideBid(job, state(bad, [], hot), NOW)), 'MODEL')
      bad.gpus = [gpu(0, 'nvidia-h100-pcie-16gb', 15_360)]
      assert.equal(reason(decideBid(job, state(bad, [], hot), NOW)), 'VRAM')
      bad.gpus = [gpu(0)]
      assert.equal(reason(decideBid(job, state(bad, [], hot), NOW)), 'GPU_COUNT')
      bad.gpus = [gpu(0), gpu(1)]
      assert.equal(reason(decideBid(job, state(bad, [], hot), NOW)), 'THERMAL')
      assert.equal(reason(decideBid(job, state(bad, [alloc('J', 'gold', [0], NOW + H)]), NOW)), 'CALENDAR')
      bad.availability.windows = ALWAYS
      assert.equal(reason(decideBid(job, state(bad, [alloc('J', 'gold', [0], NOW + H)]), NOW)), 'BUSY')
      assert.equal(reason(decideBid(job, state(bad), NOW)), 'PRICE')
      bad.price.floor = 3_000_000
      assert.equal(reason(decideBid(job, state(bad), NOW)), 'bid')
    })
  })

  describe('load and preemption', () => {
    const eight = makeAd({ gpus: [0, 1, 2, 3, 4, 5, 6, 7].map((i) => gpu(i)) })
    // GPU-0 gold; A: 1–2, B: 3, C: 4–6, E: 7 (bronze)
    const fleet = [
      alloc('G', 'gold', [0], NOW + 5 * H, 3_000_000),
      alloc('A', 'bronze', [1, 2], NOW + 5 * H, 1_000_000),
      alloc('B', 'bronze', [3], NOW + 5 * H, 1_000_000),
      alloc('C', 'bronze', [4, 5, 6], NOW + 5 * H, 1_500_000),
      alloc('E', 'bronze', [7], NOW + 5 * H, 500_000)
    ]
    const gold = (gpus: number, tier: Tier = 'gold') => makeJob({ resources: { gpus }, sla: { tier } })

    it('preempts the fewest bronze jobs, then the least revenue', () => {
      assert.deepEqual(bid(decideBid(gold(3), state(eight, fleet), NOW)), {
        kind: 'bid', price: 2_000_000, gpus: ['GPU-4', 'GPU-5', 'GPU-6'], startBy: NOW, preempts: ['C'], fit: 1_000_000 / 3_000_001
      })
      const two = bid(decideBid(gold(2), state(eight, fleet), NOW))
      assert.deepEqual([two.preempts, two.gpus], [['A'], ['GPU-1', 'GPU-2']])
      const four = bid(decideBid(gold(4), state(eight, fleet), NOW))
      assert.deepEqual([four.preempts, four.gpus], [['C', 'E'], ['GPU-4', 'GPU-5', 'GPU-6', 'GPU-7']])
      const seven = bid(decideBid(gold(7), state(eight, fleet), NOW))
      assert.deepEqual(seven.preempts, ['A', 'B', 'C', 'E'])
      assert.equal(reason(decideBid(gold(8), state(eight, fleet), NOW)), 'BUSY', 'never preempts gold')
    })

    it('uses free GPUs first and preempts only for the rest', () => {
      const withFree = fleet.filter((a) => a.job !== 'E')
      const b = bid(decideBid(gold(3), state(eight, withFree), NOW))
      assert.deepEqual([b.preempts, b.gpus], [['A'], ['GPU-1', 'GPU-2', 'GPU-7']])
      assert.deepEqual(bid(decideBid(gold(1), state(eight, withFree), NOW)).preempts, [], 'never preempts when free GPUs suffice')
    })

    it('lets silver preempt but never bronze', () => {
      assert.deepEqual(bid(decideBid(gold(2, 'silver'), state(eight, fleet), NOW)).preempts, ['A'])
      assert.equal(reason(decideBid(gold(2, 'bronze'), state(eight, fleet), NOW)), 'BUSY')
    })

    it('waits for GPUs that free up within the start delay rather than preempting', () => {
      const ending = [alloc('A', 'bronze', [0, 1], NOW + 5 * M), alloc('B', 'bronze', [2, 3], NOW + 5 * H)]
      assert.deepEqual(bid(decideBid(gold(2), state(makeAd(), ending), NOW)), {
        kind: 'bid', price: 2_000_000, gpus: ['GPU-0', 'GPU-1'], startBy: NOW + 5 * M, preempts: [], fit: 1_000_000 / 3_000_001
      })
      assert.equal(reason(decideBid(gold(2, 'bronze'), state(makeAd(), ending), NOW)), 'bid')
      assert.equal(reason(decideBid(makeJob({ sla: { tier: 'bronze', maxStartDelaySec: 299 } }), state(makeAd(), ending), NOW)), 'BUSY')
    })

    it('prefers a later start that preempts fewer jobs', () => {
      const allocs = [
        alloc('P', 'bronze', [0, 1], NOW + 5 * M),
        alloc('Q', 'bronze', [2], NOW + 5 * H, 1_000_000),
        alloc('R', 'bronze', [3], NOW + 5 * H, 500_000)
      ]
      assert.deepEqual(bid(decideBid(gold(3), state(makeAd(), allocs), NOW)), {
        kind: 'bid', price: 2_000_000, gpus: ['GPU-0', 'GPU-1', 'GPU-3'], startBy: NOW + 5 * M, preempts: ['R'], fit: 1_000_000 / 3_000_001
      })
    })

    it('treats future bookings as busy for their interval only', () => {
      const booked = [alloc('F', 'gold', [0, 1, 2, 3], NOW + 5 * H, 1_000_000, NOW + 3 * H)]
      assert.equal(bid(decideBid(gold(2), state(makeAd(), booked), NOW)).startBy, NOW, 'ends before the booking starts')
      assert.equal(reason(decideBid(makeJob({ workload: { maxRuntimeSec: 4 * 3600 } }), state(makeAd(), booked), NOW)), 'BUSY')
      assert.equal(reason(decideBid(gold(2), state(makeAd(), [alloc('X', 'gold', [0, 1, 2, 3], NOW)]), NOW)), 'bid', 'ended allocations hold nothing')
    })

    it('frees a GPU shared by two bronze bookings only by preempting both', () => {
      const shared = [
        alloc('X', 'bronze', [0], NOW + H),
        alloc('Y', 'bronze', [0], NOW + 3 * H, 1_000_000, NOW + H),
        alloc('Z', 'bronze', [1, 2, 3], NOW + 3 * H, 9_000_000)
      ]
      const one = bid(decideBid(gold(1), state(makeAd(), shared), NOW))
      assert.deepEqual([one.preempts, one.gpus], [['Z'], ['GPU-1']], 'one job beats two, whatever the revenue')
      const four = bid(decideBid(gold(4), state(makeAd(), shared), NOW))
      assert.deepEqual(four.preempts, ['X', 'Y', 'Z'])
    })

    it('chooses preemption sets exactly up to the limit and greedily (still minimal) beyond', () => {
      const revenue = new Map<string, number>()
      const many = Array.from({ length: 20 }, (_, i) => {
        const id = `J${String(i).padStart(2, '0')}`
        revenue.set(id, 100 - i)
        return { uuid: `GPU-${i}`, jobs: new Set([id]) }
      })
      assert.deepEqual(choosePreemption(many, 2, revenue), ['J18', 'J19'])
      assert.deepEqual(choosePreemption(many.slice(0, 10), 2, revenue), ['J08', 'J09'])
      assert.equal(choosePreemption(many, 21, revenue), undefined)
    })

    it('takes the exact-search limit as given: 0 makes a small case greedy, and greedy can lose more revenue', () => {
      // A and B hold two GPUs each, C three: freeing 4 GPUs takes two jobs either way; {A, B} loses the
      // least revenue, while greedy first takes C (it frees the most GPUs at once)
      const gpus = [
        { uuid: 'GPU-0', jobs: new Set(['A']) }, { uuid: 'GPU-1', jobs: new Set(['A']) },
        { uuid: 'GPU-2', jobs: new Set(['B']) }, { uuid: 'GPU-3', jobs: new Set(['B']) },
        { uuid: 'GPU-4', jobs: new Set(['C']) }, { uuid: 'GPU-5', jobs: new Set(['C']) }, { uuid: 'GPU-6', jobs: new Set(['C']) }
      ]
      const revenue = new Map([['A', 10], ['B', 10], ['C', 1_000]])
      assert.deepEqual(choosePreemption(gpus, 4, revenue), ['A', 'B'])
      assert.deepEqual(choosePreemption(gpus, 4, revenue, 3), ['A', 'B'], 'exactly at the limit: still exact')
      assert.deepEqual(choosePreemption(gpus, 4, revenue, 2), ['A', 'C'], 'one job past the limit: greedy')
      assert.deepEqual(choosePreemption(gpus, 4, revenue, 0), ['A', 'C'])
    })

    it('decideBid passes the provider\'s preemptExactLimit to the preemption choice', () => {
      const ad = makeAd({ gpus: [0, 1, 2, 3, 4, 5, 6].map((i) => gpu(i)) })
      const busy = [
        alloc('A', 'bronze', [0, 1], NOW + 3 * H, 10),
        alloc('B', 'bronze', [2, 3], NOW + 3 * H, 10),
        alloc('C', 'bronze', [4, 5, 6], NOW + 3 * H, 1_000)
      ]
      assert.deepEqual(bid(decideBid(gold(4), state(ad, busy), NOW)).preempts, ['A', 'B'])
      assert.deepEqual(bid(decideBid(gold(4), { ...state(ad, busy), preemptExactLimit: 0 }, NOW)).preempts, ['A', 'C'])
    })
  })

  describe('properties', () => {
    const models = [H100, 'nvidia-a100-sxm4-40gb', T4]
    const vram: Record<string, number> = { [H100]: 81_559, 'nvidia-a100-sxm4-40gb': 40_536, [T4]: 15_360 }
    const window = fc.record({ day: fc.constantFrom(1, 2), start: fc.integer({ min: 0, max: 47 }).map((h) => h * 30) })
      .chain((w) => fc.integer({ min: 1, max: 16 }).map((n) => ({ ...w, end: Math.min(1440, w.start + n * 30) })))
    const adArb = fc.record({
      gpuModels: fc.array(fc.constantFrom(...models), { minLength: 2, maxLength: 8 }),
      windows: fc.oneof(fc.constant(ALWAYS), fc.array(window, { maxLength: 5 })),
      floor: fc.integer({ min: 0, max: 4_000_000 }),
      peak: fc.option(fc.record({ extra: fc.integer({ min: 0, max: 3_000_000 }), windows: fc.array(window, { minLength: 1, maxLength: 3 }) }), { nil: undefined })
    }).map(({ gpuModels, windows, floor, peak }) => makeAd({
      gpus: gpuModels.map((m, i) => gpu(i, m, vram[m])),
      availability: { timeZone: 'UTC', windows },
      price: peak === undefined ? { floor } : { floor, peak: { price: floor + peak.extra, windows: peak.windows } }
    }))
    const allocArb = fc.record({
      job: fc.constantFrom('J1', 'J2', 'J3', 'J4', 'J5', 'J6'),
      tier: fc.constantFrom<Tier>('gold', 'silver', 'bronze', 'bronze'),
      gpus: fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 4 }),
      startOffset: fc.integer({ min: -4 * 60, max: 3 * 60 }),
      minutes: fc.integer({ min: 1, max: 6 * 60 }),
      price: fc.integer({ min: 0, max: 4_000_000 })
    }).map((a) => (now: number) => alloc(a.job, a.tier, a.gpus, now + (a.startOffset + a.minutes) * M, a.price, now + a.startOffset * M))
    const jobArb = fc.record({
      gpus: fc.integer({ min: 0, max: 4 }),
      minVramGB: fc.constantFrom(0, 16, 40, 80),
      models: fc.constantFrom<string[]>([], ['h100'], ['a100'], ['t4', 'h100']),
      tier: fc.constantFrom<Tier>('gold', 'silver', 'bronze'),
      maxPrice: fc.integer({ min: 0, max: 8_000_000 }),
      delayMin: fc.integer({ min: 0, max: 8 * 60 }),
      runtimeMin: fc.integer({ min: 1, max: 8 * 60 })
    }).map((j) => makeJob({
      workload: { maxRuntimeSec: j.runtimeMin * 60 },
      resources: { gpus: j.gpus, minVramGB: j.minVramGB, models: j.models },
      sla: { tier: j.tier, maxPrice: j.maxPrice, maxStartDelaySec: j.delayMin * 60 }
    }))
    const nowArb = fc.integer({ min: 0, max: 20 * 60 }).map((m) => Date.UTC(2024, 0, 1) + m * M)

    it('a bid respects price, calendar, GPUs, load and preemption rules', () => {
      fc.assert(fc.property(adArb, fc.array(allocArb, { maxLength: 6 }), jobArb, nowArb, (ad, allocs, job, now) => {
        const allocations = allocs.map((a) => a(now))
        const decision = decideBid(job, state(ad, allocations), now)
        if (decision.kind === 'decline') return
        const d = job.workload.maxRuntimeSec * 1000
        assert.ok(decision.price <= job.sla.maxPrice, 'never above maxPrice')
        assert.ok(decision.price >= ad.price.floor, 'never below the floor')
        assert.equal(decision.price, priceFor(ad.price, 'UTC', decision.startBy, d))
        assert.ok(decision.startBy >= now && decision.startBy <= now + job.sla.maxStartDelaySec * 1000)
        assert.ok(fits(ad.availability, decision.startBy, d))
        assert.ok(decision.fit >= 0 && decision.fit <= 1)
        assert.equal(decision.gpus.length, job.resources.gpus)
        assert.equal(new Set(decision.gpus).size, decision.gpus.length)
        const matching = new Set(matchingGpus(ad, job).map((g) => g.uuid))
        const overlapping = allocations.filter((a) => a.startedAt < decision.startBy + d && a.endsAt > decision.startBy)
        for (const uuid of decision.gpus) {
          assert.ok(matching.has(uuid))
          for (const a of overlapping.filter((x) => x.gpus.includes(uuid))) {
            assert.ok(a.tier === 'bronze' && decision.preempts.includes(a.job), `${uuid} is free or held by preempted bronze work`)
          }
        }
        if (decision.preempts.length > 0) {
          assert.notEqual(job.sla.tier, 'bronze')
          for (const j of decision.preempts) assert.ok(allocations.some((a) => a.job === j && a.tier === 'bronze'))
          const held = new Set(overlapping.flatMap((a) => a.gpus))
          assert.ok([...matching].filter((u) => !held.has(u)).length < job.resources.gpus, 'preempts only when free GPUs do not suffice')
        }
      }), { numRuns: 400 })
    })

    it('loaded machine: the earliest free start, else the fewest preemptions (brute force over minutes and subsets)', () => {
      const loadedAd = fc.record({
        count: fc.integer({ min: 2, max: 8 }),
        windows: fc.oneof(fc.constant(ALWAYS), fc.array(window, { minLength: 1, maxLength: 4 }))
      }).map(({ count, windows }) => makeAd({
        gpus: Array.from({ length: count }, (_, i) => gpu(i)),
        availability: { timeZone: 'UTC', windows },
        price: { floor: 0 }
      }))
      const loadedJob = fc.record({
        gpus: fc.integer({ min: 1, max: 6 }),
        tier: fc.constantFrom<Tier>('gold', 'silver', 'bronze'),
        delayMin: fc.integer({ min: 0, max: 180 }),
        runtimeMin: fc.integer({ min: 1, max: 240 })
      }).map((j) => makeJob({
        workload: { maxRuntimeSec: j.runtimeMin * 60 },
        resources: { gpus: j.gpus, minVramGB: 0 },
        sla: { tier: j.tier, maxPrice: 10_000_000, maxStartDelaySec: j.delayMin * 60 }
      }))
      fc.assert(fc.property(loadedAd, fc.array(allocArb, { maxLength: 6 }), loadedJob, nowArb, (ad, allocs, job, now) => {
        const allocations = allocs.map((a) => a(now))
        const decision = decideBid(job, state(ad, allocations), now)
        const d = job.workload.maxRuntimeSec * 1000
        const need = job.resources.gpus
        // every GPU matches (no model or VRAM terms), the price is always acceptable, and windows start on
        // whole minutes, so a decline is GPU_COUNT exactly when the machine is too small, CALENDAR exactly
        // when no whole-minute start within the delay fits a window, and BUSY otherwise (checked below)
        const got = decision.kind === 'bid' ? 'bid' : decision.reason
        if (ad.gpus.length < need) return assert.equal(got, 'GPU_COUNT')
        const starts = Array.from({ length: job.sla.maxStartDelaySec / 60 + 1 }, (_, i) => now + i * M)
        if (!starts.some((s) => fits(ad.availability, s, d))) return assert.equal(got, 'CALENDAR')
        assert.ok(got === 'bid' || got === 'BUSY', `a machine with ${ad.gpus.length} GPUs and a fitting window declined with ${got}`)
        const bronze = [...new Set(allocations.filter((a) => a.tier === 'bronze').map((a) => a.job))].sort()
        const subsets = Array.from({ length: 2 ** bronze.length }, (_, mask) => bronze.filter((_, i) => (mask >> i) & 1))
        const revenue = (jobs: string[]): number => allocations.filter((a) => a.tier === 'bronze' && a.endsAt > now && jobs.includes(a.job)).reduce((sum, a) => sum + a.price * a.gpus.length, 0)
        /** GPUs usable at `start` if `preempted` jobs give theirs up. */
        const usable = (start: number, preempted: string[]): number => {
          const held = new Set(allocations
            .filter((a) => a.startedAt < start + d && a.endsAt > start && !(a.tier === 'bronze' && preempted.includes(a.job)))
            .flatMap((a) => a.gpus))
          return ad.gpus.filter((g) => !held.has(g.uuid)).length
        }
        let freeStart: number | undefined
        let best: { start: number, count: number, revenue: number } | undefined
        for (let s = now; s <= now + job.sla.maxStartDelaySec * 1000; s += M) {
          if (!fits(ad.availability, s, d)) continue
          if (freeStart === undefined && usable(s, []) >= need) freeStart = s
          if (job.sla.tier === 'bronze') continue
          for (const set of subsets) {
            if (usable(s, set) < need) continue
            const candidate = { start: s, count: set.length, revenue: revenue(set) }
            if (best === undefined || candidate.count < best.count || (candidate.count === best.count && candidate.start === best.start && candidate.revenue < best.revenue)) best = candidate
          }
        }
        if (freeStart !== undefined) {
          assert.deepEqual([decision.kind, decision.kind === 'bid' && decision.startBy, decision.kind === 'bid' && decision.preempts], ['bid', freeStart, []])
        } else if (best === undefined) {
          assert.equal(decision.kind === 'decline' && decision.reason, 'BUSY')
        } else {
          assert.ok(decision.kind === 'bid')
          assert.deepEqual([decision.startBy, decision.preempts.length, revenue(decision.preempts)], [best.start, best.count, best.revenue])
          assert.ok(usable(decision.startBy, decision.preempts) >= need)
        }
      }), { numRuns: 300 })
    })

    it('is deterministic, and a higher cap never turns a bid into a decline', () => {
      fc.assert(fc.property(adArb, fc.array(allocArb, { maxLength: 4 }), jobArb, nowArb, fc.integer({ min: 0, max: 10 ** 7 }), (ad, allocs, job, now, raise) => {
        const allocations = allocs.map((a) => a(now))
        const decision = decideBid(job, state(ad, allocations), now)
        assert.deepEqual(decideBid(job, state(ad, allocations), now), decision)
        if (decision.kind !== 'bid') return
        const richer = decideBid({ ...job, sla: { ...job.sla, maxPrice: job.sla.maxPrice + raise } }, state(ad, allocations), now)
        assert.equal(richer.kind, 'bid')
      }), { numRuns: 200 })
    })
  })
})
