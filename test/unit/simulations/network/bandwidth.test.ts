import assert from 'node:assert/strict'
import { Prng } from '../../../../simulations/harness/prng.js'
import { DEFAULT_BANDWIDTH_CLASSES, InvalidBandwidthError, MAX_MBPS, MIN_MBPS, drawBandwidth, transferMs, validateBandwidthClasses } from '../../../../simulations/network/bandwidth.js'

describe('simulations/network bandwidth', () => {
  it('draws the default mix: 60 % data-centre links around 1 Gbit/s, 40 % residential around 100 down / 20 up', () => {
    validateBandwidthClasses(DEFAULT_BANDWIDTH_CLASSES)
    const prng = new Prng('bw')
    const draws = Array.from({ length: 5000 }, () => drawBandwidth(prng))
    const dc = draws.filter((d) => d.class === 'datacenter')
    // Binomial(5000, 0.6): sd ≈ 35; 4 sd.
    assert.ok(Math.abs(dc.length - 3000) < 140, String(dc.length))
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number
    const home = draws.filter((d) => d.class === 'residential')
    assert.ok(Math.abs(median(dc.map((d) => d.downMbps)) / 1000 - 1) < 0.1)
    assert.ok(Math.abs(median(home.map((d) => d.downMbps)) / 100 - 1) < 0.15)
    assert.ok(Math.abs(median(home.map((d) => d.upMbps)) / 20 - 1) < 0.15)
    assert.ok(draws.every((d) => d.upMbps >= MIN_MBPS && d.upMbps <= MAX_MBPS && d.downMbps >= MIN_MBPS && d.downMbps <= MAX_MBPS))
  })

  it('clamps to [1 Mbit/s, 100 Gbit/s]', () => {
    const prng = new Prng(1)
    const low = drawBandwidth(prng, [{ name: 'low', weight: 1, down: { median: 0.001, sigma: 0 }, up: { median: 1e9, sigma: 0 } }])
    assert.deepEqual(low, { class: 'low', downMbps: MIN_MBPS, upMbps: MAX_MBPS })
  })

  it('times a transfer: latency + bytes / min(up, down)', () => {
    assert.equal(transferMs(1_000_000, 20, { upMbps: 8, downMbps: 1 }, { upMbps: 1, downMbps: 800 }), 20 + 1000)
    assert.equal(transferMs(0, 20, { upMbps: 8, downMbps: 1 }, { upMbps: 1, downMbps: 800 }), 20)
  })

  it('refuses a mix it cannot draw from, naming the field', () => {
    const ok = { name: 'a', weight: 1, down: { median: 1, sigma: 0 }, up: { median: 1, sigma: 0 } }
    const cases: Array<[Parameters<typeof validateBandwidthClasses>[0], string]> = [
      [[], 'classes'],
      [[{ ...ok, weight: 0 }], 'a.weight'],
      [[{ ...ok, up: { median: -1, sigma: 0 } }], 'a.up.median'],
      [[{ ...ok, down: { median: 1, sigma: -0.1 } }], 'a.down.sigma']
    ]
    for (const [classes, field] of cases) assert.throws(() => { validateBandwidthClasses(classes) }, (e: unknown) => e instanceof InvalidBandwidthError && e.field === field, field)
  })
})
