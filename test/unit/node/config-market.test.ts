import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig, resolveConfig } from '../../../node/config/load.js'
import { InvalidMarketParamsError, createMarketParams, defaultMarketParams } from '../../../protocol/market/params.js'

function market (section: unknown): ReturnType<typeof resolveConfig>['market'] {
  return resolveConfig([{ source: 'config.json', values: { market: section } }]).market
}

function issues (section: unknown): ConfigError['issues'] {
  try {
    market(section)
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err))
    return err.issues
  }
  assert.fail(`accepted ${JSON.stringify(section)}`)
}

/** Set `value` at the dotted `field` of a fresh object. */
function at (field: string, value: unknown): Record<string, unknown> {
  return field.split('.').reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>
}

function read (params: unknown, field: string): unknown {
  return field.split('.').reduce<unknown>((o, key) => (o as Record<string, unknown>)[key], params)
}

// [field, lowest accepted, highest accepted, integer]
const BOUNDS: Array<[string, number, number, boolean]> = [
  ['leaseMs', 1_000, 3_600_000, true],
  ['billingIntervalSec', 1, 86_400, true],
  ['heartbeatsPerLease', 1, 10, true],
  ['bidDelayFraction', 0, 1, false],
  ['bidSpreadShare', 0, 1, false],
  ['dampingGroupSize', 2, 1_000_000_000, true],
  ['enoughBetterBids', 1, 1_000_000, true],
  ['preemptNoticeMs', 0, 600_000, true],
  ['preemptExactLimit', 0, 16, true],
  ['preemptMarginMs', 0, 600_000, true],
  ['bidHoldMs', 0, 60_000, true],
  ['endedRetentionMs', 60_000, 86_400_000, true],
  ['bidGraceMs', 30_001, 3_600_000, true],
  ['seenBids.maxJobs', 1, 1_000_000, true],
  ['seenBids.maxPerJob', 1, 4_096, true],
  ['maxFailedAttempts', 1, 16, true],
  ['scoring.unknownReliability', 0, 1, false],
  ['standing.exposureBase', 1, 1_000_000, true],
  ['standing.exposureGraceMs', 0, 86_400_000, true],
  ['standing.reopenHeldBack', 1, 1_000_000, true],
  ['standing.minFailureWeight', 0, 1_000_000, false]
]

describe('config.json: the market section', () => {
  it('absent, the market runs on defaultMarketParams; the parsed section survives structuredClone', () => {
    const config = resolveConfig([])
    assert.deepEqual(config.market, { ...defaultMarketParams })
    assert.deepEqual(structuredClone(config.market), config.market)
  })

  it('overrides merge into the defaults field by field, nested objects too', () => {
    const params = market({ leaseMs: 12_000, damping: false, seenBids: { maxJobs: 10 }, scoring: { tierWeights: { gold: 2 } } })
    assert.equal(params.leaseMs, 12_000)
    assert.equal(params.damping, false)
    assert.equal(params.billingIntervalSec, defaultMarketParams.billingIntervalSec)
    assert.deepEqual(params.seenBids, { maxJobs: 10, maxPerJob: defaultMarketParams.seenBids.maxPerJob })
    assert.deepEqual(params.scoring.tierWeights, { ...defaultMarketParams.scoring.tierWeights, gold: 2 })
    assert.deepEqual(market({ standing: { enabled: false } }).standing, { ...defaultMarketParams.standing, enabled: false })
  })

  for (const [field, min, max, integer] of BOUNDS) {
    it(`market.${field}: ${min} and ${max} are taken, one past either is refused by name`, () => {
      assert.equal(read(market(at(field, min)), field), min)
      assert.equal(read(market(at(field, max)), field), max)
      const step = integer ? 1 : 0.001
      for (const bad of [min - step, max + step, ...(integer ? [min + 0.5] : [])]) {
        const found = issues(at(field, bad))
        assert.equal(found.length, 1, JSON.stringify(found))
        assert.equal(found[0]?.field, `market.${field}`)
        assert.equal(found[0]?.source, 'config.json')
        // scoring's own messages give the range only
        if (!field.startsWith('scoring.')) assert.match(found[0]?.message ?? '', new RegExp(`got ${String(bad).replace('.', '\\.')}$`))
      }
    })
  }

  it('a bad field inside a nested object is named with its whole path', () => {
    const [issue] = issues({ scoring: { tierWeights: { silver: -1 } } })
    assert.equal(issue?.field, 'market.scoring.tierWeights.silver')
    assert.match(issue?.message ?? '', /≥ 0/)
    assert.equal(issues({ seenBids: { maxPerJob: 0 } })[0]?.field, 'market.seenBids.maxPerJob')
  })

  it('unknown keys are refused at every depth, and a wrong type is named', () => {
    assert.deepEqual(issues({ colour: 'blue' }).map((i) => [i.field, i.message]), [['market.colour', 'unknown setting']])
    assert.deepEqual(issues({ seenBids: { max: 1 } }).map((i) => i.field), ['market.seenBids.max'])
    assert.deepEqual(issues({ scoring: { tierWeights: { platinum: 1 } } }).map((i) => i.field), ['market.scoring.tierWeights.platinum'])
    assert.equal(issues({ leaseMs: '30s' })[0]?.field, 'market.leaseMs')
    assert.equal(issues({ damping: 'no' })[0]?.field, 'market.damping')
    assert.equal(issues({ seenBids: 5 })[0]?.field, 'market.seenBids')
    assert.equal(issues(5)[0]?.field, 'market')
  })

  it('every bad field is named at once: unknown keys, wrong types, ranges, nested and scoring, in one error', () => {
    const found = issues({ leaseMs: 999, leese: 1, damping: 'no', seenBids: { maxPerJob: 0, max: 1 }, bidHoldMs: -1, scoring: { unknownReliability: 2 } })
    assert.deepEqual(found.map((i) => i.field).sort(), [
      'market.bidHoldMs', 'market.damping', 'market.leaseMs', 'market.leese', 'market.scoring.unknownReliability', 'market.seenBids.max', 'market.seenBids.maxPerJob'
    ])
    assert.ok(found.every((i) => i.source === 'config.json'))
    // a section that is not an object is named, and the rest are still checked
    assert.deepEqual(issues({ seenBids: 5, leaseMs: 999 }).map((i) => i.field).sort(), ['market.leaseMs', 'market.seenBids'])
  })

  it('from config.json on disk, a bad value names the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-config-market-'))
    try {
      await writeFile(join(dir, 'config.json'), JSON.stringify({ market: { billingIntervalSec: 0 } }))
      await assert.rejects(loadConfig(dir, { env: {} }), (err: unknown) =>
        err instanceof ConfigError && /^market\.billingIntervalSec: expected an integer in 1 … 86400, got 0 \(from .*config\.json\)$/.test(err.message))
      await writeFile(join(dir, 'config.json'), JSON.stringify({ market: { billingIntervalSec: 60 } }))
      assert.equal((await loadConfig(dir, { env: {} })).market.billingIntervalSec, 60)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('createMarketParams layers overrides on a base (a test\'s over config.json\'s), nested objects merged', () => {
    const base = market({ leaseMs: 12_000, seenBids: { maxJobs: 10 }, scoring: { tierWeights: { gold: 2 } } })
    const params = createMarketParams({ billingIntervalSec: 60, seenBids: { maxPerJob: 8 }, scoring: { tierWeights: { bronze: 0.5 } } }, base)
    assert.equal(params.leaseMs, 12_000)
    assert.equal(params.billingIntervalSec, 60)
    assert.deepEqual(params.seenBids, { maxJobs: 10, maxPerJob: 8 })
    assert.deepEqual(params.scoring.tierWeights, { ...defaultMarketParams.scoring.tierWeights, gold: 2, bronze: 0.5 })
    assert.throws(() => createMarketParams({ leaseMs: 0 }, base), InvalidMarketParamsError)
  })
})
