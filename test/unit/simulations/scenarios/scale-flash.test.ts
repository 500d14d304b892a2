/**
 * The `scale` and `flash-crowd` scenarios (simulations/scenarios/): the size ladder, the chart's series,
 * the burst's breakdown on a run small enough to count by hand, and both scenarios on the real data files
 * at tiny sizes: deterministic, wire copies per gossip message as the mesh model says (every receiver
 * gets between D − 1 and Dhi + 1 copies), nothing left open after the drain, the burst's jobs where the
 * burst is.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { JobOutcome, StrategyRun } from '../../../../simulations/model.js'
import { DEFAULT_GOSSIP_PARAMS } from '../../../../simulations/overlay/gossip-params.js'
import { FLASH_CROWD_BURST, burstBreakdown, flashCrowdScenario, flashCrowdWorkload, scale, scaleSizes, type ScenarioData } from '../../../../simulations/scenarios/index.js'
import { messagesVsN } from '../../../../simulations/scenarios/scale.js'
import { messagesChart } from '../../../../simulations/report/charts.js'
import type { TrafficRow } from '../../../../simulations/scenarios/traffic.js'

const DATA = fileURLToPath(new URL('../../../../../simulations/data/', import.meta.url))
const text = (p: string): string => readFileSync(DATA + p, 'utf8')
const data: ScenarioData = {
  alibabaNodes: text('traces/alibaba-gpu-2023/openb_node_list_gpu_node.csv'),
  alibabaPods: text('traces/alibaba-gpu-2023/openb_pod_list_default.csv'),
  prices: text('prices/gpu_prices_snapshot.csv'),
  rtt: text('latency/ripe_atlas_country_rtt_stat.csv')
}
const MIN = 60_000

const outcome = (job: string, over: Partial<JobOutcome>): JobOutcome =>
  ({ job, tier: 'gold', gpus: 1, status: 'completed', submittedAt: 0, endedAt: 0, gpuHours: 1, paid: 0, listCost: 0, preemptions: 0, attempts: 1, slaMiss: false, messages: 0, bytes: 0, ...over })

describe('simulations: the scale and flash-crowd scenarios', function () {
  this.timeout(120_000)

  it('scale runs the ladder below the top size, then the top size', () => {
    assert.deepEqual(scaleSizes(50), [50])
    assert.deepEqual(scaleSizes(100), [100])
    assert.deepEqual(scaleSizes(101), [100, 101])
    assert.deepEqual(scaleSizes(3_000), [100, 300, 1_000, 3_000])
    assert.deepEqual(scaleSizes(5_000), [100, 300, 1_000, 3_000, 5_000])
  })

  it('the chart gets one point per size and series (application, wire, DHT)', () => {
    const row = (nodes: number, wire: number | null): TrafficRow => ({ nodes, jobs: 1, messagesPerJob: 10, bytesPerJob: 1, wireMessagesPerJob: wire, wireBytesPerJob: wire, copiesPerGossipMessage: null, duplicateShare: null, bidsPerJob: 1, timeToAwardMs: { p50: 1, p95: 1 }, discovery: null, openAtEnd: 0, awardRtt: { meanRttMs: null, measured: 0, estimated: 0, unknown: 0 } })
    const points = messagesVsN([row(100, 700), row(300, null)])
    assert.deepEqual(points.map((p) => [p.n, p.series, p.messagesPerJob]), [[100, 'app messages', 10], [100, 'wire copies', 700], [300, 'app messages', 10]])
  })

  it('the messages chart draws on a log axis and leaves out zeros (a log axis has none)', () => {
    const spec = messagesChart([{ n: 100, messagesPerJob: 0, series: 'DHT per lookup' }, { n: 100, messagesPerJob: 5 }])
    assert.deepEqual((spec.data as { values: unknown[] }).values, [{ n: 100, messagesPerJob: 5, series: 'messages' }])
    assert.deepEqual((spec.encoding as { y: { scale: unknown } }).y.scale, { type: 'log' })
  })

  it('the burst breakdown counts jobs by when they were submitted, by tier', () => {
    const run: StrategyRun = {
      strategy: 's',
      nodes: [],
      jobs: [
        outcome('before', { submittedAt: 0, startedAt: 2 * MIN }),
        outcome('in1', { submittedAt: 10 * MIN, startedAt: 14 * MIN }),
        outcome('in2', { submittedAt: 12 * MIN, tier: 'bronze', status: 'unserved', slaMiss: false }),
        outcome('in3', { submittedAt: 19 * MIN, startedAt: 29 * MIN, slaMiss: true }),
        outcome('edge', { submittedAt: 20 * MIN, startedAt: 20 * MIN }) // the window is [10, 20) min
      ]
    }
    const b = burstBreakdown(run, { fromMs: 10 * MIN, untilMs: 20 * MIN })
    assert.deepEqual(b.during.all, { jobs: 3, started: 2, unserved: 1, slaMisses: 1, waitMsP50: 4 * MIN, waitMsP95: 10 * MIN })
    assert.deepEqual(b.during.gold, { jobs: 2, started: 2, unserved: 0, slaMisses: 1, waitMsP50: 4 * MIN, waitMsP95: 10 * MIN })
    assert.equal(b.during.bronze.unserved, 1)
    assert.deepEqual(b.outside.all, { jobs: 2, started: 2, unserved: 0, slaMisses: 0, waitMsP50: 0, waitMsP95: 2 * MIN })
  })

  it('scale at tiny sizes: deterministic; each gossip message costs every receiver D − 1 … Dhi + 1 copies; drained', () => {
    const a = scale.run(data, { seed: 3, nodes: 120, jobs: 8 })
    const b = scale.run(data, { seed: 3, nodes: 120, jobs: 8 })
    assert.deepEqual(a.sections, b.sections)
    assert.deepEqual(a.sections?.map((s) => s.key), ['scale'])
    const rows = (a.sections?.[0]?.json as { sizes: TrafficRow[] }).sizes
    assert.deepEqual(rows.map((r) => r.nodes), [100, 120])
    const p = DEFAULT_GOSSIP_PARAMS
    for (const r of rows) {
      const perReceiver = (r.copiesPerGossipMessage as number) / r.nodes
      assert.ok(perReceiver >= p.D - 1 && perReceiver <= p.Dhi + 1, `${r.nodes} nodes: ${perReceiver} copies per receiver`)
      assert.ok((r.wireMessagesPerJob as number) > r.messagesPerJob)
      assert.equal(r.openAtEnd, 0)
      assert.ok(r.discovery !== null && r.discovery.messagesPerLookup > 0)
    }
    assert.equal(a.runs.length, 1)
    assert.equal(a.nodes, 120)
    assert.equal(a.messagesVsN?.filter((pt) => pt.series === 'app messages').length, 2)
  })

  it('flash-crowd: the burst\'s jobs arrive inside the burst, on top of the market\'s; gpumesh and central both run', () => {
    const { built, burst } = flashCrowdWorkload(data, { seed: 2, nodes: 40, jobs: 20 })
    const burstJobs = built.workload.jobs.filter((j) => j.id.startsWith('burst-'))
    assert.equal(burstJobs.length, burst.jobs)
    assert.ok(burst.jobs > 0)
    assert.equal(burst.untilMs - burst.fromMs, FLASH_CROWD_BURST.durationMs)
    assert.ok(burstJobs.every((j) => j.submitAt >= burst.fromMs && j.submitAt < burst.untilMs))
    assert.equal(built.workload.jobs.length, 20 + burst.jobs)
    const r = flashCrowdScenario.run(data, { seed: 2, nodes: 40, jobs: 20 })
    assert.deepEqual(r.runs.map((x) => x.strategy), ['gpumesh', 'central'])
    assert.deepEqual(r.sections?.map((s) => s.key), ['flash-crowd', 'traffic'])
    const d = r.sections?.[0]?.json as { byWindow: Record<string, ReturnType<typeof burstBreakdown>> }
    assert.equal(d.byWindow.gpumesh?.during.all.jobs, r.runs[0]?.jobs.filter((j) => j.submittedAt >= burst.fromMs && j.submittedAt < burst.untilMs).length)
    assert.equal(r.market.openAtHorizon, 0)
    assert.deepEqual(flashCrowdScenario.run(data, { seed: 2, nodes: 40, jobs: 20 }).sections, r.sections)
  })
})
