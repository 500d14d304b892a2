/**
 * Damping among tied providers (damping.ts): the suppression timer and its tie-break uniform. Many
 * providers with the same fit must not all bid at once: the exponential timer lets only a few fire
 * before the first bid reaches the rest.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import {
  BID_DELAY_FRACTION, BID_SPREAD_SHARE, DAMPING_GROUP_SIZE, bidDelayMs, dampingDelayMs, suppressionDelayMs, tieBreakUniform
} from '../../../../protocol/market/damping.js'

describe('market/damping among ties', () => {
  describe('suppressionDelayMs', () => {
    it('spans [0, spread × window]: 0 at u ≤ 1/G, the whole spread at u = 1, half of it at u = G^−½', () => {
      const G = 10_000
      assert.equal(suppressionDelayMs(1, 2_000, 0.15, G), 300)
      assert.equal(suppressionDelayMs(1 / G, 2_000, 0.15, G), 0)
      assert.equal(suppressionDelayMs(1 / (2 * G), 2_000, 0.15, G), 0)
      assert.equal(suppressionDelayMs(0.01, 2_000, 0.15, G), 150)
      assert.equal(suppressionDelayMs(0.5, 1_000, 0.2, 100), Math.floor(200 * (1 + Math.log(0.5) / Math.log(100))))
    })

    it('is 0 for u ≤ 0, NaN, a zero spread or window; clamps spread to [0, 1] and the group to ≥ 2', () => {
      assert.equal(suppressionDelayMs(0, 2_000), 0)
      assert.equal(suppressionDelayMs(-1, 2_000), 0)
      assert.equal(suppressionDelayMs(Number.NaN, 2_000), 0)
      assert.equal(suppressionDelayMs(0.9, 2_000, 0), 0)
      assert.equal(suppressionDelayMs(0.9, 0), 0)
      assert.equal(suppressionDelayMs(1.5, 1_000, 3), 1_000)
      assert.equal(suppressionDelayMs(0.75, 1_000, 1, 1), suppressionDelayMs(0.75, 1_000, 1, 2))
    })

    it('never decreases as u grows, and stays inside its span', () => {
      fc.assert(fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 50, max: 600_000 }), (a, b, w) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a]
        const s = BID_DELAY_FRACTION * BID_SPREAD_SHARE
        const dLo = suppressionDelayMs(lo, w, s)
        const dHi = suppressionDelayMs(hi, w, s)
        assert.ok(dLo <= dHi)
        assert.ok(dLo >= 0 && dHi <= Math.floor(s * w))
      }), { seed: 7, numRuns: 300 })
    })
  })

  describe('dampingDelayMs', () => {
    it('is the fit delay over (1 − share) of the span plus the timer over the rest; share 0 is the plain fit delay', () => {
      assert.equal(dampingDelayMs(0.5, 0.3, 1_000, 0.6, 0), bidDelayMs(0.5, 1_000, 0.6))
      assert.equal(dampingDelayMs(0, 1, 1_000, 0.6, 0.25), 450 + 150)
      assert.equal(dampingDelayMs(1, 1 / DAMPING_GROUP_SIZE, 1_000), 0)
    })

    it('keeps every bid inside fraction × window, whatever the fit and u', () => {
      fc.assert(fc.property(fc.double({ min: -1, max: 2, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 50, max: 600_000 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (fit, u, w, fraction, share) => {
        const d = dampingDelayMs(fit, u, w, fraction, share)
        assert.ok(d >= 0 && d <= fraction * w + 1e-9, `${d} > ${fraction} × ${w}`)
      }), { seed: 11, numRuns: 500 })
    })
  })

  describe('tieBreakUniform', () => {
    it('is deterministic, inside (0, 1), and differs by provider, job and round', () => {
      const u = tieBreakUniform('peer-a', 'job-1', 1)
      assert.equal(tieBreakUniform('peer-a', 'job-1', 1), u)
      assert.ok(u > 0 && u < 1)
      assert.notEqual(tieBreakUniform('peer-b', 'job-1', 1), u)
      assert.notEqual(tieBreakUniform('peer-a', 'job-2', 1), u)
      assert.notEqual(tieBreakUniform('peer-a', 'job-1', 2), u)
    })

    it('matches protocol/README §5.6\'s vectors', () => {
      const u = tieBreakUniform('peer-a', 'job-1', 1)
      assert.equal(u, 0.8494463484967127)
      assert.equal(suppressionDelayMs(u, 2_000, BID_DELAY_FRACTION * BID_SPREAD_SHARE), 294)
      assert.equal(dampingDelayMs(0.5, u, 2_000), 744)
      assert.equal(tieBreakUniform('12D3KooWExample', 'bafyjob', 2), 0.8025618660030887)
    })

    it('is spread evenly over providers (mean ½, each decile about a tenth)', () => {
      const n = 20_000
      const deciles = new Array<number>(10).fill(0)
      let sum = 0
      for (let i = 0; i < n; i++) {
        const u = tieBreakUniform(`12D3KooWpeer${i}`, 'bafyjob', 1)
        sum += u
        deciles[Math.floor(u * 10)]! += 1
      }
      assert.ok(Math.abs(sum / n - 0.5) < 0.01, `mean ${sum / n}`)
      for (const d of deciles) assert.ok(Math.abs(d - n / 10) < n / 10 * 0.1, `decile holds ${d}`)
    })
  })

  it('of N tied providers only a handful fire before the first bid can reach them (N = 1,000 and 10,000)', () => {
    // the defaults on a 2 s window: a 300 ms timer span; gossip reaches the others 100 ms after the first bid
    const window = 2_000
    const latency = 100
    const spread = BID_DELAY_FRACTION * BID_SPREAD_SHARE * window
    for (const n of [1_000, 10_000]) {
      const delays: number[] = []
      for (let i = 0; i < n; i++) delays.push(dampingDelayMs(0.8, tieBreakUniform(`peer-${i}`, 'job-x', 1), window))
      const first = Math.min(...delays)
      const early = delays.filter((d) => d < first + latency).length
      // the timer's law: about N × G^(L/S − 1) fire before L (2.2 of 1,000 and 21.5 of 10,000 here)
      const expected = n * DAMPING_GROUP_SIZE ** (latency / spread - 1)
      assert.ok(early <= 1.5 * expected + 3, `${early} of ${n} fired within ${latency} ms of the first (law: ${expected.toFixed(1)})`)
      assert.ok(early < n / 100)
      // without the timer every one of them fires at the same instant
      assert.equal(new Set(Array.from({ length: n }, () => dampingDelayMs(0.8, 0.5, window, BID_DELAY_FRACTION, 0))).size, 1)
    }
  })
})
