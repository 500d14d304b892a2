import { readFileSync } from 'node:fs'

/**
 * Print what timing-reporter.ts wrote: the run's total, the slowest files (wall time, hooks included) and the
 * slowest tests and hooks. `node dist/test/helpers/timing-summary.js timing.json [rows]`.
 */
interface Timing {
  totalMs: number
  cpuMs?: number
  stats: { tests: number, passes: number, failures: number, pending: number }
  files: Array<{ file: string, ms: number, cpuMs?: number }>
  timed: Array<{ file: string, title: string, ms: number, kind: 'test' | 'hook' }>
}

const [path, rowsArg] = process.argv.slice(2)
if (path === undefined) {
  console.error('usage: timing-summary.js timing.json [rows]')
  process.exit(2)
}
const rows = Number(rowsArg ?? 30)
const timing = JSON.parse(readFileSync(path, 'utf8')) as Timing
const s = (ms: number): string => (ms / 1000).toFixed(1).padStart(7)
const short = (file: string): string => file.replace(/^dist\/test\//, '').replace(/\.js$/, '.ts')
const filesMs = timing.files.reduce((sum, f) => sum + f.ms, 0)

console.log(`total ${s(timing.totalMs)} s wall, ${timing.cpuMs === undefined ? '?' : s(timing.cpuMs)} s CPU; ${timing.stats.passes} passing, ${timing.stats.failures} failing, ${timing.stats.pending} pending; ${timing.files.length} files, ${s(filesMs)} s in them`)
console.log(`\nslowest ${rows} files (wall s, hooks included; CPU s of the runner and what it spawned):`)
for (const f of timing.files.slice(0, rows)) console.log(`${s(f.ms)} ${f.cpuMs === undefined ? '' : s(f.cpuMs)}  ${short(f.file)}`)
const dirs = new Map<string, number>()
for (const f of timing.files) {
  const dir = short(f.file).split('/')[0] ?? '?'
  dirs.set(dir, (dirs.get(dir) ?? 0) + f.ms)
}
console.log('\nper folder:')
for (const [dir, ms] of [...dirs].sort((a, b) => b[1] - a[1])) console.log(`${s(ms)}  ${dir}/`)
console.log(`\nslowest ${rows} tests and hooks (s):`)
for (const t of timing.timed.slice(0, rows)) console.log(`${s(t.ms)}  ${t.kind === 'hook' ? '[hook] ' : ''}${short(t.file)}: ${t.title.slice(0, 150)}`)
