import assert from 'node:assert/strict'
import { ConfigError, envLayers, resolveConfig } from '../../../node/config/load.js'
import { createProbeScheduleParams, defaultProbeScheduleParams } from '../../../protocol/trust/probe-schedule.js'

function probes (section: unknown): ReturnType<typeof resolveConfig>['probes'] {
  return resolveConfig([{ source: 'config.json', values: { probes: section } }]).probes
}

function rejected (section: unknown): string {
  try {
    probes(section)
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err))
    return err.message
  }
  assert.fail(`accepted ${JSON.stringify(section)}`)
}

describe('config: the probes section', () => {
  it('defaults to probing on, every 6 h with 10 % jitter, 60 an hour in bursts of 4: the pure schedule\'s defaults', () => {
    const p = probes({})
    assert.deepEqual(p, { enabled: true, intervalMs: 6 * 3_600_000, jitter: 0.1, perHour: 60, burst: 4 })
    const schedule = { intervalMs: p.intervalMs, jitter: p.jitter, perHour: p.perHour, burst: p.burst }
    assert.deepEqual(createProbeScheduleParams(schedule), { ...defaultProbeScheduleParams, ...schedule })
  })

  it('an interval of exactly a minute (the provider\'s own limit) is taken, a millisecond less is not', () => {
    assert.equal(probes({ intervalMs: 60_000 }).intervalMs, 60_000)
    assert.match(rejected({ intervalMs: 59_999 }), /intervalMs/)
  })

  it('bad values and unknown keys are named', () => {
    assert.match(rejected({ jitter: 1.5 }), /jitter/)
    assert.match(rejected({ perHour: 0 }), /perHour/)
    assert.match(rejected({ burst: 0 }), /burst/)
    assert.match(rejected({ enabled: 'yes' }), /enabled/)
    assert.match(rejected({ intervalHours: 6 }), /intervalHours/)
  })
})

describe('config: GPUMESH_PROBES', () => {
  it('false turns the daemon\'s own probes off', () => {
    assert.equal(resolveConfig(envLayers({ GPUMESH_PROBES: 'false' })).probes.enabled, false)
    assert.equal(resolveConfig(envLayers({ GPUMESH_PROBES: 'true' })).probes.enabled, true)
  })
})
