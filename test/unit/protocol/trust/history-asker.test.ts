/** protocol/trust/history-asker.ts: whom a node asks for history, when, and when it stops asking a peer. */
import assert from 'node:assert/strict'
import { HistoryAsker, InvalidHistoryAskParamsError, createHistoryAskParams, defaultHistoryAskParams, type HistoryAsk } from '../../../../protocol/trust/history-asker.js'

const SELF = 'self'
const peers = (n: number): string[] => Array.from({ length: n }, (_, i) => `p${i}`)
const T = 1_000_000

describe('HistoryAsker params', () => {
  it('the defaults validate; each field out of range is a typed error naming it', () => {
    assert.deepEqual(createHistoryAskParams(), { ...defaultHistoryAskParams })
    for (const [field, bad] of [['convictionPeers', -1], ['subjectPeers', 0], ['maxInFlight', 0], ['subjectRetryMs', -1], ['maxPages', 0], ['maxFaults', 0.5], ['limit', 33], ['limit', 0], ['maxTracked', Number.NaN]] as const) {
      assert.throws(() => createHistoryAskParams({ [field]: bad }), (err: unknown) => err instanceof InvalidHistoryAskParamsError && err.field === field && err.code === 'INVALID_HISTORY_ASK_PARAMS', field)
    }
    assert.equal(createHistoryAskParams({ convictionPeers: 0 }).convictionPeers, 0)
  })
})

describe('HistoryAsker: convictions on joining', () => {
  it('asks each peer met once, until convictionPeers are out or have answered; never itself', () => {
    const a = new HistoryAsker(SELF)
    assert.deepEqual(a.onPeer(SELF), [])
    const asks = peers(5).flatMap((p) => a.onPeer(p))
    assert.deepEqual(asks.map((x) => x.peer), ['p0', 'p1', 'p2'])
    assert.deepEqual(asks[0]?.request, { v: 1, q: 'convicted', limit: 32 })
    assert.deepEqual(a.onPeer('p0'), [])
    for (const ask of asks) assert.deepEqual(a.onAnswer(ask, { ok: true, faults: 0 }), [])
    assert.equal(a.convictionAnswers, 3)
    assert.deepEqual(a.onPeer('p9'), [])
    assert.equal(a.outstanding, 0)
  })

  it('a failed or faulty answer does not count: the next peer met is asked', () => {
    const a = new HistoryAsker(SELF, { convictionPeers: 1 })
    const [first] = a.onPeer('p0')
    assert.deepEqual(a.onPeer('p1'), [])
    a.onAnswer(first as HistoryAsk, { ok: false, fault: false })
    const [second] = a.onPeer('p1')
    assert.equal(second?.peer, 'p1')
    a.onAnswer(second as HistoryAsk, { ok: true, faults: 1 })
    assert.equal(a.convictionAnswers, 0)
    assert.equal(a.onPeer('p2')[0]?.peer, 'p2')
  })

  it('a peer met while maxInFlight asks are out waits, and is asked when one ends', () => {
    const a = new HistoryAsker(SELF, { maxInFlight: 1, convictionPeers: 2 })
    const [first] = a.onPeer('p0')
    assert.deepEqual(a.onPeer('p1'), [])
    assert.deepEqual(a.onPeer('p1'), [])
    const follow = a.onAnswer(first as HistoryAsk, { ok: true, faults: 0 })
    assert.deepEqual(follow.map((x) => x.peer), ['p1'])
    assert.deepEqual(a.onAnswer(follow[0] as HistoryAsk, { ok: true, faults: 0 }), [])
    assert.equal(a.convictionAnswers, 2)
  })

  it('follows the next cursor on the same peer, up to maxPages', () => {
    const a = new HistoryAsker(SELF, { maxPages: 2, convictionPeers: 1 })
    const [first] = a.onPeer('p0')
    const [page2] = a.onAnswer(first as HistoryAsk, { ok: true, faults: 0, next: 'k1' })
    assert.deepEqual(page2, { peer: 'p0', request: { v: 1, q: 'convicted', limit: 32, after: 'k1' }, page: 2 })
    assert.equal(a.outstanding, 1)
    assert.deepEqual(a.onAnswer(page2 as HistoryAsk, { ok: true, faults: 0, next: 'k2' }), [])
    assert.equal(a.outstanding, 0)
    assert.equal(a.convictionAnswers, 1)
  })
})

describe('HistoryAsker: a provider met for the first time', () => {
  it('asks subjectPeers of the peers, sorted, never the subject or itself', () => {
    const a = new HistoryAsker(SELF)
    const asks = a.onStranger('p1', ['p3', SELF, 'p1', 'p2', 'p0'], T)
    assert.deepEqual(asks.map((x) => x.peer), ['p0', 'p2'])
    assert.deepEqual(asks[0]?.request, { v: 1, q: 'subject', subject: 'p1', limit: 32 })
    assert.deepEqual(a.onStranger(SELF, ['p0'], T), [])
    assert.deepEqual(a.onStranger('p5', ['p5'], T), [])
  })

  it('asks about a subject again only after subjectRetryMs', () => {
    const a = new HistoryAsker(SELF, { subjectRetryMs: 1000 })
    for (const x of a.onStranger('s', ['p0'], T)) a.onAnswer(x, { ok: true, faults: 0 })
    assert.deepEqual(a.onStranger('s', ['p0'], T + 999), [])
    assert.equal(a.onStranger('s', ['p0'], T + 1000).length, 1)
  })

  it('no peers to ask does not use up the subject\'s turn', () => {
    const a = new HistoryAsker(SELF)
    assert.deepEqual(a.onStranger('s', [], T), [])
    assert.equal(a.onStranger('s', ['p0'], T).length, 1)
  })

  it('never more than maxInFlight asks out, all kinds together', () => {
    const a = new HistoryAsker(SELF, { maxInFlight: 3, subjectPeers: 2 })
    assert.equal(a.onPeer('c0').length, 1)
    assert.equal(a.onStranger('s1', peers(4), T).length, 2)
    assert.deepEqual(a.onStranger('s2', peers(4), T), [])
    assert.equal(a.outstanding, 3)
  })

  it('a peer with maxFaults faults is asked nothing more', () => {
    const a = new HistoryAsker(SELF, { maxFaults: 2, subjectRetryMs: 0 })
    for (let i = 0; i < 2; i++) for (const x of a.onStranger('s', ['bad'], T + i)) a.onAnswer(x, { ok: false, fault: true })
    assert.equal(a.faultsOf('bad'), 2)
    assert.ok(a.faulty('bad'))
    assert.deepEqual(a.onStranger('s', ['bad'], T + 5), [])
    assert.deepEqual(a.onPeer('bad'), [])
    // a faulty answer's next page is not followed
    const b = new HistoryAsker(SELF, { maxFaults: 1 })
    const [x] = b.onStranger('s', ['p0'], T)
    assert.deepEqual(b.onAnswer(x as HistoryAsk, { ok: true, faults: 1, next: 'k' }), [])
    assert.equal(b.outstanding, 0)
  })
})
