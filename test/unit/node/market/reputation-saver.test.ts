/**
 * node/market/reputation-saver.ts: a view is written when it changed, at most once per interval (the
 * rest deferred, not lost), at once on flush, and read back bit-identically; a bad stored one is set
 * aside.
 */
import assert from 'node:assert/strict'
import { VirtualScheduler } from '../../../../protocol/index.js'
import { RequesterView } from '../../../../protocol/market/requester-view.js'
import { silentLoggers } from '../../../../node/logger.js'
import { ReputationSaver } from '../../../../node/market/reputation-saver.js'

const T = 1_000_000

function setup (): { view: RequesterView, saver: ReputationSaver, writes: unknown[], scheduler: VirtualScheduler, stored: { value: unknown } } {
  const view = new RequesterView('peer-self')
  const scheduler = new VirtualScheduler(T)
  const writes: unknown[] = []
  const stored: { value: unknown } = { value: undefined }
  const saver = new ReputationSaver({
    view, scheduler, log: silentLoggers.forComponent('test'), name: 'view', intervalMs: 5_000,
    put: async (s) => { writes.push(s); stored.value = s },
    get: async () => stored.value
  })
  return { view, saver, writes, scheduler, stored }
}

const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await Promise.resolve() }

describe('the reputation saver', () => {
  it('writes a change at once, the next ones at most once per interval, and nothing when unchanged', async () => {
    const { view, saver, writes, scheduler } = setup()
    saver.save()
    assert.equal(writes.length, 0)
    view.record('peer-x', false, T)
    saver.save()
    await settle()
    assert.equal(writes.length, 1)
    view.record('peer-y', true, T)
    saver.save()
    await settle()
    assert.equal(writes.length, 1, 'within the interval the write waits')
    scheduler.advance(4_999)
    await settle()
    assert.equal(writes.length, 1)
    scheduler.advance(1)
    await settle()
    assert.equal(writes.length, 2, 'the deferred write comes at the interval')
  })

  it('flushes at once, and loads back the same scores', async () => {
    const { view, saver, writes, stored } = setup()
    view.record('peer-x', false, T)
    saver.save()
    await settle()
    view.record('peer-x', true, T)
    await saver.flush()
    assert.equal(writes.length, 2)
    const again = new RequesterView('peer-self')
    const loader = new ReputationSaver({ view: again, scheduler: new VirtualScheduler(T), log: silentLoggers.forComponent('test'), name: 'view', put: async () => {}, get: async () => stored.value })
    await loader.load()
    assert.equal(again.score('peer-x', T), view.score('peer-x', T))
  })

  it('sets a stored view that does not load aside, starting from no history', async () => {
    const { view, saver, stored } = setup()
    stored.value = { v: 1, self: 'someone-else', clock: 0, dropped: 0, pairs: [] }
    await saver.load()
    assert.equal(view.size().pairs, 0)
  })
})
