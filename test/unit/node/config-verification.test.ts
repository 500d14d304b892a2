import assert from 'node:assert/strict'
import { ConfigError, resolveConfig } from '../../../node/config/load.js'

function verification (section: unknown): ReturnType<typeof resolveConfig>['verification'] {
  return resolveConfig([{ source: 'config.json', values: { verification: section } }]).verification
}

function rejected (section: unknown): string {
  try {
    verification(section)
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err))
    return err.message
  }
  assert.fail(`accepted ${JSON.stringify(section)}`)
}

describe('config: the verification section', () => {
  it('defaults: replicas on distinct subnets, the proof audit on, no agreement audit', () => {
    assert.deepEqual(verification({}), { replicaIndependence: 'subnet', auditUnproven: true, agreementAuditPerMille: 0 })
  })

  it('the agreement audit takes 0 … 1000 per mille, whole; the proof audit a boolean', () => {
    assert.equal(verification({ agreementAuditPerMille: 1000 }).agreementAuditPerMille, 1000)
    assert.match(rejected({ agreementAuditPerMille: 1001 }), /agreementAuditPerMille/)
    assert.match(rejected({ agreementAuditPerMille: -1 }), /agreementAuditPerMille/)
    assert.match(rejected({ agreementAuditPerMille: 0.5 }), /agreementAuditPerMille/)
    assert.equal(verification({ auditUnproven: false }).auditUnproven, false)
    assert.match(rejected({ auditUnproven: 'no' }), /auditUnproven/)
  })
})
