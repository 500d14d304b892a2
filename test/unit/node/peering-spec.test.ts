/**
 * protocol/README.md §7.4b "Finding topic peers" names the reference node's peering numbers, which a
 * third-party client copies: they are node/peering.ts's constants, checked here against the spec's text.
 */
import assert from 'node:assert/strict'
import { PEERING_DIALS_PER_ROUND, PEERING_DIAL_TIMEOUT_MS, PEERING_FIRST_ROUND_MS, PEERING_INTERVAL_MS, PEERING_TARGET } from '../../../node/peering.js'
import { specSection } from '../../helpers/spec-text.js'

describe('protocol/README.md §7.4b: the peering numbers', () => {
  it('the spec states node/peering.ts\'s target, dials per round, interval, dial limit and first round', () => {
    const text = specSection('7.4b').replace(/\s+/g, ' ')
    const line = `Every ${PEERING_INTERVAL_MS / 1000} s, while it has fewer than ${PEERING_TARGET} connections, dial up to ${PEERING_DIALS_PER_ROUND} random known peers it is not connected to (each dial limited to ${PEERING_DIAL_TIMEOUT_MS / 1000} s), one round also ${PEERING_FIRST_ROUND_MS / 1000} s after start.`
    assert.ok(text.includes(line), line)
  })
})
