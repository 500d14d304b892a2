import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { ConfigError, envLayers, loadConfig, mergeLayers, resolveConfig } from '../../../node/config/load.js'
import { parseWindow, parseWindows, WindowSyntaxError } from '../../../node/config/windows.js'
import { buildCapabilityAd, declaredGpuInfos } from '../../../node/capability-ad.js'
import { validatePayload } from '../../../protocol/index.js'

function configError (fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err))
    return err
  }
  assert.fail('accepted')
}

describe('node configuration', () => {
  it('runs on embedded defaults alone: random ports, no bootstrap peers, selling all week', () => {
    const config = resolveConfig([])
    assert.deepEqual(config.listen, ['/ip4/0.0.0.0/tcp/0', '/ip4/0.0.0.0/tcp/0/ws'])
    assert.deepEqual(config.bootstrap, [])
    assert.equal(config.api.host, '127.0.0.1')
    assert.equal(config.provider.sell, true)
    assert.deepEqual(parseWindows(config.provider.availability.windows), [1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 })))
  })

  it('layers: defaults < config.json < env < flags, arrays replaced, objects merged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-config-'))
    try {
      await writeFile(join(dir, 'config.json'), JSON.stringify({ provider: { region: 'eu', priceFloor: 1.5 }, listen: ['/ip4/127.0.0.1/tcp/4001'] }))
      const config = await loadConfig(dir, {
        env: { GPUMESH_REGION: 'eu-west', GPUMESH_GPUS: 'NVIDIA L4:23034x2; Tesla T4:15360', UNRELATED: 'x' },
        flags: [{ source: 'flag --price-floor', values: { provider: { priceFloor: 0.9 } } }]
      })
      assert.equal(config.provider.region, 'eu-west')
      assert.equal(config.provider.priceFloor, 0.9)
      assert.deepEqual(config.listen, ['/ip4/127.0.0.1/tcp/4001'])
      assert.deepEqual(config.provider.gpus, [{ name: 'NVIDIA L4', vramMiB: 23034, count: 2 }, { name: 'Tesla T4', vramMiB: 15360, count: 1 }])
      assert.equal(config.provider.workloads.length, 2) // default kept beside the overrides
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('names every bad field and the source of its value', () => {
    const err = configError(() => resolveConfig([
      { source: '/data/config.json', values: { provider: { priceFloor: 'cheap', availability: { timeZone: 'Mars/Olympus' } }, bootstrap: ['/ip4/1.2.3.4/tcp/1'] } },
      ...envLayers({ GPUMESH_API_PORT: '99999', GPUMESH_SELL: 'perhaps' })
    ]))
    const byField = new Map(err.issues.map((i) => [i.field, i]))
    assert.equal(byField.get('provider.priceFloor')?.source, '/data/config.json')
    assert.match(byField.get('provider.availability.timeZone')?.message ?? '', /IANA time zone/)
    assert.match(byField.get('bootstrap.0')?.message ?? '', /\/p2p\//)
    assert.equal(byField.get('api.port')?.source, 'GPUMESH_API_PORT')
    assert.equal(byField.get('provider.sell')?.source, 'GPUMESH_SELL')
  })

  it('takes provider.minRequesterTrust in 0..1, by default 0.45 (below a stranger\'s 0.5), and names a bad one', () => {
    assert.equal(resolveConfig([]).provider.minRequesterTrust, 0.45)
    for (const ok of [0, 1, 0.6]) assert.equal(resolveConfig([{ source: 'config.json', values: { provider: { minRequesterTrust: ok } } }]).provider.minRequesterTrust, ok)
    for (const bad of [-0.01, 1.01, 'high']) {
      const err = configError(() => resolveConfig([{ source: 'config.json', values: { provider: { minRequesterTrust: bad } } }]))
      assert.equal(err.issues[0]?.field, 'provider.minRequesterTrust')
      assert.equal(err.issues[0]?.source, 'config.json')
    }
  })

  it('takes provider.inputCacheMiB as whole MiB ≥ 0, by default 10240, and names a bad one', () => {
    assert.equal(resolveConfig([]).provider.inputCacheMiB, 10_240)
    for (const ok of [0, 1, 512]) assert.equal(resolveConfig([{ source: 'config.json', values: { provider: { inputCacheMiB: ok } } }]).provider.inputCacheMiB, ok)
    for (const bad of [-1, 1.5, 'lots']) {
      const err = configError(() => resolveConfig([{ source: 'config.json', values: { provider: { inputCacheMiB: bad } } }]))
      assert.equal(err.issues[0]?.field, 'provider.inputCacheMiB')
    }
  })

  it('refuses unknown settings, at any depth', () => {
    const err = configError(() => resolveConfig([{ source: 'config.json', values: { dht: { mod: 'server' } } }]))
    assert.equal(err.issues[0]?.field, 'dht.mod')
    assert.match(err.issues[0]?.message ?? '', /unknown setting/)
  })

  it('blames an unknown section on the file that has it, one issue per unknown key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-config-'))
    try {
      const file = join(dir, 'config.json')
      await writeFile(file, JSON.stringify({ provder: { region: 'eu' }, lisen: [], provider: { regoin: 'eu' } }))
      const err = await loadConfig(dir, { env: {} }).then(() => assert.fail('accepted'), (e: unknown) => e as ConfigError)
      assert.ok(err instanceof ConfigError)
      assert.deepEqual(err.issues.map((i) => [i.field, i.message, i.source]).sort(), [
        ['lisen', 'unknown setting', file], ['provder', 'unknown setting', file], ['provider.regoin', 'unknown setting', file]
      ])
      assert.doesNotMatch(err.message, /from defaults/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('gives a JSON syntax error as line and column, with the line quoted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-config-'))
    try {
      const cases: Array<[string, RegExp]> = [
        ['{\n  "provider": {\n    "region": "eu"\n    "priceFloor": 1\n  }\n}\n', /not valid JSON: line 4, column 5: Expected ',' or '}' after property value \(at "\\"priceFloor\\": 1"\)/],
        ['{"a": 1,}', /not valid JSON: line 1, column 9: Expected double-quoted property name/],
        ['{\n"a": 1', /not valid JSON: line 2, column 7: /]
      ]
      for (const [text, expected] of cases) {
        await writeFile(join(dir, 'config.json'), text)
        await assert.rejects(loadConfig(dir, { env: {} }), (err: unknown) => {
          assert.ok(err instanceof ConfigError)
          assert.match(err.message, expected)
          assert.doesNotMatch(err.message, /position/)
          return true
        }, JSON.stringify(text))
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('takes declared GPUs in config.json as objects or as NAME:MIB[xN], and says what it wants otherwise', () => {
    const config = resolveConfig([{ source: 'config.json', values: { provider: { gpus: ['NVIDIA H100 80GB HBM3:81559x8', { name: 'NVIDIA L4', vramMiB: 23034 }] } } }])
    assert.deepEqual(config.provider.gpus, [{ name: 'NVIDIA H100 80GB HBM3', vramMiB: 81559, count: 8 }, { name: 'NVIDIA L4', vramMiB: 23034, count: 1 }])
    for (const bad of ['NVIDIA H100', 80, null]) {
      const err = configError(() => resolveConfig([{ source: 'config.json', values: { provider: { gpus: [bad] } } }]))
      assert.equal(err.issues[0]?.field, 'provider.gpus.0')
      assert.equal(err.issues[0]?.source, 'config.json')
      assert.match(err.issues[0]?.message ?? '', /expected an object \{"name": "NVIDIA H100 80GB HBM3", "vramMiB": 81559, "count": 8\} or a string NAME:VRAM_MIB\[xCOUNT\]/)
      assert.ok(err.message.includes(JSON.stringify(bad)), err.message)
    }
  })

  it('requires the process sandbox unless the owner opts out; declared VRAM for detected GPUs', () => {
    assert.equal(resolveConfig([]).executors.process.sandbox, 'bwrap')
    assert.equal(resolveConfig(envLayers({ GPUMESH_PROCESS_SANDBOX: 'none' })).executors.process.sandbox, 'none')
    const err = configError(() => resolveConfig(envLayers({ GPUMESH_PROCESS_SANDBOX: 'auto' })))
    assert.deepEqual([err.issues[0]?.field, err.issues[0]?.source], ['executors.process.sandbox', 'GPUMESH_PROCESS_SANDBOX'])
    assert.deepEqual(resolveConfig([{ source: 'c', values: { provider: { gpuVramMiB: { 0: 122880, 'GPU-2dee1e25-b3b5': 1 } } } }]).provider.gpuVramMiB, { 0: 122880, 'GPU-2dee1e25-b3b5': 1 })
    for (const bad of [{ gpu0: 1 }, { 0: 0 }, { 0: 1.5 }]) configError(() => resolveConfig([{ source: 'c', values: { provider: { gpuVramMiB: bad } } }]))
  })

  it('keeps the local API on loopback', () => {
    configError(() => resolveConfig([{ source: 'config.json', values: { api: { host: '0.0.0.0' } } }]))
  })

  it('a bad GPUMESH_GPUS entry is named with its variable', () => {
    const err = configError(() => envLayers({ GPUMESH_GPUS: 'H100' }))
    assert.equal(err.issues[0]?.source, 'GPUMESH_GPUS')
  })

  it('mergeLayers remembers which layer set each value', () => {
    const { sources } = mergeLayers([{ source: 'a', values: { x: { y: 1, z: 2 } } }, { source: 'b', values: { x: { z: 3 } } }])
    assert.equal(sources.get('x.y'), 'a')
    assert.equal(sources.get('x.z'), 'b')
  })
})

describe('availability windows', () => {
  it('parses day ranges, lists and times', () => {
    assert.deepEqual(parseWindow('Mon-Fri 09:00-17:30'), [1, 2, 3, 4, 5].map((day) => ({ day, start: 540, end: 1050 })))
    assert.deepEqual(parseWindow('Sat,Sun 00:00-24:00'), [{ day: 6, start: 0, end: 1440 }, { day: 7, start: 0, end: 1440 }])
    assert.deepEqual(parseWindow('fri-mon 10:00-11:00').map((w) => w.day), [1, 5, 6, 7])
  })

  it('splits a window that crosses midnight, wrapping Sunday into Monday', () => {
    assert.deepEqual(parseWindow('Sun 22:00-06:00'), [{ day: 7, start: 1320, end: 1440 }, { day: 1, start: 0, end: 360 }])
  })

  it('merges overlapping and touching windows', () => {
    assert.deepEqual(parseWindows(['Mon 08:00-12:00', 'Mon 11:00-13:00', 'Mon 13:00-14:00', 'Mon 20:00-21:00']),
      [{ day: 1, start: 480, end: 840 }, { day: 1, start: 1200, end: 1260 }])
  })

  it('refuses what it cannot read, with the spec quoted', () => {
    for (const bad of ['Mon 9-17', 'Someday 09:00-10:00', 'Mon 25:00-26:00', 'Mon 10:00-10:00', 'Mon 10:60-11:00', '']) {
      assert.throws(() => parseWindow(bad), WindowSyntaxError, bad)
    }
  })

  it('always yields windows the capability-ad schema accepts', () => {
    const time = fc.tuple(fc.integer({ min: 0, max: 24 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => h === 24 ? '24:00' : `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`)
    const day = fc.constantFrom('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun')
    fc.assert(fc.property(fc.array(fc.tuple(day, day, time, time), { minLength: 1, maxLength: 5 }), (specs) => {
      const texts = specs.filter(([, , a, b]) => a !== b).map(([d1, d2, a, b]) => `${d1}-${d2} ${a}-${b}`)
      let windows
      try {
        windows = parseWindows(texts)
      } catch (err) {
        if (err instanceof WindowSyntaxError) return
        throw err
      }
      const ad = buildCapabilityAd({
        provider: { ...resolveConfig([]).provider, availability: { timeZone: 'UTC', windows: texts } },
        gpus: declaredGpuInfos([{ name: 'NVIDIA L4', vramMiB: 23034, count: 1 }], '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7'),
        host: { cpuCores: 1, memoryMiB: 1, diskGiB: 0 },
        seq: 1,
        addrs: [],
        now: 1_767_225_600_000
      })
      validatePayload('capability-ad', ad)
      assert.deepEqual(ad.availability.windows, windows)
    }))
  })
})
