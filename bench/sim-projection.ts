/**
 * bench:sim's projection of a gpumesh run to job counts too large to measure: from runs of one fleet
 * size at two or more job counts, a least-squares line through (jobs, CPU) and (jobs, peak RSS). Its
 * slope is the marginal cost of one job; its intercept the run's fixed part (the owners' holds and the
 * agents' ticks over the horizon, which do not depend on the job count). Noise may tilt the line: a
 * slope below 0 is taken as 0 (the intercept then the mean), an intercept below 0 as 0. Pure: numbers in, numbers out.
 */

export interface SizedRun { jobs: number, cpuMs: number, peakRss: number }

export interface PerJobFit {
  /** CPU of the run without jobs, ms (≥ 0). */
  fixedCpuMs: number
  /** Marginal CPU per job, ms (≥ 0). */
  cpuMsPerJob: number
  /** Peak RSS without jobs, bytes (≥ 0). */
  fixedRss: number
  /** Marginal peak RSS per job, bytes (≥ 0). */
  rssPerJob: number
}

/** The fit, or undefined when the runs do not span two job counts. */
export function fitPerJob (runs: readonly SizedRun[]): PerJobFit | undefined {
  if (new Set(runs.map((r) => r.jobs)).size < 2) return undefined
  const cpu = line(runs.map((r) => [r.jobs, r.cpuMs]))
  const rss = line(runs.map((r) => [r.jobs, r.peakRss]))
  return { fixedCpuMs: Math.max(0, cpu.intercept), cpuMsPerJob: cpu.slope, fixedRss: Math.max(0, rss.intercept), rssPerJob: rss.slope }
}

/** What `jobs` jobs would cost at the fit: fixed part + marginal cost × jobs. */
export function projectRun (fit: PerJobFit, jobs: number): { cpuMs: number, peakRss: number } {
  return { cpuMs: fit.fixedCpuMs + fit.cpuMsPerJob * jobs, peakRss: fit.fixedRss + fit.rssPerJob * jobs }
}

function line (points: ReadonlyArray<readonly [number, number]>): { slope: number, intercept: number } {
  const n = points.length
  const mx = points.reduce((a, [x]) => a + x, 0) / n
  const my = points.reduce((a, [, y]) => a + y, 0) / n
  let sxy = 0
  let sxx = 0
  for (const [x, y] of points) { sxy += (x - mx) * (y - my); sxx += (x - mx) ** 2 }
  // a line falling with the job count is noise about a flat one
  const slope = Math.max(0, sxy / sxx)
  return { slope, intercept: my - slope * mx }
}
