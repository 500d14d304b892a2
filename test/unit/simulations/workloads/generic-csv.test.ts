/**
 * simulations/workloads/generic-csv.ts: the documented job CSV, its column mapping (so another trace loads
 * without code — here the Alibaba pods file itself), and a typed error with line and column per bad row.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseAlibabaPods } from '../../../../simulations/workloads/alibaba.js'
import { CsvValueError, type CsvValueErrorCode } from '../../../../simulations/workloads/csv.js'
import { type JobCsvOptions, parseJobCsv } from '../../../../simulations/workloads/generic-csv.js'

const PODS = readFileSync(fileURLToPath(new URL('../../../../../simulations/data/traces/alibaba-gpu-2023/openb_pod_list_default.csv', import.meta.url)), 'utf8')

const HEADER = 'id,submit_s,duration_s,gpus,gpu_milli,models,vram_gb,tier,region,residency,max_price\n'

function bad (text: string, code: CsvValueErrorCode, line: number, column: string, opts: JobCsvOptions = {}): void {
  assert.throws(() => parseJobCsv(text, { source: 'j.csv', ...opts }), (e: unknown) => {
    assert.ok(e instanceof CsvValueError, String(e))
    assert.deepEqual([e.code, e.line, e.column], [code, line, column], e.message)
    return true
  })
}

describe('simulations/workloads: generic job CSV', () => {
  it('reads the documented format, every column, with defaults for the optional ones', () => {
    const text = HEADER +
      'a,0,3600,2,1000,nvidia-tesla-t4|a100-80gb,16,gold,eu-west,strict,2500000\n' +
      ',1.5,60,1,,,,,,,\n'
    const { jobs, cpuOnly } = parseJobCsv(text, { source: 'j.csv' })
    assert.equal(cpuOnly, 0)
    assert.deepEqual(jobs[0], {
      id: 'a', submitAt: 0, durationMs: 3_600_000, gpus: 2, gpuMilli: 1000, models: ['nvidia-tesla-t4', 'a100-80gb'], minVramGB: 16,
      tier: 'gold', region: 'eu-west', residency: 'strict', maxPrice: 2_500_000, source: 'csv:j.csv:2'
    })
    assert.deepEqual(jobs[1], {
      id: 'j.csv:3', submitAt: 1500, durationMs: 60_000, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer', source: 'csv:j.csv:3'
    })
    // Only the three required columns.
    const min = parseJobCsv('submit_s,duration_s,gpus\n10,1,1\n20,2,0\n')
    assert.equal(min.jobs.length, 1)
    assert.equal(min.cpuOnly, 1, 'a 0-GPU row is counted and left out')
  })

  it('loads another trace through a mapping alone: the Alibaba pods file', () => {
    const { jobs, cpuOnly } = parseJobCsv(PODS.split('\n').filter((l) => !l.endsWith(',')).join('\n'), {
      source: 'openb',
      mapping: {
        id: 'name',
        submitAt: { column: 'creation_time', unit: 's' },
        durationMs: { column: 'deletion_time', minus: 'scheduled_time', unit: 's' },
        gpus: 'num_gpu',
        gpuMilli: 'gpu_milli',
        tier: { column: 'qos', values: { LS: 'gold', Guaranteed: 'gold', Burstable: 'silver', BE: 'bronze' } },
        models: 'gpu_spec'
      }
    })
    // The same pods the dedicated loader keeps (rows with no scheduled time were filtered out above).
    const loader = parseAlibabaPods(PODS)
    assert.equal(jobs.length, loader.pods.length)
    assert.equal(cpuOnly, 1088 - 36, 'CPU-only pods that were scheduled')
    const byName = new Map(loader.pods.map((p) => [p.name, p]))
    for (const j of jobs) {
      const p = byName.get(j.id)
      assert.ok(p !== undefined)
      assert.equal(j.submitAt, p.creation * 1000)
      assert.equal(j.durationMs, (p.deletion - p.scheduled) * 1000)
      assert.equal(j.tier, p.tier)
      assert.equal(j.gpuMilli, p.gpuMilli)
    }
  })

  it('converts units and rebases epoch timestamps to the first job', () => {
    const text = 'start,len_min,n\n1700000060,2,1\n1700000000,0.5,1\n'
    const { jobs } = parseJobCsv(text, { mapping: { submitAt: 'start', durationMs: { column: 'len_min', unit: 'min' }, gpus: 'n' }, rebase: true })
    assert.deepEqual(jobs.map((j) => [j.submitAt, j.durationMs]), [[60_000, 120_000], [0, 30_000]])
    const ms = parseJobCsv('t,d,g\n5,7,1\n', { mapping: { submitAt: { column: 't', unit: 'ms' }, durationMs: { column: 'd', unit: 'h' }, gpus: 'g' } })
    assert.deepEqual([ms.jobs[0]?.submitAt, ms.jobs[0]?.durationMs], [5, 7 * 3_600_000])
  })

  it('names the line and column of each bad value', () => {
    bad(HEADER + 'a,0,60,1,,,,,,,\nb,x,60,1,,,,,,,\n', 'NOT_A_NUMBER', 3, 'submit_s')
    bad(HEADER + 'a,0,0,1,,,,,,,\n', 'OUT_OF_RANGE', 2, 'duration_s')
    bad(HEADER + 'a,0,60,1.5,,,,,,,\n', 'OUT_OF_RANGE', 2, 'gpus')
    bad(HEADER + 'a,0,60,1,1001,,,,,,\n', 'OUT_OF_RANGE', 2, 'gpu_milli')
    bad(HEADER + 'a,0,60,1,0,,,,,,\n', 'OUT_OF_RANGE', 2, 'gpu_milli')
    bad(HEADER + 'a,0,60,1,,,,,,,\n', 'OUT_OF_RANGE', 2, 'gpu_milli', { mapping: { gpuMilli: { column: 'gpu_milli', default: '0' } } })
    bad(HEADER + 'a,0,60,1,,,,platinum,,,\n', 'BAD_VALUE', 2, 'tier')
    bad(HEADER + 'a,0,60,1,,,,,EU West,,\n', 'BAD_VALUE', 2, 'region')
    bad(HEADER + 'a,0,60,1,,,,,,maybe,\n', 'BAD_VALUE', 2, 'residency')
    bad(HEADER + 'a,0,60,1,,Tesla T4,,,,,\n', 'BAD_VALUE', 2, 'models')
    bad(HEADER + 'a,0,60,1,,,-1,,,,\n', 'OUT_OF_RANGE', 2, 'vram_gb')
    bad(HEADER + 'a,0,60,,,,,,,,\n', 'EMPTY', 2, 'gpus')
    bad('submit_s,gpus\n0,1\n', 'MISSING_COLUMN', 0, 'duration_s')
    bad('t,d,g,q\n0,1,1,XX\n', 'BAD_VALUE', 2, 'q', { mapping: { submitAt: 't', durationMs: 'd', gpus: 'g', tier: { column: 'q', values: { LS: 'gold' } } } })
    bad('t,d,g\n0,1,1\n', 'MISSING_COLUMN', 0, 'q', { mapping: { submitAt: 't', durationMs: 'd', gpus: 'g', tier: 'q' } })
    assert.throws(() => parseJobCsv('t\n', { mapping: { submitAt: { column: 't', unit: 'days' as never } } }), RangeError)
    assert.throws(() => parseJobCsv('t\n', { mapping: { submit: 't' } as never }), /unknown field "submit"/)
  })
})
