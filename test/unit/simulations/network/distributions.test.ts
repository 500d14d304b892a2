import assert from 'node:assert/strict'
import { Prng } from '../../../../simulations/harness/prng.js'
import { gamma, lognormal, lognormalParams, standardNormal, weibull, weibullMean } from '../../../../simulations/network/distributions.js'

const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length

describe('simulations/network distributions', () => {
  it('computes Γ at known points', () => {
    assert.ok(Math.abs(gamma(5) - 24) < 1e-9)
    assert.ok(Math.abs(gamma(1) - 1) < 1e-12)
    assert.ok(Math.abs(gamma(0.5) ** 2 - Math.PI) < 1e-9)
    assert.ok(Math.abs(gamma(2.5) - 1.329340388179137) < 1e-12)
  })

  it('draws a standard normal (mean 0, sd 1) and a log-normal with the mean and sd asked for', () => {
    const p = new Prng('dist')
    const z = Array.from({ length: 20_000 }, () => standardNormal(p))
    assert.ok(Math.abs(mean(z)) < 0.03)
    assert.ok(Math.abs(Math.sqrt(mean(z.map((x) => x * x))) - 1) < 0.03)
    const { mu, sigma } = lognormalParams(20, 10)
    const l = Array.from({ length: 20_000 }, () => lognormal(p, mu, sigma))
    assert.ok(Math.abs(mean(l) - 20) < 0.5)
    assert.ok(l.every((x) => x > 0))
  })

  it('draws a Weibull with mean λ·Γ(1 + 1/k), heavy-tailed for k < 1', () => {
    const p = new Prng('weibull')
    for (const w of [{ shape: 1, scale: 10 }, { shape: 0.59, scale: 41.9 }, { shape: 2, scale: 5 }]) {
      const xs = Array.from({ length: 40_000 }, () => weibull(p, w))
      assert.ok(Math.abs(mean(xs) / weibullMean(w) - 1) < 0.05, `${w.shape}: ${mean(xs)} vs ${weibullMean(w)}`)
      assert.ok(xs.every((x) => x >= 0))
    }
    assert.ok(Math.abs(weibullMean({ shape: 1, scale: 10 }) - 10) < 1e-9)
  })
})
