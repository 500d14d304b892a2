/**
 * A tiny benchmark harness: run `fn` repeatedly for about `ms` milliseconds after a warm-up and
 * report operations per second. Benchmarks print numbers; they never fail a test run.
 */
export interface Rate { name: string, ops: number, seconds: number, perSecond: number }

export function measure (name: string, fn: (i: number) => void, ms = 1000): Rate {
  const warmUpEnd = performance.now() + Math.min(200, ms / 5)
  let i = 0
  while (performance.now() < warmUpEnd) fn(i++)
  const start = performance.now()
  let ops = 0
  // check the clock every 16 calls so that timing costs little
  while (true) {
    for (let k = 0; k < 16; k++) fn(ops++)
    if (performance.now() - start >= ms) break
  }
  const seconds = (performance.now() - start) / 1000
  return { name, ops, seconds, perSecond: ops / seconds }
}

export function printTable (rows: Rate[]): void {
  const width = Math.max(...rows.map((r) => r.name.length))
  for (const r of rows) {
    console.log(`${r.name.padEnd(width)}  ${Math.round(r.perSecond).toLocaleString('en-US').padStart(10)} /s   (${r.ops} ops in ${r.seconds.toFixed(2)} s)`)
  }
}
