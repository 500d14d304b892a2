/**
 * A reader of the Prometheus text format (exposition format 0.0.4) as the API's /metrics serves it:
 * one sample per line, `name{label="value",…} number`; comments and blank lines skipped.
 */
export interface Sample { name: string, labels: Record<string, string>, value: number }

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

export function parsePrometheusText (text: string): Sample[] {
  const samples: Sample[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const m = LINE.exec(line)
    if (m === null) throw new Error(`not a Prometheus sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c: string) => c === 'n' ? '\n' : c)
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) })
  }
  return samples
}

/** The sum of `name`'s samples whose labels include `labels`. */
export function sumOf (samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0)
}
