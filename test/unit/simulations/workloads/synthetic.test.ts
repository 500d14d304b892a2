/**
 * simulations/workloads/synthetic.ts: the generators' means on large seeded samples (so the tolerances are
 * checked, never flaky), the diurnal shape, the flash crowd's window, and the resampler's count, rate and
 * determinism.
 */
import assert from 'node:assert/strict'
import { Prng } from '../../../../simulations/harness/prng.js'
import {
  DEFAULT_DURATIONS, diurnalArrivals, type DurationModel, durationMean, fitLogNormal, flashCrowd, fittedRatePerHour, mergeArrivals,
  pickWeighted, poissonArrivals, resampleFleet, resampleJobs, sampleDuration, syntheticJobs
} from '../../../../simulations/workloads/synthetic.js'
import type { FleetNode } from '../../../../simulations/model.js'

const HOUR = 3_600_000

function mean (xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length
}

function near (actual: number, expected: number, rel: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= rel * expected, `${what}: ${actual} vs ${expected} (±${rel * 100}%)`)
}

describe('simulations/workloads: synthetic generators', () => {
  it('Poisson arrivals: rate and exponential gaps within 2% on 50,000 draws; a count or an end', () => {
    const t = poissonArrivals(new Prng(1), 120, { count: 50_000 })
    assert.equal(t.length, 50_000)
    assert.ok(t.every((x, i) => i === 0 || x >= (t[i - 1] as number)), 'ascending')
    near(t.length / ((t[t.length - 1] as number) / HOUR), 120, 0.02, 'arrivals per hour')
    const until = poissonArrivals(new Prng(2), 60, { untilMs: 1000 * HOUR, startMs: 10 * HOUR })
    near(until.length, 990 * 60, 0.02, 'arrivals before the end')
    assert.ok(until.every((x) => x >= 10 * HOUR && x < 1000 * HOUR))
    assert.equal(poissonArrivals(new Prng(1), 5, { count: 0 }).length, 0)
    assert.deepEqual(poissonArrivals(new Prng(9), 30, { count: 100 }), poissonArrivals(new Prng(9), 30, { count: 100 }), 'same seed, same arrivals')
    assert.throws(() => poissonArrivals(new Prng(1), 0, { count: 1 }), RangeError)
    assert.throws(() => poissonArrivals(new Prng(1), 1, {}), RangeError)
  })

  it('diurnal arrivals follow the rate of each hour of day', () => {
    const rates = Array.from({ length: 24 }, (_, h) => (h >= 9 && h < 17 ? 100 : 10))
    const days = 60
    const t = diurnalArrivals(new Prng(3), rates, { untilMs: days * 24 * HOUR })
    const perHour = new Array<number>(24).fill(0)
    for (const x of t) {
      const h = Math.floor((x % (24 * HOUR)) / HOUR)
      perHour[h] = (perHour[h] as number) + 1
    }
    near(mean(perHour.slice(9, 17)) / days, 100, 0.03, 'day-time rate')
    near(mean([...perHour.slice(0, 9), ...perHour.slice(17)]) / days, 10, 0.05, 'night rate')
    // startHour shifts the clock: t = 0 is 09:00, so the first hour is busy.
    const shifted = diurnalArrivals(new Prng(3), rates, { untilMs: days * 24 * HOUR, startHour: 9 })
    near(shifted.filter((x) => x % (24 * HOUR) < HOUR).length / days, 100, 0.05, 'first hour after a 09:00 start')
    assert.throws(() => diurnalArrivals(new Prng(1), [1, 2], { count: 1 }), RangeError)
    assert.throws(() => diurnalArrivals(new Prng(1), new Array<number>(24).fill(0), { count: 1 }), RangeError)
  })

  it('a flash crowd adds its burst inside [at, at + d) only', () => {
    const base = poissonArrivals(new Prng(4), 10, { untilMs: 100 * HOUR })
    const burst = flashCrowd(new Prng(5), { atMs: 50 * HOUR, durationMs: 2 * HOUR, ratePerHour: 5000 })
    assert.ok(burst.every((x) => x >= 50 * HOUR && x < 52 * HOUR))
    near(burst.length, 10_000, 0.03, 'burst size')
    const all = mergeArrivals(base, burst)
    assert.equal(all.length, base.length + burst.length)
    assert.ok(all.every((x, i) => i === 0 || x >= (all[i - 1] as number)))
    assert.equal(flashCrowd(new Prng(5), { atMs: 0, durationMs: 0, ratePerHour: 5000 }).length, 0)
  })

  it('duration models: sample means within 3% of the documented means on 100,000 draws', () => {
    const models: DurationModel[] = [
      DEFAULT_DURATIONS,
      { kind: 'lognormal', medianMs: 600_000, sigma: 0.5 },
      { kind: 'pareto', minMs: 60_000, alpha: 2.5 },
      { kind: 'pareto', minMs: 60_000, alpha: 1.2, maxMs: 100 * 60_000 },
      { kind: 'pareto', minMs: 1000, alpha: 1, maxMs: 1_000_000 }
    ]
    for (const m of models) {
      const rng = new Prng(`d:${JSON.stringify(m)}`)
      const xs = Array.from({ length: 100_000 }, () => sampleDuration(rng, m))
      near(mean(xs), durationMean(m), m.kind === 'lognormal' && m.sigma > 1 ? 0.06 : 0.03, `${JSON.stringify(m)} mean`)
      if (m.kind === 'pareto') {
        assert.ok(xs.every((x) => x >= m.minMs && (m.maxMs === undefined || x <= m.maxMs)))
      }
    }
    near(durationMean(DEFAULT_DURATIONS), 30 * 60_000 * Math.exp(1.125), 1e-12, 'log-normal mean formula')
    assert.equal(durationMean({ kind: 'pareto', minMs: 1, alpha: 1 }), Number.POSITIVE_INFINITY)
    assert.equal(sampleDuration(new Prng(1), { kind: 'fixed', ms: 7 }), 7)
    // Fitting recovers the parameters.
    const rng = new Prng('fit')
    const fit = fitLogNormal(Array.from({ length: 50_000 }, () => sampleDuration(rng, { kind: 'lognormal', medianMs: 1e6, sigma: 1.2 })))
    assert.ok(fit.kind === 'lognormal')
    near(fit.medianMs, 1e6, 0.02, 'fitted median')
    near(fit.sigma, 1.2, 0.02, 'fitted sigma')
  })

  it('jobs from arrivals: shapes by weight, the same per seed', () => {
    const arrivals = poissonArrivals(new Prng(6), 100, { count: 20_000 })
    const jobs = syntheticJobs(new Prng(7), arrivals)
    assert.deepEqual(syntheticJobs(new Prng(7), arrivals), jobs)
    assert.equal(jobs.length, 20_000)
    assert.equal(jobs[0]?.id, 'j000000')
    near(jobs.filter((j) => j.gpus === 1).length / 20_000, 0.8, 0.02, 'single-GPU share')
    near(jobs.filter((j) => j.tier === 'gold').length / 20_000, 0.2, 0.05, 'gold share')
    assert.ok(jobs.every((j, i) => j.submitAt === arrivals[i] && j.durationMs >= 1))
    assert.equal(pickWeighted(new Prng(1), [['only', 1]]), 'only')
    assert.equal(pickWeighted(new Prng(1), [['never', 0], ['always', 1]]), 'always')
    assert.throws(() => pickWeighted(new Prng(1), [['x', 0]]), RangeError)
  })

  it('the resampler extends a trace to any count, at the fitted rate, deterministically', () => {
    const base = syntheticJobs(new Prng(8), poissonArrivals(new Prng(9), 30, { count: 500, startMs: 1000 * HOUR }), {
      shape: { gpus: [[1, 1], [4, 1]], tiers: [['gold', 1], ['bronze', 1]], regions: [['eu-west', 1], [undefined, 1]], models: [[[], 1], [['a100-80gb'], 1]], minVramGB: [[0, 1], [40, 1]] }
    }).map((j, i) => (i % 3 === 0 ? { ...j, maxPrice: 1_000_000 + i, residency: 'strict' as const, gpuMilli: 500 } : j))
    near(fittedRatePerHour(base), 30, 0.1, 'fitted rate of the base')
    for (const count of [0, 1, 500, 20_000]) {
      const r = resampleJobs(new Prng(10), base, count)
      assert.equal(r.length, count)
      assert.equal(new Set(r.map((j) => j.id)).size, count, 'unique ids')
    }
    const big = resampleJobs(new Prng(10), base, 20_000)
    assert.deepEqual(resampleJobs(new Prng(10), base, 20_000), big, 'same seed, same jobs')
    assert.notDeepEqual(resampleJobs(new Prng(11), base, 100), big.slice(0, 100))
    near(fittedRatePerHour(big), fittedRatePerHour(base), 0.02, 'resampled rate')
    const first = base[0]?.submitAt as number
    assert.ok((big[0]?.submitAt as number) >= first && (big[0]?.submitAt as number) < first + HOUR, 'starts at the trace\'s first submit')
    const byId = new Map(base.map((j) => [j.id, j]))
    for (const j of big.slice(0, 1000)) {
      const o = byId.get((j.source as string).slice('resample:'.length))
      assert.ok(o !== undefined)
      const { id: _i, submitAt: _s, source: _c, ...shape } = j
      const { id: _oi, submitAt: _os, source: _oc, ...orig } = o
      assert.deepEqual(shape, orig, 'a copy of every field of an original\'s shape')
    }
    near(mean(big.map((j) => j.durationMs)), mean(base.map((j) => j.durationMs)), 0.1, 'bootstrap keeps the mean duration')
    const fast = resampleJobs(new Prng(10), base, 10_000, { ratePerHour: 600 })
    near(fittedRatePerHour(fast), 600, 0.03, 'a chosen rate')
    assert.throws(() => resampleJobs(new Prng(1), [], 5), RangeError)
    assert.throws(() => resampleJobs(new Prng(1), base, -1), RangeError)
  })

  it('the fleet resampler draws node shapes with replacement and places them afresh', () => {
    const shapes: FleetNode[] = [
      { id: 'big', model: 'nvidia-a100-sxm4-40gb', gpuName: 'NVIDIA A100-SXM4-40GB', gpus: 8, vramMiB: 40_960, country: 'CN', region: 'ap-east', cpuMilli: 96_000, memoryMiB: 393_216 },
      { id: 'small', model: 'tesla-t4', gpuName: 'Tesla T4', gpus: 2, vramMiB: 15_360, country: 'CN', region: 'ap-east', cpuMilli: 104_000, memoryMiB: 524_288 }
    ]
    const fleet = resampleFleet(new Prng(12), shapes, 10_000)
    assert.deepEqual(resampleFleet(new Prng(12), shapes, 10_000), fleet)
    assert.equal(fleet.length, 10_000)
    assert.equal(new Set(fleet.map((n) => n.id)).size, 10_000)
    near(fleet.filter((n) => n.gpus === 8).length, 5000, 0.05, 'half big nodes')
    assert.ok(fleet.every((n) => n.gpus === 8 ? n.model === 'nvidia-a100-sxm4-40gb' && n.cpuMilli === 96_000 : n.model === 'tesla-t4' && n.vramMiB === 15_360))
    assert.ok(new Set(fleet.map((n) => n.country)).size > 5, 'places drawn from the default distribution, not copied')
    assert.equal(resampleFleet(new Prng(1), shapes, 0).length, 0)
    assert.throws(() => resampleFleet(new Prng(1), [], 3), RangeError)
  })
})
