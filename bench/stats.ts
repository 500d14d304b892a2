/**
 * What the benchmarks share for numbers and tables: a seeded random source, nearest-rank percentiles,
 * and a labelled table printer.
 */

/** A seeded random source (mulberry32): the same seed, the same sequence. */
export function rng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Nearest-rank percentile; NaN for no values. */
export function pct (values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1))] as number
}

/** A duration for a table: `—` for none, seconds from 10 s on. */
export const ms = (v: number): string => Number.isNaN(v) ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v.toFixed(0)} ms`

export interface Row { label: string, cells: string[] }

/** A titled table: labels left, cells right-aligned under their headers. */
export function printTable (title: string, header: string[], rows: Row[]): void {
  console.log(`\n${title}`)
  const width = Math.max(4, ...rows.map((r) => r.label.length))
  const colWidths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r.cells[i] ?? '').length)))
  console.log(`  ${''.padEnd(width)}  ${header.map((h, i) => h.padStart(colWidths[i] as number)).join('  ')}`)
  for (const r of rows) console.log(`  ${r.label.padEnd(width)}  ${r.cells.map((c, i) => c.padStart(colWidths[i] as number)).join('  ')}`)
}
