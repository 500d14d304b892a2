import assert from 'node:assert/strict'
import {
  DEFAULT_FIND_LIMIT, DHT_K, FindParamsError, MAX_FIND_LIMIT, answerCompleteness, createFindParams, limitReached, lookupMayBeCut,
  type SearchOutcome
} from '../../../protocol/index.js'

const params = createFindParams({ limit: 5, k: 20 })

/** A search that ran to its end: a lookup under k, no deadline, under the limit. */
function outcome (over: Partial<SearchOutcome> = {}): SearchOutcome {
  return { yielded: 3, lookupFailed: false, timedOut: false, matched: 2, pending: false, ...over }
}

describe('provider search completeness (§7.4c)', () => {
  it('defaults to k = 20 and a limit of 100, and refuses limits outside 1 … MAX_FIND_LIMIT and k < 1', () => {
    assert.deepEqual(createFindParams(), { limit: DEFAULT_FIND_LIMIT, k: DHT_K })
    assert.equal(DHT_K, 20)
    assert.equal(DEFAULT_FIND_LIMIT, 100)
    assert.equal(createFindParams({ limit: 1 }).limit, 1)
    assert.equal(createFindParams({ limit: MAX_FIND_LIMIT }).limit, MAX_FIND_LIMIT)
    for (const limit of [0, -1, MAX_FIND_LIMIT + 1, 2.5, Number.NaN]) {
      assert.throws(() => createFindParams({ limit }), (err: unknown) => err instanceof FindParamsError && err.code === 'INVALID_LIMIT', String(limit))
    }
    assert.equal(createFindParams({ k: 1 }).k, 1)
    for (const k of [0, 1.5]) assert.throws(() => createFindParams({ k }), (err: unknown) => err instanceof FindParamsError && err.code === 'INVALID_K')
  })

  it('a lookup may have been cut once it yielded k providers, not one fewer', () => {
    assert.equal(lookupMayBeCut(19, 20), false)
    assert.equal(lookupMayBeCut(20, 20), true)
    assert.equal(lookupMayBeCut(21, 20), true)
    assert.equal(lookupMayBeCut(0, 20), false)
  })

  it('the limit is reached at exactly limit matches', () => {
    assert.equal(limitReached(4, params), false)
    assert.equal(limitReached(5, params), true)
  })

  it('a lookup under k that ran to its end is complete', () => {
    assert.deepEqual(answerCompleteness(outcome(), params), { complete: true })
    assert.deepEqual(answerCompleteness(outcome({ yielded: 19 }), createFindParams({ k: 20 })), { complete: true })
    assert.deepEqual(answerCompleteness(outcome({ yielded: 0, matched: 0 }), params), { complete: true })
  })

  it('a lookup at k is complete only when every closest peer found answered', () => {
    const atK = outcome({ yielded: 20, matched: 4 })
    assert.deepEqual(answerCompleteness({ ...atK, closest: { found: 20, answered: 20 } }, params), { complete: true })
    assert.deepEqual(answerCompleteness({ ...atK, closest: { found: 20, answered: 19 } }, params), { complete: false, cut: 'k' })
    assert.deepEqual(answerCompleteness({ ...atK, closest: { found: 0, answered: 0 } }, params), { complete: false, cut: 'k' })
    assert.deepEqual(answerCompleteness(atK, params), { complete: false, cut: 'k' }, 'not continued')
    // a network with fewer than k servers: all of them answered
    assert.deepEqual(answerCompleteness({ ...atK, closest: { found: 7, answered: 7 } }, params), { complete: true })
  })

  it('stopping at the limit with work left cuts the answer; meeting the limit as the last match does not', () => {
    assert.deepEqual(answerCompleteness(outcome({ matched: 5, pending: true }), params), { complete: false, cut: 'limit' })
    assert.deepEqual(answerCompleteness(outcome({ matched: 5, pending: false }), params), { complete: true })
    assert.deepEqual(answerCompleteness(outcome({ matched: 6, pending: false }), params), { complete: false, cut: 'limit' }, 'fetches in flight went past it')
    assert.deepEqual(answerCompleteness(outcome({ matched: 4, pending: true }), params), { complete: true }, 'under the limit, pending says nothing')
  })

  it('the limit comes before the deadline, the deadline before a failed lookup, that before k', () => {
    assert.deepEqual(answerCompleteness(outcome({ matched: 5, pending: true, timedOut: true, lookupFailed: true, yielded: 20 }), params), { complete: false, cut: 'limit' })
    assert.deepEqual(answerCompleteness(outcome({ timedOut: true, lookupFailed: true, yielded: 20 }), params), { complete: false, cut: 'timeout' })
    assert.deepEqual(answerCompleteness(outcome({ lookupFailed: true, yielded: 20 }), params), { complete: false, cut: 'error' })
    assert.deepEqual(answerCompleteness(outcome({ lookupFailed: true, yielded: 2 }), params), { complete: false, cut: 'error' })
    assert.deepEqual(answerCompleteness(outcome({ timedOut: true }), params), { complete: false, cut: 'timeout' })
  })
})
