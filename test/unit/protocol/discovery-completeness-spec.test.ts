/**
 * protocol/README.md §7.4c: the worked example of complete and "at least N" answers, computed with
 * answerCompleteness, and the defaults the section names.
 */
import assert from 'node:assert/strict'
import { DEFAULT_FIND_LIMIT, DHT_K, MAX_FIND_LIMIT, answerCompleteness, createFindParams, type SearchOutcome } from '../../../protocol/index.js'
import { specSection } from '../../helpers/spec-text.js'

const text = specSection('7.4c').replace(/\s+/g, ' ')

describe('protocol/README.md §7.4c: lookups past k', () => {
  it('names the defaults of protocol/discovery-completeness.ts', () => {
    assert.ok(text.includes(`returns as soon as it has yielded k (\`kBucketSize\`, ${DHT_K}) distinct providers`))
    assert.ok(text.includes(`(\`--limit\`, 1 … ${MAX_FIND_LIMIT}, default ${DEFAULT_FIND_LIMIT};`))
  })

  it('the worked example: 48 found past k is complete; the walk stopped short of one nearest peer is "at least 48"; --limit 10 is "at least 10"', () => {
    const params = createFindParams({ k: 20, limit: 100 })
    const vram8: SearchOutcome = { yielded: 20, lookupFailed: false, closest: { found: 20, answered: 20 }, timedOut: false, matched: 48, pending: false }
    assert.deepEqual(answerCompleteness(vram8, params), { complete: true })
    assert.ok(text.includes('the walk asks the other 8, which answer: 48 providers in all, **complete**'))
    assert.deepEqual(answerCompleteness({ ...vram8, closest: { found: 20, answered: 19 } }, params), { complete: false, cut: 'k' })
    assert.ok(text.includes('**at least 48** (cut at `k`)'))
    assert.deepEqual(answerCompleteness({ ...vram8, matched: 10, pending: true }, createFindParams({ k: 20, limit: 10 })), { complete: false, cut: 'limit' })
    assert.ok(text.includes('With `--limit 10`: 10 listed, **at least 10** (cut at `limit`)'))
  })

  it('the table lists the four cuts in the order answerCompleteness applies them', () => {
    const order = ['cut at `limit`', 'cut at `timeout`', 'cut at `error`', 'cut at `k`', '| complete |']
    const at = order.map((s) => text.indexOf(s))
    assert.ok(at.every((i) => i >= 0), JSON.stringify(at))
    assert.deepEqual([...at].sort((a, b) => a - b), at)
  })
})
