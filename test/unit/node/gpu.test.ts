import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import {
  DEFAULT_DETECT_TIMEOUT_MS, GpuDetectionError, NVIDIA_SMI_ARGS, NVIDIA_SMI_FIELDS, detectGpus, parseNvidiaSmiCsv, readNvidiaSmiCsv, toGpuInfo,
  type DetectedGpu, type GpuDetectionErrorCode
} from '../../../node/gpu/nvidia-smi.js'
import { capabilityKeys, gpuInfo, validatePayload, type CapabilityAd, type GpuInfo } from '../../../protocol/index.js'
import { NOW } from '../../helpers/arbitraries.js'

// dist/test/unit/node → repository root
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')
const FIXTURES = join(ROOT, 'test', 'fixtures', 'nvidia-smi')

async function fixture (name: string): Promise<string> {
  return await readFile(join(FIXTURES, name), 'utf8')
}

/** The GPUs of one machine: every GPU shares model, memory, driver and power cap. */
function machine (name: string, memoryMiB: number, driver: string, powerLimitW: number, rows: Array<[string, number, number?]>, first = 0): DetectedGpu[] {
  return rows.map(([uuid, temperatureC, utilizationPct = 0], i) => ({ index: first + i, uuid, name, memoryMiB, driver, powerLimitW, temperatureC, utilizationPct }))
}

/** Asserts `fn` rejects or throws a GpuDetectionError with `code` (and `line`, when given). */
function isDetectionError (code: GpuDetectionErrorCode, line?: number, message?: RegExp) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof GpuDetectionError, `expected GpuDetectionError, got ${String(err)}`)
    assert.equal(err.code, code, err.message)
    if (line !== undefined) assert.equal(err.line, line, err.message)
    if (message !== undefined) assert.match(err.message, message)
    return true
  }
}

const EXPECTED: Record<string, DetectedGpu[]> = {
  'h100-80gb-hbm3-x8.csv': machine('NVIDIA H100 80GB HBM3', 81559, '565.57.01', 700, [
    ['GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1', 30], ['GPU-7c3cadbd-17e5-0913-f69b-c618122ea0cd', 30],
    ['GPU-2d50cdf6-dd67-9f2e-855e-0d4d6d395a2f', 31], ['GPU-d1838e76-90e6-4408-711d-aeeaa2e1fd14', 29],
    ['GPU-72be6e5d-3c1b-0d37-98ac-d3ef159f2589', 28], ['GPU-52378fbc-3124-3895-13b6-1dd179563e0f', 30],
    ['GPU-83a5aebb-b71c-c570-aa83-185e1233fe97', 29], ['GPU-33135771-a848-ece1-b61e-489e221d663c', 29]
  ]),
  'a100-sxm4-80gb-x4.csv': machine('NVIDIA A100-SXM4-80GB', 81920, '555.42.02', 500, [
    ['GPU-31515c3d-1414-7c2c-004a-f86a898946ac', 25], ['GPU-72d87681-01db-370e-567d-41afcf20fad0', 22],
    ['GPU-62989189-9e1e-ac75-4676-114f14998542', 23], ['GPU-011b2cfe-2b8e-1cb0-19e1-1b764e854dfc', 23]
  ]),
  'a100-sxm4-40gb-x8.csv': machine('NVIDIA A100-SXM4-40GB', 40960, '535.129.03', 400, [
    ['GPU-faae5314-b87e-87c0-400b-b7cfb9e7b310', 22], ['GPU-20af7308-7522-d66f-fe01-fb6f0551a4b9', 22],
    ['GPU-55be19c4-22e1-4622-c7c5-a617a8001574', 21], ['GPU-8029ef2b-47a3-15f7-cca6-5777783049b4', 22],
    ['GPU-a62346e8-6045-319e-845d-0bf10385caaf', 23], ['GPU-926d0f1b-0ac4-e9cb-ec83-520d975c12cf', 22],
    ['GPU-aac22a4c-e9dd-6fb5-46e5-0f14b9374044', 22], ['GPU-1a011247-3834-ff88-6682-d0776a7d7a1e', 22]
  ]),
  'rtx-4090-x8.csv': machine('NVIDIA GeForce RTX 4090', 24564, '550.127.05', 450, [
    ['GPU-8ee5f1e0-e705-aac5-6d6e-b97ad59601ef', 28], ['GPU-a4ac0a07-7668-e715-6e6d-d0dea1c5738b', 27],
    ['GPU-6a54aeb0-27c1-e4c3-33fd-394674fbf918', 26], ['GPU-28895719-adab-e2f7-9416-5b9321ff04aa', 27],
    ['GPU-74e37e99-e298-2478-8866-46035fa6b0cc', 26], ['GPU-0097a8d1-9b40-0267-a960-13fb288944bd', 26],
    ['GPU-13f50fdd-d36e-2c8e-57ac-68634232e19e', 26], ['GPU-78ae265e-d539-389c-f1b8-41b35aa0adb6', 25]
  ]),
  'v100-sxm2-16gb-x8.csv': machine('Tesla V100-SXM2-16GB', 16384, '550.127.05', 300, [
    ['GPU-f3bbf1a0-ec50-caa0-d5ab-180afe8207e3', 37], ['GPU-68acf7f1-73a9-a303-c14a-9615d3bd6511', 40],
    ['GPU-e78e5e57-703c-e44c-ede9-fad2adc312f9', 39], ['GPU-f641830d-c3e5-bdfb-2412-f9270a5d2928', 36],
    ['GPU-a21b8730-c4b2-027e-a677-8646b707cdbc', 38], ['GPU-0eece41c-628e-9354-635e-d195e9df1d69', 39],
    ['GPU-cf868a21-d726-de0a-32f0-6b014e8add85', 38], ['GPU-0af026bd-e04b-42f9-5b83-f1c2badf58ca', 36]
  ]),
  'l4.csv': machine('NVIDIA L4', 23034, '550.90.07', 72, [['GPU-453f8851-d1a3-e72d-4d85-3ef04418205b', 33]]),
  'l40s.csv': machine('NVIDIA L40S', 46068, '550.127.05', 350, [['GPU-1db6b1cf-de5e-b497-caca-1a027578d587', 30]]),
  'tesla-t4.csv': machine('Tesla T4', 15360, '530.30.02', 70, [['GPU-c1d02d08-2915-752a-ef58-a46a0718a45d', 38]]),
  // Current Power Limit : 61.24 W → 61
  'rtx-4070-laptop.csv': machine('NVIDIA GeForce RTX 4070 Laptop GPU', 8188, '566.36', 61, [['GPU-1b724e78-eef5-4163-d43c-e4da15d41176', 42]]),
  'rtx-2080-driver-440.csv': machine('GeForce RTX 2080', 7979, '440.100', 200, [['GPU-22b2c6ac-2d49-4863-197c-9c469071178a', 40, 98]], 1)
}

/** One CSV row as nvidia-smi prints it, from field values. */
function row (fields: Array<string | number>): string {
  return fields.join(', ')
}

/** A minimal capability ad selling `gpus` (DESIGN §4). */
function capabilityAd (gpus: GpuInfo[]): CapabilityAd {
  return {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 3_600_000,
    seq: 1,
    gpus,
    host: { cpuCores: 64, memoryMiB: 512 * 1024, diskGiB: 2000 },
    region: 'eu-west',
    price: { floor: 1_850_000 },
    availability: { timeZone: 'UTC', windows: [{ day: 1, start: 0, end: 1440 }] },
    workloads: ['process'],
    limits: {},
    attestations: [],
    addrs: []
  }
}

const H100_ROW = '0, GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1, NVIDIA H100 80GB HBM3, 81559, 565.57.01, 700.00, 30, 0'

describe('GPU detection: nvidia-smi', () => {
  describe('the query', () => {
    it('asks for exactly the documented columns, CSV without header or units', () => {
      assert.deepEqual([...NVIDIA_SMI_ARGS], [
        '--query-gpu=index,uuid,name,memory.total,driver_version,power.limit,temperature.gpu,utilization.gpu',
        '--format=csv,noheader,nounits'
      ])
      assert.equal(NVIDIA_SMI_FIELDS.length, 8)
      assert.equal(DEFAULT_DETECT_TIMEOUT_MS, 10_000)
    })
  })

  describe('parseNvidiaSmiCsv on real machines', () => {
    for (const [name, expected] of Object.entries(EXPECTED)) {
      it(`reads ${name} exactly`, async () => {
        assert.deepEqual(parseNvidiaSmiCsv(await fixture(name)), expected)
      })
    }

    it('reports memory.total in MiB as the driver does, below the marketed size', () => {
      const first = (name: string): number | undefined => (EXPECTED[name]?.[0] as DetectedGpu).memoryMiB
      assert.equal(first('h100-80gb-hbm3-x8.csv'), 81559)
      assert.equal(first('a100-sxm4-40gb-x8.csv'), 40960)
      assert.equal(first('tesla-t4.csv'), 15360)
      assert.equal(first('rtx-4090-x8.csv'), 24564)
    })

    it('reads the same rows with CRLF line ends, padding and blank lines', async () => {
      const text = await fixture('a100-sxm4-80gb-x4.csv')
      const messy = '\r\n' + text.trimEnd().split('\n').map((l) => `  ${l.replace(/, /g, ' ,   ')}  `).join('\r\n') + '\r\n\r\n   \r\n'
      assert.deepEqual(parseNvidiaSmiCsv(messy), EXPECTED['a100-sxm4-80gb-x4.csv'])
    })
  })

  describe('parseNvidiaSmiCsv edge cases', () => {
    it('returns [] for no output at all', () => {
      assert.deepEqual(parseNvidiaSmiCsv(''), [])
      assert.deepEqual(parseNvidiaSmiCsv('\n\n  \r\n'), [])
    })

    it('leaves optional fields undefined for every placeholder nvidia-smi prints', () => {
      for (const na of ['[N/A]', '[Not Supported]', '[Unknown Error]', 'N/A', '[Insufficient Permissions]']) {
        const [gpu] = parseNvidiaSmiCsv(row([0, 'GPU-1db6b1cf-de5e-b497-caca-1a027578d587', 'NVIDIA L40S', 46068, '550.127.05', na, na, na]))
        assert.deepEqual(gpu, { index: 0, uuid: 'GPU-1db6b1cf-de5e-b497-caca-1a027578d587', name: 'NVIDIA L40S', memoryMiB: 46068, driver: '550.127.05' }, na)
        assert.ok(gpu !== undefined && !('powerLimitW' in gpu) && !('temperatureC' in gpu) && !('utilizationPct' in gpu), na)
      }
    })

    it('rounds fractional power limits to whole watts', () => {
      for (const [limit, watts] of [['700.00', 700], ['61.24', 61], ['72.5', 73], ['149.99', 150]] as const) {
        assert.equal(parseNvidiaSmiCsv(H100_ROW.replace('700.00', limit))[0]?.powerLimitW, watts, limit)
      }
    })

    it('rejects a missing required field, naming field and line', () => {
      const cases: Array<[number, string]> = [[0, 'index'], [1, 'uuid'], [2, 'name'], [4, 'driver_version']]
      for (const [column, field] of cases) {
        for (const na of ['[N/A]', 'N/A', '']) {
          const fields = H100_ROW.split(', ')
          fields[column] = na
          const text = `${H100_ROW}\n\n${fields.join(', ')}\n`
          assert.throws(() => parseNvidiaSmiCsv(text), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 3, new RegExp(`line 3: ${field.replace('.', '\\.')} is`)))
        }
      }
    })

    it('keeps a unified-memory GPU that reports no memory.total, its memory unknown (GB10, DGX Spark)', async () => {
      const [gb10] = parseNvidiaSmiCsv(await fixture('gb10-dgx-spark.csv'))
      assert.deepEqual(gb10, { index: 0, uuid: 'GPU-2dee1e25-b3b5-007e-2b55-79f2d0f2ebe5', name: 'NVIDIA GB10', driver: '580.126.09', temperatureC: 36, utilizationPct: 0 })
      for (const na of ['[N/A]', '[Not Supported]', 'N/A', '']) {
        const [gpu] = parseNvidiaSmiCsv(H100_ROW.replace('81559', na))
        assert.ok(gpu !== undefined && !('memoryMiB' in gpu), na)
      }
      // never guessed: unknown VRAM is 0 in the ad, which claims no VRAM bucket
      const info = toGpuInfo(gb10 as DetectedGpu)
      assert.equal(info.vramMiB, 0)
      assert.ok(gpuInfo.safeParse(info).success)
      assert.deepEqual(capabilityKeys({ gpus: [info], region: 'eu' }).filter((k) => /^(vram|market)\//.test(k)), [])
      // unless the owner declares it, by UUID or by index; a reported size always wins
      assert.equal(toGpuInfo(gb10 as DetectedGpu, { 'GPU-2dee1e25-b3b5-007e-2b55-79f2d0f2ebe5': 122_880 }).vramMiB, 122_880)
      assert.equal(toGpuInfo(gb10 as DetectedGpu, { 0: 122_880 }).vramMiB, 122_880)
      assert.equal(toGpuInfo(gb10 as DetectedGpu, { 1: 122_880 }).vramMiB, 0)
      assert.ok(capabilityKeys({ gpus: [toGpuInfo(gb10 as DetectedGpu, { 0: 122_880 })], region: 'eu' }).includes('vram/96'))
      assert.equal(toGpuInfo((EXPECTED['l4.csv'] as DetectedGpu[])[0] as DetectedGpu, { 0: 1 }).vramMiB, 23034)
    })

    it('keeps the GPUs on readable lines and names each unreadable line', async () => {
      const { gpus, skipped } = readNvidiaSmiCsv(await fixture('h100-x8-not-supported-and-truncated.csv'))
      const all = EXPECTED['h100-80gb-hbm3-x8.csv'] as DetectedGpu[]
      // line 3: memory [Not Supported] → kept with memory unknown; line 6: cut off → skipped, the other 7 kept
      assert.deepEqual(gpus.map((g) => g.index), [0, 1, 2, 3, 4, 6, 7])
      const { memoryMiB: _, ...withoutMemory } = all[2] as DetectedGpu
      assert.deepEqual(gpus[2], withoutMemory)
      assert.deepEqual(gpus.filter((g) => g.index !== 2), all.filter((g) => g.index !== 2 && g.index !== 5))
      assert.deepEqual(skipped.map((e) => [e.code, e.line]), [['NVIDIA_SMI_UNPARSEABLE', 6]])
      assert.match(skipped[0]?.message ?? '', /line 6: expected 8 comma-separated fields/)
      // a repeated GPU is skipped too, the first one kept
      const twice = readNvidiaSmiCsv(`${H100_ROW}\n${H100_ROW.replace(/^0/, '1')}\n`)
      assert.equal(twice.gpus.length, 1)
      assert.deepEqual(twice.skipped.map((e) => e.line), [2])
      // every line bad: nothing kept, each line named
      const none = readNvidiaSmiCsv('garbled\n\nalso, garbled\n')
      assert.deepEqual([none.gpus, none.skipped.map((e) => e.line)], [[], [1, 3]])
    })

    it('rejects a line with the wrong number of fields, naming its line number', async () => {
      const text = `${H100_ROW}\r\n${H100_ROW.replace('GPU-b42d', 'GPU-c42d').replace(/^0/, '1')}\r\n\r\n1, GPU-x, NVIDIA H100, 81559\r\n`
      assert.throws(() => parseNvidiaSmiCsv(text), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 4, /line 4: expected 8 comma-separated fields .* found 4/))
      assert.throws(() => parseNvidiaSmiCsv(`${H100_ROW}, 12`), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1, /found 9/))
      // a GPU name containing a comma would shift every column: refused, not misread
      assert.throws(() => parseNvidiaSmiCsv(H100_ROW.replace('NVIDIA H100 80GB HBM3', 'NVIDIA H100, 80GB')), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1, /found 9/))
    })

    it('rejects real output that is not the answer to this query', async () => {
      const other = await fixture('t4-other-query-with-header.txt')
      assert.throws(() => parseNvidiaSmiCsv(other), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1, /found 5/))
      for (const name of ['table-instead-of-csv.txt', 'driver-not-loaded.txt', 'nvml-version-mismatch.txt', 'garbage.txt']) {
        const text = await fixture(name)
        assert.throws(() => parseNvidiaSmiCsv(text), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1), name)
      }
      // the same rows with units (a query without `nounits`)
      assert.throws(() => parseNvidiaSmiCsv(H100_ROW.replace('81559', '81559 MiB')), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1, /memory\.total is "81559 MiB"/))
      assert.throws(() => parseNvidiaSmiCsv(H100_ROW.replace('700.00', '700.00 W')), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1, /power\.limit/))
    })

    it('rejects malformed values in every column', () => {
      const bad: Array<[number, string, RegExp]> = [
        [0, '-1', /index/], [0, '1.5', /index/], [0, '64', /index is "64", expected a whole number up to 63/],
        [1, 'GPU 1', /uuid/], [2, '---', /name/], [3, '8e4', /memory\.total/], [4, '550 90', /driver_version/],
        [5, 'lots', /power\.limit/], [6, 'hot', /temperature\.gpu/], [7, '101', /utilization\.gpu/], [7, '50.5', /utilization\.gpu/]
      ]
      for (const [column, value, message] of bad) {
        const fields = H100_ROW.split(', ')
        fields[column] = value
        assert.throws(() => parseNvidiaSmiCsv(fields.join(', ')), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1, message), value)
      }
    })

    it('rejects two GPUs with the same index or UUID', () => {
      assert.throws(() => parseNvidiaSmiCsv(`${H100_ROW}\n${H100_ROW.replace('GPU-b42d', 'GPU-c42d')}`), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 2, /index 0 appears twice/))
      assert.throws(() => parseNvidiaSmiCsv(`${H100_ROW}\n${H100_ROW.replace(/^0/, '1')}`), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 2, /appears twice/))
    })

    it('accepts a negative temperature and rounds a fractional one', () => {
      assert.equal(parseNvidiaSmiCsv(H100_ROW.replace(', 30, 0', ', -5, 0'))[0]?.temperatureC, -5)
      assert.equal(parseNvidiaSmiCsv(H100_ROW.replace(', 30, 0', ', 41.6, 0'))[0]?.temperatureC, 42)
    })

    it('never throws anything but GpuDetectionError(NVIDIA_SMI_UNPARSEABLE), whatever the text', () => {
      const pieces = fc.constantFrom(', ', ',', '\n', '\r\n', '[N/A]', 'N/A', '0', '81559', '700.00', 'GPU-ab12', 'NVIDIA H100', ' ', '', '-', '.', '[')
      const text = fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 60, unit: 'grapheme' }),
        fc.array(pieces, { maxLength: 40 }).map((p) => p.join('')),
        fc.array(fc.array(pieces, { minLength: 8, maxLength: 8 }).map((p) => p.join(', ')), { maxLength: 4 }).map((rows) => rows.join('\n'))
      )
      fc.assert(fc.property(text, (input) => {
        try {
          const gpus = parseNvidiaSmiCsv(input)
          for (const gpu of gpus) assert.ok(gpuInfo.safeParse(toGpuInfo(gpu)).success, JSON.stringify(gpu))
        } catch (err) {
          return err instanceof GpuDetectionError && err.code === 'NVIDIA_SMI_UNPARSEABLE' && Number.isInteger(err.line)
        }
        return true
      }), { numRuns: 2000 })
    })

    it('reads back every GPU it could be given (round trip)', () => {
      const detected = fc.record({
        index: fc.integer({ min: 0, max: 63 }),
        uuid: fc.stringMatching(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        name: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ()-]{0,40}[A-Za-z0-9)]$/),
        memoryMiB: fc.integer({ min: 0, max: 1 << 22 }),
        driver: fc.stringMatching(/^\d{3}\.\d{1,3}(\.\d{2})?$/),
        powerLimitW: fc.option(fc.integer({ min: 0, max: 2000 }), { nil: undefined }),
        temperatureC: fc.option(fc.integer({ min: -40, max: 120 }), { nil: undefined }),
        utilizationPct: fc.option(fc.integer({ min: 0, max: 100 }), { nil: undefined })
      })
      const machines = fc.uniqueArray(detected, { maxLength: 8, selector: (g) => g.index })
        .filter((gpus) => new Set(gpus.map((g) => g.uuid)).size === gpus.length)
      fc.assert(fc.property(machines, (gpus) => {
        const text = gpus.map((g) => row([g.index, g.uuid, g.name, g.memoryMiB, g.driver,
          g.powerLimitW === undefined ? '[N/A]' : g.powerLimitW.toFixed(2), g.temperatureC ?? '[Not Supported]', g.utilizationPct ?? 'N/A'])).join('\n')
        const expected = gpus.map((g) => Object.fromEntries(Object.entries(g).filter(([, v]) => v !== undefined)))
        assert.deepEqual(parseNvidiaSmiCsv(text), expected)
      }))
    })
  })

  describe('toGpuInfo', () => {
    it('maps a detected GPU to a detected GpuInfo', () => {
      const [gpu] = EXPECTED['h100-80gb-hbm3-x8.csv'] as DetectedGpu[]
      assert.deepEqual(toGpuInfo(gpu as DetectedGpu), {
        index: 0,
        uuid: 'GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1',
        name: 'NVIDIA H100 80GB HBM3',
        model: 'nvidia-h100-80gb-hbm3',
        vramMiB: 81559,
        driver: '565.57.01',
        powerLimitW: 700,
        provenance: 'detected'
      })
    })

    it('omits a power limit the driver did not report', () => {
      const [gpu] = parseNvidiaSmiCsv(H100_ROW.replace('700.00', '[N/A]'))
      assert.ok(!('powerLimitW' in toGpuInfo(gpu as DetectedGpu)))
    })

    it('gives capability ads that validate, for every fixture', () => {
      for (const [name, gpus] of Object.entries(EXPECTED)) {
        const infos = gpus.map((g) => toGpuInfo(g))
        for (const info of infos) assert.ok(gpuInfo.safeParse(info).success, `${name}: ${info.uuid}`)
        assert.deepEqual(validatePayload('capability-ad', capabilityAd(infos)).gpus, infos, name)
      }
    })

    it('slugs the models the way the market keys them', () => {
      const models = Object.values(EXPECTED).map((gpus) => toGpuInfo(gpus[0] as DetectedGpu).model)
      assert.deepEqual(models, [
        'nvidia-h100-80gb-hbm3', 'nvidia-a100-sxm4-80gb', 'nvidia-a100-sxm4-40gb', 'nvidia-geforce-rtx-4090', 'tesla-v100-sxm2-16gb',
        'nvidia-l4', 'nvidia-l40s', 'tesla-t4', 'nvidia-geforce-rtx-4070-laptop-gpu', 'geforce-rtx-2080'
      ])
    })
  })

  describe('detectGpus through a real child process', function () {
    this.timeout(20_000)
    let dir: string

    before(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-nvidia-smi-')) })
    after(async () => { await rm(dir, { recursive: true, force: true }) })

    /** An executable `#!/bin/sh` script in the temp dir; returns its path. */
    async function fakeSmi (name: string, body: string): Promise<string> {
      const path = join(dir, name)
      await writeFile(path, `#!/bin/sh\n${body}\n`)
      await chmod(path, 0o755)
      return path
    }

    /** A fake nvidia-smi that prints a fixture on stdout and exits with `code`. */
    async function printing (fixtureName: string, code = 0, stream: 'stdout' | 'stderr' = 'stdout'): Promise<string> {
      return await fakeSmi(`${fixtureName}-${code}-${stream}`, `cat '${join(FIXTURES, fixtureName)}'${stream === 'stderr' ? ' >&2' : ''}\nexit ${code}`)
    }

    it('passes exactly the query arguments, no shell', async () => {
      const argsFile = join(dir, 'args.txt')
      const cmd = await fakeSmi('echo-args', `for a in "$@"; do printf '%s\\n' "$a" >> '${argsFile}'; done\ncat '${join(FIXTURES, 'l4.csv')}'`)
      assert.deepEqual(await detectGpus({ command: cmd }), { gpus: EXPECTED['l4.csv'], skipped: [] })
      assert.deepEqual((await readFile(argsFile, 'utf8')).trimEnd().split('\n'), [...NVIDIA_SMI_ARGS])
    })

    it('returns the GPUs of a multi-GPU machine', async () => {
      assert.deepEqual(await detectGpus({ command: await printing('h100-80gb-hbm3-x8.csv') }), { gpus: EXPECTED['h100-80gb-hbm3-x8.csv'], skipped: [] })
    })

    it('maps a missing binary to NVIDIA_SMI_MISSING with advice', async () => {
      await assert.rejects(detectGpus({ command: join(dir, 'no-such-nvidia-smi') }),
        isDetectionError('NVIDIA_SMI_MISSING', undefined, /was not found, so this machine has no NVIDIA driver or it is not on PATH\. Declare GPUs in the config/))
    })

    it('maps "driver not loaded" (exit 9) to NVIDIA_SMI_FAILED quoting nvidia-smi, from stderr or stdout', async () => {
      const said = /exited with code 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\. Make sure that the latest NVIDIA driver is installed and running\. Declare GPUs/
      await assert.rejects(detectGpus({ command: await printing('driver-not-loaded.txt', 9, 'stderr') }), isDetectionError('NVIDIA_SMI_FAILED', undefined, said))
      await assert.rejects(detectGpus({ command: await printing('driver-not-loaded.txt', 9, 'stdout') }), isDetectionError('NVIDIA_SMI_FAILED', undefined, said))
    })

    it('quotes the first line of stderr for other failures', async () => {
      await assert.rejects(detectGpus({ command: await printing('nvml-version-mismatch.txt', 18, 'stderr') }),
        isDetectionError('NVIDIA_SMI_FAILED', undefined, /exited with code 18: Failed to initialize NVML: Driver\/library version mismatch\. /))
      const cmd = await fakeSmi('stderr-and-stdout', `echo 'partial, output'\necho 'Unable to determine the device handle for GPU0000:41:00.0: Unknown Error' >&2\nexit 15`)
      await assert.rejects(detectGpus({ command: cmd }), isDetectionError('NVIDIA_SMI_FAILED', undefined, /code 15: Unable to determine the device handle/))
      await assert.rejects(detectGpus({ command: await fakeSmi('silent-fail', 'exit 3') }), isDetectionError('NVIDIA_SMI_FAILED', undefined, /exited with code 3\. Declare/))
    })

    it('returns [] when nvidia-smi finds no GPU', async () => {
      assert.deepEqual(await detectGpus({ command: await printing('no-devices.txt', 6) }), { gpus: [], skipped: [] })
      assert.deepEqual(await detectGpus({ command: await fakeSmi('empty', 'exit 0') }), { gpus: [], skipped: [] })
    })

    it('maps a hang to NVIDIA_SMI_TIMEOUT, promptly', async () => {
      const cmd = await fakeSmi('hang', 'exec sleep 30')
      const started = Date.now()
      await assert.rejects(detectGpus({ command: cmd, timeoutMs: 300 }), isDetectionError('NVIDIA_SMI_TIMEOUT', undefined, /did not answer within 300 ms.*Declare GPUs/))
      assert.ok(Date.now() - started < 5_000)
    })

    it('times out even when a grandchild keeps the output pipe open', async () => {
      const cmd = await fakeSmi('hang-grandchild', 'sleep 3 &\nsleep 3')
      const started = Date.now()
      await assert.rejects(detectGpus({ command: cmd, timeoutMs: 300 }), isDetectionError('NVIDIA_SMI_TIMEOUT'))
      assert.ok(Date.now() - started < 5_000)
    })

    it('maps unreadable output to NVIDIA_SMI_UNPARSEABLE with the line number', async () => {
      await assert.rejects(detectGpus({ command: await printing('garbage.txt') }), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1))
      await assert.rejects(detectGpus({ command: await printing('table-instead-of-csv.txt') }), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1))
      // nvidia-smi that exits 0 but says it failed
      await assert.rejects(detectGpus({ command: await printing('driver-not-loaded.txt') }), isDetectionError('NVIDIA_SMI_UNPARSEABLE', 1))
    })

    it('returns the readable GPUs with the skipped lines when some lines cannot be read', async () => {
      const detection = await detectGpus({ command: await printing('h100-x8-not-supported-and-truncated.csv') })
      assert.deepEqual(detection.gpus.map((g) => g.index), [0, 1, 2, 3, 4, 6, 7])
      assert.deepEqual(detection.skipped.map((e) => e.line), [6])
    })

    it('maps runaway output to NVIDIA_SMI_UNPARSEABLE', async () => {
      const cmd = await fakeSmi('flood', `i=0; while [ $i -lt 40000 ]; do echo '${H100_ROW}'; i=$((i+1)); done`)
      await assert.rejects(detectGpus({ command: cmd }), isDetectionError('NVIDIA_SMI_UNPARSEABLE', undefined, /more than 1048576 bytes/))
    })

    it('maps a non-executable file to NVIDIA_SMI_FAILED', async () => {
      const path = join(dir, 'not-executable')
      await writeFile(path, '#!/bin/sh\nexit 0\n')
      await assert.rejects(detectGpus({ command: path }), isDetectionError('NVIDIA_SMI_FAILED', undefined, /could not be run \(EACCES\)/))
    })

    it('maps cancellation through the signal to NVIDIA_SMI_FAILED', async () => {
      const early = new AbortController()
      early.abort()
      await assert.rejects(detectGpus({ command: await printing('l4.csv'), signal: early.signal }), isDetectionError('NVIDIA_SMI_FAILED', undefined, /cancelled/))
      const during = new AbortController()
      const pending = detectGpus({ command: await fakeSmi('slow', 'exec sleep 30'), signal: during.signal })
      setTimeout(() => during.abort(), 100)
      await assert.rejects(pending, isDetectionError('NVIDIA_SMI_FAILED', undefined, /cancelled/))
    })
  })
})
