/**
 * The demo's jobs: what the buyer submits (a few of each tier, small real commands, one with an
 * input file, one bronze job that a gold job preempts), how the demo waits for them, and why a
 * provider did not bid (the providers' own pure bid policy, run here on their signed ads).
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ApiClient } from '../node/api/client.js'
import type { FoundProvider } from '../node/discovery.js'
import { buildJobRequest, validateJobSpec } from '../node/market/job-spec.js'
import type { JobView } from '../node/market/views.js'
import { decideBid, formatDuration, formatMicros, isAvailable, nextFreeStart } from '../protocol/index.js'
import { UsageError } from './errors.js'
import { checkInterrupted, sleep, type DemoProvider, type Names } from './demo-network.js'

export const FINAL = new Set(['settled', 'failed', 'cancelled', 'expired'])

export interface DemoJob {
  label: string
  /** What the job shows, one line. */
  shows: string
  /** Spec fields for POST /v1/jobs (node/market/job-spec.ts). */
  spec: Record<string, unknown>
}

const sh = (script: string): string[] => ['/bin/sh', '-c', script]
/** Every demo job: one output file, a short bid window, a runtime cap of two minutes. */
const base = { outputs: ['out.txt'], bidWindowMs: 1500, maxRuntimeSec: 120 }

/** The jobs that run side by side first. `input` is the input file of the silver job. */
export function firstJobs (input: string): DemoJob[] {
  return [
    {
      label: 'gold-h100',
      shows: 'reserved: one H100, up to 3.00 cr/GPU-h',
      spec: { ...base, tier: 'gold', gpus: 1, models: ['h100'], maxPrice: 3, command: sh('echo "gold: one H100 as $CUDA_VISIBLE_DEVICES" > out.txt') }
    },
    {
      label: 'silver-eu-input',
      shows: 'on-demand: ≥ 40 GB in the EU only, with an input file, up to 2.50',
      spec: {
        ...base, tier: 'silver', gpus: 1, minVramGB: 40, regions: ['eu'], residency: 'strict', maxPrice: 2.5,
        inputs: [{ path: 'data/prompts.txt', file: input }], command: sh('tr a-z A-Z < data/prompts.txt > out.txt')
      }
    },
    {
      label: 'silver-any',
      shows: 'on-demand: any GPU, anywhere, up to 2.50',
      spec: { ...base, tier: 'silver', gpus: 1, maxPrice: 2.5, command: sh('echo "silver: cheapest GPU, $CUDA_VISIBLE_DEVICES" > out.txt') }
    },
    {
      label: 'bronze-batch',
      shows: 'preemptible: ≥ 40 GB, up to 1.20',
      spec: { ...base, tier: 'bronze', gpus: 1, minVramGB: 40, maxPrice: 1.2, command: sh('s=0; i=0; while [ $i -lt 1000 ]; do i=$((i+1)); s=$((s+i)); done; echo "bronze: 1+2+…+1000 = $s" > out.txt') }
    }
  ]
}

/**
 * Two 24 GB GPUs for a bronze job that should start within 10 s: provider-4090 is cheapest,
 * provider-l40s the other that fits. Once preempted, the job cannot wait for provider-4090's GPUs.
 */
export const PREEMPTIBLE: DemoJob = {
  label: 'bronze-long',
  shows: 'preemptible: two ≥ 24 GB GPUs for ~10 s, start within 10 s, up to 1.00',
  spec: { ...base, tier: 'bronze', gpus: 2, minVramGB: 24, maxPrice: 1, maxStartDelaySec: 10, command: sh('sleep 10; echo "bronze: finished on $CUDA_VISIBLE_DEVICES" > out.txt') }
}

/** Both RTX 4090s, starting within 5 s: provider-4090 has to preempt the bronze job to take it. */
export const URGENT: DemoJob = {
  label: 'gold-urgent',
  shows: 'reserved: both RTX 4090s, must start within 5 s, up to 2.00',
  spec: { ...base, tier: 'gold', gpus: 2, models: ['4090'], maxPrice: 2, maxStartDelaySec: 5, command: sh('sleep 2; echo "gold: urgent run on $CUDA_VISIBLE_DEVICES" > out.txt') }
}

export async function writeInput (dir: string): Promise<string> {
  const file = join(dir, 'prompts.txt')
  await writeFile(file, 'translate: the cat sat on the mat\nsummarise: gpus are fast\n')
  return file
}

export async function submit (api: ApiClient, job: DemoJob): Promise<string> {
  const { job: id } = await api.post<{ job: string }>('/v1/jobs', {}, { ...job.spec, label: job.label })
  return id
}

/** Poll the job until `done` (default: a final status). */
export async function until (api: ApiClient, id: string, done: (v: JobView) => boolean = (v) => FINAL.has(v.status), timeoutMs = 90_000): Promise<JobView> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    checkInterrupted()
    const view = await api.get<JobView>('/v1/job', { id })
    if (done(view)) return view
    if (FINAL.has(view.status)) throw new UsageError(`job ${view.label ?? id} ended ${view.status} (${view.reason ?? 'no reason'}) before it was expected to`)
    if (Date.now() > deadline) throw new UsageError(`job ${view.label ?? id} is still ${view.status} after ${timeoutMs / 1000} s`)
    await sleep(200)
  }
}

/** Credits with 2–4 decimals. */
export const cr = (micros: number): string => formatMicros(Math.round(micros / 100) * 100)

/**
 * Why `provider` placed no bid in the job's last round: its own bid policy on its signed ad (as if
 * idle), or, when that policy would bid, what else kept it out.
 */
export function whyNoBid (job: DemoJob, view: JobView, found: FoundProvider, spec: DemoProvider, names: Names): string {
  const request = buildJobRequest(validateJobSpec({ ...job.spec }), [], view.submittedAt, new Uint8Array(16))
  const decision = decideBid(request, { ad: found.ad, allocations: [] }, view.submittedAt)
  if (decision.kind === 'bid') {
    const preempted = view.events.some((e) => e.type === 'award' && e.peer === found.peerId) && view.events.some((e) => e.type === 're-auction' && e.text.includes('preempted'))
    if (preempted) return 'busy with the better-paying job it preempted this one for'
    const cheaper = view.bids.filter((b) => b.price < decision.price).length
    return cheaper > 0 ? `would ask ${cr(decision.price)}; held back after ${cheaper} cheaper bid(s) (bid damping)` : 'busy'
  }
  switch (decision.reason) {
    case 'PRICE': return `floor ${cr(found.ad.price.floor)} is above the cap of ${cr(request.sla.maxPrice)}`
    case 'CALENDAR': {
      const open = isAvailable(found.ad.availability, view.submittedAt)
      const next = nextFreeStart(found.ad.availability, view.submittedAt, 60_000, 8 * 24 * 3600_000)
      return `not selling now: open ${(spec.windows ?? []).join(', ')} ${found.ad.availability.timeZone}` +
        (open || next === undefined ? '' : `, opens in ${formatDuration(next - view.submittedAt)}`)
    }
    default: return names.text(decision.detail)
  }
}
