import assert from 'node:assert/strict'
import { providerCount } from '../../../cli/client-commands.js'
import type { FindResult } from '../../../node/discovery.js'

const result = (n: number, over: Partial<FindResult> = {}): Pick<FindResult, 'providers' | 'complete' | 'cut' | 'limit'> =>
  ({ providers: Array.from({ length: n }, () => ({}) as FindResult['providers'][number]), complete: true, limit: 100, ...over })

describe('gpumesh providers: the count line', () => {
  it('a complete answer gives the number alone', () => {
    assert.equal(providerCount(result(48)), '48 provider(s)')
    assert.equal(providerCount(result(0)), '0 provider(s)')
  })

  it('a cut answer says "at least N" and why', () => {
    assert.equal(providerCount(result(10, { complete: false, cut: 'limit', limit: 10 })), 'at least 10 providers (the answer was cut at --limit 10)')
    assert.equal(providerCount(result(1, { complete: false, cut: 'limit', limit: 1 })), 'at least 1 provider (the answer was cut at --limit 1)')
    assert.equal(providerCount(result(20, { complete: false, cut: 'k' })), 'at least 20 providers (the DHT lookup stopped at k and not every peer closest to the key answered)')
    assert.equal(providerCount(result(3, { complete: false, cut: 'timeout' })), 'at least 3 providers (the search stopped at its --timeout)')
    assert.equal(providerCount(result(3, { complete: false, cut: 'error' })), 'at least 3 providers (a DHT lookup failed)')
  })
})
