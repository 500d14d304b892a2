/**
 * The Alibaba GPU cluster trace 2023 ("openb", simulations/data/) as a workload: its nodes become the fleet,
 * its pods either the owners' own work or renters' jobs.
 *
 * - Nodes (`sn, cpu_milli, memory_mib, gpu, model`) → FleetNode: the model code maps to a driver name and VRAM
 *   (gpu-models.ts; G1–G3 are an assumption), the place is drawn per node id (regions.ts).
 * - Pods (`name, …, num_gpu, gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time,
 *   scheduled_time`, seconds) → CPU-only pods and never-scheduled pods are dropped and counted; the rest are
 *   split by a seeded draw (`renterFraction`) into renters' jobs (submitted at creation, running for
 *   deletion − scheduled) and the owners' own work, which ran over [scheduled, deletion) and is packed
 *   first-fit onto the fleet over the per-node GPU timeline (capacity.ts) — the trace does not say which
 *   node ran a pod.
 * - QoS → tier (QOS_TIERS): LS and Guaranteed → gold, Burstable → silver, BE → bronze.
 * - A window (trace seconds) keeps part of the trace; `timeScale` compresses it (trace seconds per simulated
 *   second), so five months can run as a day with the same load shape — or, with `scaleDurations: false`,
 *   arrivals come closer while durations stay real, which raises the load (the trace's pods fill well under
 *   1% of the fleet's GPU-hours over its whole span).
 */
import { FleetCapacity } from '../capacity.js'
import { Prng, type Seed } from '../harness/prng.js'
import type { FleetNode, OwnerWork, SimJob, Tier } from '../model.js'
import { type CsvRow, type CsvTable, parseCsv } from './csv.js'
import { ALIBABA_MODELS, type GpuModel, slugOf } from './gpu-models.js'
import { DEFAULT_PLACES, type Place, PlaceAssigner } from './regions.js'
import { resampleFleet } from './synthetic.js'
import { type BuiltWorkload, buildWorkload, cmp, type DropReason } from './workload.js'

/**
 * The trace's QoS classes → tiers. gold is reserved capacity (DESIGN §5): latency-sensitive services (LS) and
 * Kubernetes' Guaranteed class cannot wait in a queue or be preempted. Burstable → silver (on demand: runs
 * when placed, not preempted). BE (best effort, the class Kubernetes evicts first) → bronze (preemptible).
 */
export const QOS_TIERS: Readonly<Record<string, Tier>> = { LS: 'gold', Guaranteed: 'gold', Burstable: 'silver', BE: 'bronze' }

/** Share of the kept pods that become renters' jobs by default; the rest are the owners' own work. */
export const DEFAULT_RENTER_FRACTION = 0.3

export interface AlibabaOptions {
  /** Seeds the owner/renter split and the nodes' places. */
  seed: Seed
  /** Share of kept pods that become renters' jobs, in [0, 1]. */
  renterFraction?: number
  places?: readonly Place[]
  /** Model code → GPU model (default ALIBABA_MODELS). */
  models?: Readonly<Record<string, GpuModel>>
  /** QoS → tier (default QOS_TIERS). */
  tiers?: Readonly<Record<string, Tier>>
  /** Part of the trace to keep, trace seconds [startS, endS); default: all of it (0 to the last deletion). */
  window?: { startS?: number, endS?: number }
  /** Trace seconds per simulated second (> 1 compresses; default 1). */
  timeScale?: number
  /**
   * Compress durations with the clock (default true: the load shape is the trace's). false keeps each job's
   * real duration while arrivals come `timeScale` times closer: the offered load grows by that factor.
   */
  scaleDurations?: boolean
  /**
   * Run on this many nodes instead of the trace's 1,213: node shapes drawn with replacement from the trace's
   * (synthetic.ts `resampleFleet`, fresh ids `n000000…` and places); the owners' work is scaled with it (each
   * owned pod placed ⌊r⌋ or ⌈r⌉ times, r = fleetSize / 1,213, seeded) and packed onto them, so the owners'
   * load per node stays the trace's.
   */
  fleetSize?: number
  /** Workload name for the report. */
  name?: string
}

/** One pod as the trace gives it (times in trace seconds). */
export interface AlibabaPod {
  name: string
  line: number
  gpus: number
  gpuMilli: number
  /** Accepted model slugs ([] = any). */
  models: string[]
  tier: Tier
  creation: number
  scheduled: number
  deletion: number
}

/** The nodes file → the fleet. */
export function parseAlibabaNodes (text: string, opts: Pick<AlibabaOptions, 'seed' | 'places' | 'models'>, source = 'openb_node_list_gpu_node.csv'): FleetNode[] {
  const table = parseCsv(text, source)
  table.require('sn', 'cpu_milli', 'memory_mib', 'gpu', 'model')
  const models = opts.models ?? ALIBABA_MODELS
  const places = new PlaceAssigner(opts.seed, opts.places ?? DEFAULT_PLACES)
  return table.rows.map((row) => {
    const id = table.required(row, 'sn')
    const m = modelOf(table, row, table.required(row, 'model'), models)
    const place = places.placeOf(id)
    return {
      id,
      model: slugOf(m),
      gpuName: m.gpuName,
      gpus: table.number(row, 'gpu', { integer: true, min: 1 }),
      vramMiB: m.vramMiB,
      country: place.country,
      region: place.region,
      cpuMilli: table.number(row, 'cpu_milli', { integer: true, min: 0 }),
      memoryMiB: table.number(row, 'memory_mib', { integer: true, min: 0 })
    }
  })
}

export interface ParsedPods {
  pods: AlibabaPod[]
  dropped: { 'cpu-only': number, 'never-scheduled': number }
  /** The last deletion time in the file (the trace's end), seconds. */
  endS: number
}

/** The pods file → GPU pods that ran (CPU-only and never-scheduled pods counted, not kept). */
export function parseAlibabaPods (text: string, opts: Pick<AlibabaOptions, 'models' | 'tiers'> = {}, source = 'openb_pod_list_default.csv'): ParsedPods {
  const table = parseCsv(text, source)
  table.require('name', 'num_gpu', 'gpu_milli', 'gpu_spec', 'qos', 'creation_time', 'deletion_time', 'scheduled_time')
  const models = opts.models ?? ALIBABA_MODELS
  const tiers = opts.tiers ?? QOS_TIERS
  const pods: AlibabaPod[] = []
  const dropped = { 'cpu-only': 0, 'never-scheduled': 0 }
  let endS = 0
  for (const row of table.rows) {
    const name = table.required(row, 'name')
    const gpus = table.number(row, 'num_gpu', { integer: true, min: 0 })
    const gpuMilli = table.number(row, 'gpu_milli', { integer: true, min: 0, max: 1000 })
    const qos = table.required(row, 'qos')
    const tier = tiers[qos]
    if (tier === undefined) throw table.error('BAD_VALUE', row, 'qos', `unknown QoS ${JSON.stringify(qos)} (known: ${Object.keys(tiers).join(', ')})`)
    const spec = table.text(row, 'gpu_spec') ?? ''
    const accepted = spec === '' || spec === 'nan' ? [] : spec.split('|').map((code) => slugOf(modelOf(table, row, code, models, 'gpu_spec')))
    const creation = table.number(row, 'creation_time', { min: 0 })
    const deletion = table.optionalNumber(row, 'deletion_time', { min: 0 })
    const scheduled = table.optionalNumber(row, 'scheduled_time', { min: 0 })
    if (deletion !== undefined) endS = Math.max(endS, deletion)
    if (gpus === 0) {
      dropped['cpu-only']++
      continue
    }
    if (gpuMilli === 0) throw table.error('OUT_OF_RANGE', row, 'gpu_milli', 'a GPU pod with a 0 GPU share')
    if (scheduled === undefined || deletion === undefined) {
      dropped['never-scheduled']++
      continue
    }
    if (!(deletion > scheduled)) throw table.error('OUT_OF_RANGE', row, 'deletion_time', `deleted at ${deletion}, not after its start ${scheduled}`)
    pods.push({ name, line: row.line, gpus, gpuMilli, models: accepted, tier, creation, scheduled, deletion })
  }
  return { pods, dropped, endS }
}

/** Both files → a workload (fleet, owners' work packed onto it, renters' jobs), with its load summary. */
export function alibabaWorkload (texts: { nodes: string, pods: string }, opts: AlibabaOptions): BuiltWorkload {
  const fraction = opts.renterFraction ?? DEFAULT_RENTER_FRACTION
  if (!(fraction >= 0 && fraction <= 1)) throw new RangeError(`renterFraction must be in [0, 1], got ${fraction}`)
  const scale = opts.timeScale ?? 1
  if (!(Number.isFinite(scale) && scale > 0)) throw new RangeError(`timeScale must be > 0, got ${scale}`)
  const traceFleet = parseAlibabaNodes(texts.nodes, opts)
  const fleet = opts.fleetSize === undefined
    ? traceFleet
    : resampleFleet(new Prng(opts.seed).fork('alibaba:fleet'), traceFleet, opts.fleetSize, opts.places === undefined ? {} : { places: opts.places })
  const parsed = parseAlibabaPods(texts.pods, opts)
  const startS = opts.window?.startS ?? 0
  const endS = opts.window?.endS ?? parsed.endS
  if (!(endS > startS)) throw new RangeError(`window: end ${endS} must be after start ${startS}`)
  const toMs = (s: number): number => Math.round((s - startS) * 1000 / scale)
  const durationScale = opts.scaleDurations === false ? 1 : scale
  const horizonMs = toMs(endS)

  const split = new Prng(opts.seed).fork('alibaba:renters')
  const dropped: Record<DropReason, number> = { ...parsed.dropped, 'outside-window': 0, 'owner-unplaced': 0 }
  const jobs: SimJob[] = []
  const owned: AlibabaPod[] = []
  let censored = 0
  for (const pod of parsed.pods) {
    // One draw per pod, in file order, whatever the window: the split does not move when the window does.
    const renter = split.chance(fraction)
    if (renter) {
      if (pod.creation < startS || pod.creation >= endS) {
        dropped['outside-window']++
        continue
      }
      if (pod.deletion >= parsed.endS) censored++
      jobs.push({
        id: pod.name,
        submitAt: toMs(pod.creation),
        durationMs: Math.max(1, Math.round((pod.deletion - pod.scheduled) * 1000 / durationScale)),
        gpus: pod.gpus,
        gpuMilli: pod.gpuMilli,
        models: pod.models,
        minVramGB: 0,
        tier: pod.tier,
        residency: 'prefer',
        source: `alibaba:${pod.name}`
      })
    } else if (pod.deletion <= startS || pod.scheduled >= endS) {
      dropped['outside-window']++
    } else {
      owned.push(pod)
    }
  }
  // a resized fleet keeps the owners' load per node: each owned pod is placed ⌊r⌋ or ⌈r⌉ times, r = fleet / trace fleet
  const copies = ownerCopies(owned.length, fleet.length / traceFleet.length, new Prng(opts.seed).fork('alibaba:owner-copies'))
  const ownerWork = packOwnerWork(fleet, owned.flatMap((p, i) => {
    const start = toMs(Math.max(p.scheduled, startS))
    const piece = {
      start,
      end: Math.min(horizonMs, start + Math.max(1, Math.round((Math.min(p.deletion, endS) - Math.max(p.scheduled, startS)) * 1000 / durationScale))),
      gpus: p.gpus,
      models: p.models
    }
    return Array.from({ length: copies[i] as number }, (_, k) => ({ ...piece, source: k === 0 ? `alibaba:${p.name}` : `alibaba:${p.name}#${k}` }))
  }))
  dropped['owner-unplaced'] = ownerWork.unplaced
  const name = opts.name ?? `alibaba-2023 openb, ${fleet.length} nodes, ${jobs.length} jobs`
  return buildWorkload({ name, fleet, ownerWork: ownerWork.placed, jobs, horizonMs, dropped, censored })
}

/** How many times each of `n` owned pods is placed for a fleet `ratio` times the trace's: ⌊ratio⌋, plus one with chance ratio − ⌊ratio⌋. */
function ownerCopies (n: number, ratio: number, prng: Prng): number[] {
  const base = Math.floor(ratio)
  const extra = ratio - base
  return Array.from({ length: n }, () => base + (extra > 0 && prng.chance(extra) ? 1 : 0))
}

/** Owner work before it has a node: whole GPUs over [start, end), on a node of one of `models` ([] = any). */
export interface UnplacedWork {
  start: number
  end: number
  gpus: number
  models: readonly string[]
  source?: string
}

/**
 * First-fit: in order of start (then source), each piece goes to the first node, in fleet order, of an
 * accepted model with `gpus` GPUs free over its whole interval. A piece no node has room for is counted in
 * `unplaced`. Never over-commits a node: every placement goes through GpuTimeline.add, which refuses.
 */
export function packOwnerWork (fleet: readonly FleetNode[], work: readonly UnplacedWork[]): { placed: OwnerWork[], unplaced: number } {
  const capacity = new FleetCapacity(fleet)
  const timelines = fleet.map((n) => ({ node: n, t: capacity.timeline(n.id) }))
  const order = [...work].filter((w) => w.end > w.start && w.gpus > 0)
    .sort((a, b) => a.start - b.start || cmp(a.source ?? '', b.source ?? '') || a.end - b.end)
  const placed: OwnerWork[] = []
  let unplaced = work.length - order.length
  for (const w of order) {
    const models = new Set(w.models)
    const hit = timelines.find(({ node, t }) =>
      node.gpus >= w.gpus && (models.size === 0 || models.has(node.model)) &&
      // usedAt is a cheap necessary test (busy at the start = no room); free() then checks the whole interval.
      t.usedAt(w.start) + w.gpus <= node.gpus && t.free(w.start, w.end) >= w.gpus)
    if (hit === undefined) {
      unplaced++
      continue
    }
    hit.t.add(w.start, w.end, w.gpus)
    placed.push({ node: hit.node.id, start: w.start, end: w.end, gpus: w.gpus, ...(w.source === undefined ? {} : { source: w.source }) })
  }
  return { placed, unplaced }
}

function modelOf (table: CsvTable, row: CsvRow, code: string, models: Readonly<Record<string, GpuModel>>, column = 'model'): GpuModel {
  const m = Object.hasOwn(models, code) ? models[code] : undefined
  if (m === undefined) throw table.error('BAD_VALUE', row, column, `unknown GPU model ${JSON.stringify(code)} (known: ${Object.keys(models).join(', ')})`)
  return m
}
