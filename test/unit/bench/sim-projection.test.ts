/** bench:sim's projection of gpumesh runs (bench/sim-projection.ts): the fixed part and the marginal cost per job. */
import assert from 'node:assert/strict'
import { fitPerJob, projectRun } from '../../../bench/sim-projection.js'

describe('bench:sim projection', () => {
  it('needs two job counts: one count (even repeated) gives no fit', () => {
    assert.equal(fitPerJob([]), undefined)
    assert.equal(fitPerJob([{ jobs: 10, cpuMs: 5_000, peakRss: 1 }, { jobs: 10, cpuMs: 5_100, peakRss: 1 }]), undefined)
  })

  it('recovers the fixed part and the cost per job of runs on one line, and projects along it', () => {
    const run = (jobs: number): { jobs: number, cpuMs: number, peakRss: number } => ({ jobs, cpuMs: 2_000 + 150 * jobs, peakRss: 300e6 + 40_000 * jobs })
    const fit = fitPerJob([run(100), run(200)])
    assert.deepEqual(fit, { fixedCpuMs: 2_000, cpuMsPerJob: 150, fixedRss: 300e6, rssPerJob: 40_000 })
    assert.deepEqual(projectRun(fit, 0), { cpuMs: 2_000, peakRss: 300e6 })
    assert.deepEqual(projectRun(fit, 100_000), { cpuMs: 2_000 + 15_000_000, peakRss: 300e6 + 4e9 })
  })

  it('fits noisy runs by least squares', () => {
    const fit = fitPerJob([{ jobs: 10, cpuMs: 1_100, peakRss: 10 }, { jobs: 20, cpuMs: 1_900, peakRss: 20 }, { jobs: 30, cpuMs: 3_100, peakRss: 30 }])
    assert.ok(fit !== undefined)
    assert.ok(Math.abs(fit.cpuMsPerJob - 100) < 1e-9)
    assert.ok(Math.abs(fit.fixedCpuMs - 33.333333333) < 1e-6)
  })

  it('takes a fixed part below 0 (noise) as 0, and a falling line as flat at the mean', () => {
    const fit = fitPerJob([{ jobs: 10, cpuMs: 900, peakRss: 500 }, { jobs: 20, cpuMs: 2_000, peakRss: 400 }])
    assert.deepEqual(fit, { fixedCpuMs: 0, cpuMsPerJob: 110, fixedRss: 450, rssPerJob: 0 })
  })
})
