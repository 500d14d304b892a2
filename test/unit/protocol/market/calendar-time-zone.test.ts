/**
 * One time-zone check (protocol/time-zone.ts) behind the wire schema, the node's config and the market's
 * decisions: the wire checks the name's form; the config and the decisions also need the zone known here.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { resolveConfig } from '../../../../node/config/load.js'
import { ConfigError } from '../../../../node/config/load.js'
import { parseWindows } from '../../../../node/config/windows.js'
import { decideBid } from '../../../../protocol/market/bid-policy.js'
import * as calendar from '../../../../protocol/market/calendar.js'
import { timeZone as wireTimeZone } from '../../../../protocol/messages/common.js'
import { TIME_ZONE_MAX_LENGTH, isKnownTimeZone, isTimeZoneName } from '../../../../protocol/time-zone.js'
import type { CapabilityAd } from '../../../../protocol/messages/capability-ad.js'
import type { JobRequest } from '../../../../protocol/messages/job-request.js'
import { ALWAYS, H, MON_10H as NOW } from '../../../helpers/market-time.js'

function configAccepts (timeZone: string): boolean {
  try {
    resolveConfig([{ source: 'test', values: { provider: { availability: { timeZone } } } }])
    return true
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    assert.ok(err.issues.some((i) => i.field === 'provider.availability.timeZone'), JSON.stringify(err.issues))
    return false
  }
}

const ad = (timeZone: string): CapabilityAd => ({
  v: 1, issuedAt: NOW - H, expiresAt: NOW + 24 * H, seq: 1,
  gpus: [], host: { cpuCores: 8, memoryMiB: 64_000, diskGiB: 100 }, region: 'eu-west', price: { floor: 1_000_000 },
  availability: { timeZone, windows: ALWAYS }, workloads: ['process'], limits: {}, attestations: [], addrs: []
})

const cpuJob: JobRequest = {
  v: 1, issuedAt: NOW, expiresAt: NOW + H, nonce: new Uint8Array(16),
  workload: { executor: 'process', argv: ['x'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 60, network: false },
  resources: { gpus: 0, minVramGB: 0, models: [], cpuCores: 1, memoryMiB: 100, diskMiB: 100 },
  sla: { tier: 'silver', maxPrice: 2_000_000, maxStartDelaySec: 60 },
  placement: { regions: [], residency: 'prefer' },
  verification: { mode: 'none' },
  auction: { bidWindowMs: 500, paymentRule: 'first-price' }
}

/** The decision's view of a zone: does the bid policy decline for an unknown time zone? */
function decisionKnows (timeZone: string): boolean {
  const d = decideBid(cpuJob, { ad: ad(timeZone), allocations: [] }, NOW)
  return !(d.kind === 'decline' && d.reason === 'CALENDAR' && d.detail.includes('unknown time zone'))
}

describe('market/calendar time zones: one check', () => {
  it('the calendar\'s isKnownTimeZone is the one check', () => {
    assert.equal(calendar.isKnownTimeZone, isKnownTimeZone)
  })

  const cases: Array<[string, boolean, boolean]> = [
    // name, well formed, known here
    ['UTC', true, true],
    ['Europe/Berlin', true, true],
    ['America/Argentina/Buenos_Aires', true, true],
    ['Etc/GMT+5', true, true],
    ['europe/berlin', true, true],
    ['Mars/Olympus_Mons', true, false],
    ['+05:30', false, false],
    ['', false, false],
    ['/Berlin', false, false],
    ['Europe//Berlin', false, false],
    ['Europe/Berlin ', false, false]
  ]
  for (const [name, formed, known] of cases) {
    it(`"${name}": wire ${formed ? 'accepts' : 'rejects'}, config and decisions ${known ? 'accept' : 'reject'}`, () => {
      assert.equal(isTimeZoneName(name), formed)
      assert.equal(wireTimeZone.safeParse(name).success, formed)
      assert.equal(isKnownTimeZone(name), known)
      assert.equal(configAccepts(name), known)
      assert.equal(decisionKnows(name), known)
    })
  }

  it('limits the name to TIME_ZONE_MAX_LENGTH characters on the wire (64 passes, 65 does not)', () => {
    const at = 'A'.repeat(TIME_ZONE_MAX_LENGTH)
    const over = 'A'.repeat(TIME_ZONE_MAX_LENGTH + 1)
    assert.equal(wireTimeZone.safeParse(at).success, true)
    assert.equal(isTimeZoneName(at), true)
    assert.equal(wireTimeZone.safeParse(over).success, false)
    assert.equal(isTimeZoneName(over), false)
    assert.equal(isKnownTimeZone(over), false)
  })

  it('a zone known here is always one the wire can carry, and the wire agrees with isTimeZoneName (property)', () => {
    const names = fc.oneof(fc.string({ maxLength: 70 }), fc.constantFrom(...Intl.supportedValuesOf('timeZone')))
    fc.assert(fc.property(names, (name) => {
      assert.equal(wireTimeZone.safeParse(name).success, isTimeZoneName(name))
      if (isKnownTimeZone(name)) assert.ok(isTimeZoneName(name))
    }), { numRuns: 500 })
  })

  it('the config\'s windows are the calendar\'s WeeklyWindow (one type): parsed specs feed the calendar as they are', () => {
    const windows: calendar.WeeklyWindow[] = parseWindows(['Mon-Fri 22:00-06:00'])
    const monday = Date.UTC(2024, 0, 1)
    assert.deepEqual(calendar.windowAt({ timeZone: 'UTC', windows }, monday + 23 * H), { start: monday + 22 * H, end: monday + 30 * H })
  })
})
