import Mocha from 'mocha'
import { readFileSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'

/**
 * A mocha reporter that prints like `spec` and, at the end, writes where the time went: wall time per test file
 * (its top-level suites from first hook to last, so before/after hooks count), and each test's and hook's own
 * duration; on Linux also the CPU seconds each file cost, this process's and its reaped children's (the daemons
 * and CLI runs it spawned), which the machine's load changes far less than wall time. Use: `mocha --reporter ./dist/test/helpers/timing-reporter.js --reporter-option out=timing.json`
 * then `node dist/scripts/test-timing.js timing.json` — or read the JSON. Without `out` it only prints.
 */
interface Timed { file: string, title: string, ms: number, kind: 'test' | 'hook' }

/** CPU ms of this process and its reaped children, from /proc/self/stat (clock ticks of 10 ms); undefined off Linux. */
function cpuMs (): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // after the name: state(3) … utime(14) stime(15) cutime(16) cstime(17), counted from 1 with pid and name
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 10
  } catch {
    return undefined
  }
}

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_END, EVENT_HOOK_END, EVENT_RUN_END } = Mocha.Runner.constants

export default class TimingReporter extends Mocha.reporters.Spec {
  constructor (runner: Mocha.Runner, options: Mocha.MochaOptions & { reporterOption?: Record<string, string> }) {
    super(runner, options)
    const out = options.reporterOption?.out ?? options.reporterOptions?.out
    const fileMs = new Map<string, { ms: number, cpuMs: number }>()
    const started = new Map<Mocha.Suite, { at: number, cpu: number }>()
    const timed: Timed[] = []
    const runStart = Date.now()
    const runCpu = cpuMs()
    const fileOf = (r: { file?: string }): string => r.file == null ? '?' : relative(process.cwd(), r.file)
    runner.on(EVENT_SUITE_BEGIN, (suite: Mocha.Suite) => {
      if (suite.parent?.root === true) started.set(suite, { at: Date.now(), cpu: cpuMs() ?? 0 })
    })
    runner.on(EVENT_SUITE_END, (suite: Mocha.Suite) => {
      const t0 = started.get(suite)
      if (t0 === undefined) return
      const file = fileOf(suite)
      const sum = fileMs.get(file) ?? { ms: 0, cpuMs: 0 }
      fileMs.set(file, { ms: sum.ms + Date.now() - t0.at, cpuMs: sum.cpuMs + (cpuMs() ?? 0) - t0.cpu })
    })
    runner.on(EVENT_TEST_END, (test: Mocha.Test) => {
      timed.push({ file: fileOf(test), title: test.fullTitle(), ms: test.duration ?? 0, kind: 'test' })
    })
    runner.on(EVENT_HOOK_END, (hook: Mocha.Hook) => {
      if ((hook.duration ?? 0) >= 50) timed.push({ file: fileOf(hook), title: hook.fullTitle(), ms: hook.duration ?? 0, kind: 'hook' })
    })
    runner.once(EVENT_RUN_END, () => {
      if (out === undefined) return
      const files = [...fileMs].map(([file, t]) => ({ file, ...t })).sort((a, b) => b.ms - a.ms)
      timed.sort((a, b) => b.ms - a.ms)
      writeFileSync(out, JSON.stringify({ totalMs: Date.now() - runStart, cpuMs: runCpu === undefined ? undefined : (cpuMs() ?? 0) - runCpu, stats: runner.stats, files, timed }, null, 1))
    })
  }
}
