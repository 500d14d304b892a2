/**
 * gossipsub's metrics (mesh sizes, peer scores, messages by topic and outcome) into a prom-client
 * registry. @libp2p/gossipsub does not read libp2p's metrics component: it takes its own
 * `metricsRegister` (gauge, histogram, avg/min/max — the interface lodestar implements), which this
 * adapts onto prom-client. avgMinMax is three gauges, `<name>_avg`, `_min` and `_max`.
 * Topic labels: gpumesh's topics without the `gpumesh/2/` prefix (TOPIC_PREFIX) (a topic not listed counts as `unknown`).
 */
import { Gauge, Histogram, type Registry } from 'prom-client'
import { TOPIC_PREFIX } from '../protocol/index.js'

type Labels = Record<string, string | number>
type Config = { name: string, help: string, labelNames?: string[], buckets?: number[] }

interface AdaptedGauge {
  inc: (a?: Labels | number, b?: number) => void
  set: (a: Labels | number, b?: number) => void
  addCollect: (fn: (metric: AdaptedGauge) => void) => void
}

function gauge (registry: Registry, config: Config): AdaptedGauge {
  const collects: Array<(metric: AdaptedGauge) => void> = []
  const g: Gauge = new Gauge({
    name: config.name,
    help: config.help,
    labelNames: config.labelNames ?? [],
    registers: [registry],
    collect () { for (const fn of collects) fn(adapted) }
  })
  const adapted: AdaptedGauge = {
    inc: (a, b) => { if (typeof a === 'object') g.inc(a, b ?? 1); else g.inc(a ?? 1) },
    set: (a, b) => { if (typeof a === 'object') g.set(a, b ?? 0); else g.set(a) },
    addCollect: (fn) => { collects.push(fn) }
  }
  return adapted
}

function histogram (registry: Registry, config: Config): { startTimer: () => () => void, observe: (a: Labels | number, b?: number) => void, reset: () => void } {
  const h: Histogram = new Histogram({ name: config.name, help: config.help, labelNames: config.labelNames ?? [], ...(config.buckets !== undefined ? { buckets: config.buckets } : {}), registers: [registry] })
  return {
    startTimer: () => { const end = h.startTimer(); return () => { end() } },
    observe: (a, b) => { if (typeof a === 'object') h.observe(a, b ?? 0); else h.observe(a) },
    reset: () => { h.reset() }
  }
}

function avgMinMax (registry: Registry, config: Config): { set: (a: Labels | number[], b?: number[]) => void } {
  const [avg, min, max] = (['avg', 'min', 'max'] as const).map((s) => new Gauge({ name: `${config.name}_${s}`, help: `${config.help} (${s})`, labelNames: config.labelNames ?? [], registers: [registry] })) as [Gauge, Gauge, Gauge]
  return {
    set: (a, b) => {
      const [labels, values] = Array.isArray(a) ? [{}, a] : [a, b ?? []]
      if (values.length === 0) return
      let [sum, lo, hi] = [0, Infinity, -Infinity]
      for (const v of values) { sum += v; if (v < lo) lo = v; if (v > hi) hi = v }
      avg.set(labels, sum / values.length)
      min.set(labels, lo)
      max.set(labels, hi)
    }
  }
}

/** gossipsub's `metricsRegister` and `metricsTopicStrToLabel` init options, over `registry`. */
export function gossipsubMetrics (registry: Registry, topics: readonly string[]): { metricsRegister: any, metricsTopicStrToLabel: Map<string, string> } {
  return {
    metricsRegister: {
      gauge: (config: Config) => gauge(registry, config),
      histogram: (config: Config) => histogram(registry, config),
      avgMinMax: (config: Config) => avgMinMax(registry, config)
    },
    metricsTopicStrToLabel: new Map(topics.map((t) => [t, t.startsWith(`${TOPIC_PREFIX}/`) ? t.slice(TOPIC_PREFIX.length + 1) : t]))
  }
}
