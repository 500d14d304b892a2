import assert from 'node:assert/strict'
import { RECONNECT_FIRST_MS, RECONNECT_MAX_MS, nextBackoff, nextOutputFetch, type OutputFetchRetries } from '../../../../protocol/index.js'

/** The output fetch's retry rule (protocol/market/output-fetch.ts): time passed in, nothing else. */
describe('output fetch retries', () => {
  const LEASE = 10_000

  it('a mismatch fails at once, on the first failure or a later one', () => {
    assert.deepEqual(nextOutputFetch('mismatch', undefined, 1_000, LEASE), { retry: false, why: 'mismatch' })
    assert.deepEqual(nextOutputFetch('mismatch', { firstFailedAt: 0, wait: 500 }, 1_000, LEASE), { retry: false, why: 'mismatch' })
  })

  it('an unreachable provider is tried again with the exec stream\'s back-off: 250 ms doubling to 4 s', () => {
    let retries: OutputFetchRetries | undefined
    let now = 5_000
    const waits: number[] = []
    for (;;) {
      const next = nextOutputFetch('unreachable', retries, now, 60_000)
      if (!next.retry) break
      waits.push(next.at - now)
      retries = next.retries
      assert.equal(retries.firstFailedAt, 5_000)
      now = next.at + 10 // the fetch itself takes a little
    }
    assert.deepEqual(waits.slice(0, 8), [250, 500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000])
    assert.equal(RECONNECT_FIRST_MS, 250)
    assert.equal(RECONNECT_MAX_MS, 4_000)
  })

  it('gives up once the next try would fall past one lease from the first failure', () => {
    // the first failure at 0; the next try at 9.9 s + 4 s is past the lease
    assert.deepEqual(nextOutputFetch('unreachable', { firstFailedAt: 0, wait: 4_000 }, 9_900, LEASE), { retry: false, why: 'lease' })
    const within = nextOutputFetch('unreachable', { firstFailedAt: 0, wait: 2_000 }, 5_000, LEASE)
    assert.deepEqual(within, { retry: true, at: 9_000, retries: { firstFailedAt: 0, wait: 4_000 } })
    // a lease shorter than the first wait: no retry at all
    assert.deepEqual(nextOutputFetch('unreachable', undefined, 0, 200), { retry: false, why: 'lease' })
  })

  it('a store that failed here is tried again like an unreachable provider, up to one lease (exactly at it: still a try)', () => {
    const first = nextOutputFetch('local', undefined, 1_000, LEASE)
    assert.deepEqual(first, { retry: true, at: 1_250, retries: { firstFailedAt: 1_000, wait: 250 } })
    // the next try falls exactly at the lease's end: allowed; one millisecond later: given up
    assert.deepEqual(nextOutputFetch('local', { firstFailedAt: 0, wait: 2_000 }, 6_000, LEASE), { retry: true, at: 10_000, retries: { firstFailedAt: 0, wait: 4_000 } })
    assert.deepEqual(nextOutputFetch('local', { firstFailedAt: 0, wait: 2_000 }, 6_001, LEASE), { retry: false, why: 'lease' })
  })

  it('the back-off alone', () => {
    assert.equal(nextBackoff(undefined), 250)
    assert.equal(nextBackoff(250), 500)
    assert.equal(nextBackoff(3_000), 4_000)
    assert.equal(nextBackoff(4_000), 4_000)
  })
})
