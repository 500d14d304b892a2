/**
 * protocol/trust/history.ts: the frames of /gpumesh/history/1.0.0, their limits, the server's
 * selection (order, kinds, expiry, cursor, count and byte caps) and the asker's relevance check.
 */
import assert from 'node:assert/strict'
import { encodeCanonical } from '../../../../crypto/index.js'
import {
  HISTORY_MAX_LIMIT, HISTORY_MAX_REQUEST_BYTES, HISTORY_MAX_RESPONSE_BYTES, HISTORY_ORDER, HistoryError,
  decodeHistoryRequest, decodeHistoryResponse, encodeHistoryRequest, encodeHistoryResponse, historyKey,
  historyResponseBytes, selectHistory, servedRefusal, type HistoryEntry, type HistoryRequest
} from '../../../../protocol/trust/history.js'
import { REQUESTER, provider } from '../../../helpers/trust-fixtures.js'

const SUBJECT = provider(1).peerId
const OTHER = provider(2).peerId
const NOW = 1_767_225_600_000
const CID = 'bafyreiaqcpxy5x5jzii2ttc2xglsyfctshvjucyuexs2sa5k32uoar7upa'

const subjectAsk = (fields: Partial<Extract<HistoryRequest, { q: 'subject' }>> = {}): HistoryRequest => ({ v: 1, q: 'subject', subject: SUBJECT, limit: HISTORY_MAX_LIMIT, ...fields })

function code (fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof HistoryError, String(err))
    return err.code
  }
  assert.fail('accepted')
}

function entry (kind: HistoryEntry['kind'], n: number, size = 100, expiresAt = NOW + 1): HistoryEntry {
  const cid = `bafy${String(n).padStart(4, '0')}`
  return { key: historyKey(kind, cid), kind, cid, size, expiresAt }
}

describe('history frames (§7.11)', () => {
  it('a request round-trips; optional fields left out are not encoded', () => {
    const req = subjectAsk({ kinds: ['fraud-proof', 'receipt'], after: '0/bafyx' })
    assert.deepEqual(decodeHistoryRequest(encodeHistoryRequest(req)), req)
    const bare = { v: 1, q: 'convicted', limit: 1 } as const
    assert.deepEqual(decodeHistoryRequest(encodeHistoryRequest(bare)), bare)
  })

  it('refuses malformed requests (BAD_REQUEST)', () => {
    const enc = (v: unknown): Uint8Array => encodeCanonical(v)
    for (const bad of [
      { v: 1, q: 'subject', limit: 1 },
      { v: 1, q: 'convicted', subject: SUBJECT, limit: 1 },
      { v: 1, q: 'subject', subject: SUBJECT, limit: 0 },
      { v: 1, q: 'subject', subject: SUBJECT, limit: HISTORY_MAX_LIMIT + 1 },
      { v: 2, q: 'convicted', limit: 1 },
      { v: 1, q: 'everything', limit: 1 },
      { v: 1, q: 'subject', subject: 'not-a-peer', limit: 1 },
      { v: 1, q: 'subject', subject: SUBJECT, limit: 1, kinds: ['receipt', 'receipt'] },
      { v: 1, q: 'subject', subject: SUBJECT, limit: 1, kinds: ['payment'] },
      { v: 1, q: 'subject', subject: SUBJECT, limit: 1, kinds: [] },
      { v: 1, q: 'convicted', limit: 1, after: 'x'.repeat(129) },
      { v: 1, q: 'convicted', limit: 1, after: 'é' },
      { v: 1, q: 'convicted', limit: 1, after: '' },
      { v: 1, q: 'convicted', limit: 1, extra: true }
    ]) assert.equal(code(() => decodeHistoryRequest(enc(bad))), 'BAD_REQUEST', JSON.stringify(bad))
    assert.equal(code(() => decodeHistoryRequest(new Uint8Array([0xff, 0x00]))), 'BAD_REQUEST')
    assert.equal(code(() => decodeHistoryRequest(new Uint8Array(HISTORY_MAX_REQUEST_BYTES + 1))), 'BAD_REQUEST')
    // a cursor of exactly 128 ASCII bytes is fine
    assert.equal(decodeHistoryRequest(enc({ v: 1, q: 'convicted', limit: 1, after: 'x'.repeat(128) })).q, 'convicted')
  })

  it('the largest request fits its frame limit', () => {
    const req = subjectAsk({ kinds: [...HISTORY_ORDER], after: '~'.repeat(128) })
    assert.ok(encodeHistoryRequest(req).byteLength <= HISTORY_MAX_REQUEST_BYTES)
  })

  it('an answer is checked against its request: count, cursor progress, refusals', () => {
    const req = subjectAsk({ limit: 2, after: '1/b' })
    const env = new Uint8Array([1, 2, 3])
    assert.equal(decodeHistoryResponse(encodeHistoryResponse({ v: 1, envelopes: [env, env] }), req).envelopes.length, 2)
    assert.equal(code(() => decodeHistoryResponse(encodeHistoryResponse({ v: 1, envelopes: [env, env, env] }), req)), 'TOO_MANY')
    assert.equal(code(() => decodeHistoryResponse(encodeHistoryResponse({ v: 1, envelopes: [env], next: '1/b' }), req)), 'BAD_RESPONSE')
    assert.equal(code(() => decodeHistoryResponse(encodeHistoryResponse({ v: 1, envelopes: [env], next: '1/a' }), req)), 'BAD_RESPONSE')
    assert.equal(decodeHistoryResponse(encodeHistoryResponse({ v: 1, envelopes: [env], next: '1/c' }), req).next, '1/c')
    assert.equal(code(() => decodeHistoryResponse(encodeHistoryResponse({ v: 1, envelopes: [env], refused: 'RATE_LIMITED' }), req)), 'BAD_RESPONSE')
    assert.equal(decodeHistoryResponse(encodeHistoryResponse({ v: 1, envelopes: [], refused: 'RATE_LIMITED' }), req).refused, 'RATE_LIMITED')
    assert.equal(code(() => decodeHistoryResponse(encodeCanonical({ v: 1, envelopes: [new Uint8Array(0)] }), req)), 'BAD_RESPONSE')
    assert.equal(code(() => decodeHistoryResponse(new Uint8Array(HISTORY_MAX_RESPONSE_BYTES + 1), req)), 'TOO_LARGE')
    assert.equal(code(() => encodeHistoryResponse({ v: 1, envelopes: [new Uint8Array(200 * 1024), new Uint8Array(200 * 1024), new Uint8Array(200 * 1024), new Uint8Array(200 * 1024), new Uint8Array(200 * 1024), new Uint8Array(200 * 1024)] })), 'TOO_LARGE')
  })

  it('historyResponseBytes is the encoded size, across every CBOR length header', () => {
    const sizes = [1, 23, 24, 255, 256, 65535, 65536, 200_000]
    for (let n = 0; n <= sizes.length; n++) {
      for (const next of [undefined, 'x', '0/' + CID, 'y'.repeat(24), 'z'.repeat(128)]) {
        const chosen = sizes.slice(0, n)
        const encoded = encodeCanonical({ v: 1, envelopes: chosen.map((s) => new Uint8Array(s)), ...(next !== undefined ? { next } : {}) })
        assert.equal(historyResponseBytes(chosen, next), encoded.byteLength, `${chosen.join(',')} ${next ?? ''}`)
      }
    }
    const many = Array.from({ length: HISTORY_MAX_LIMIT }, () => 10)
    assert.equal(historyResponseBytes(many), encodeCanonical({ v: 1, envelopes: many.map((s) => new Uint8Array(s)) }).byteLength)
  })
})

describe('selectHistory', () => {
  it('nothing held: no envelopes, no cursor', () => {
    assert.deepEqual(selectHistory([], subjectAsk(), NOW), { entries: [] })
  })

  it('serves fraud proofs first, then failure reports, probe results, attestations, receipts', () => {
    const held = [entry('receipt', 1), entry('attestation', 2), entry('fraud-proof', 3), entry('probe-result', 4), entry('failure-report', 5), entry('receipt', 0)]
    const { entries, next } = selectHistory(held, subjectAsk(), NOW)
    assert.deepEqual(entries.map((e) => e.kind), ['fraud-proof', 'failure-report', 'probe-result', 'attestation', 'receipt', 'receipt'])
    assert.deepEqual(entries.slice(4).map((e) => e.cid), ['bafy0000', 'bafy0001'])
    assert.equal(next, undefined)
  })

  it('only the kinds asked for, and never an expired envelope (expiresAt = now is expired)', () => {
    const held = [entry('receipt', 1), entry('fraud-proof', 2, 100, NOW), entry('fraud-proof', 3, 100, NOW + 1), entry('failure-report', 4)]
    assert.deepEqual(selectHistory(held, subjectAsk({ kinds: ['fraud-proof', 'receipt'] }), NOW).entries.map((e) => e.cid), ['bafy0003', 'bafy0001'])
    // a conviction list is fraud proofs only
    assert.deepEqual(selectHistory(held, { v: 1, q: 'convicted', limit: 32 }, NOW).entries.map((e) => e.cid), ['bafy0003'])
  })

  it('pages by limit: next is the last key served, and the cursor continues past it to the end', () => {
    const held = Array.from({ length: 5 }, (_, i) => entry('receipt', i))
    const first = selectHistory(held, subjectAsk({ limit: 2 }), NOW)
    assert.deepEqual(first.entries.map((e) => e.cid), ['bafy0000', 'bafy0001'])
    assert.equal(first.next, historyKey('receipt', 'bafy0001'))
    const second = selectHistory(held, subjectAsk({ limit: 2, after: first.next as string }), NOW)
    assert.deepEqual(second.entries.map((e) => e.cid), ['bafy0002', 'bafy0003'])
    const last = selectHistory(held, subjectAsk({ limit: 2, after: second.next as string }), NOW)
    assert.deepEqual(last, { entries: [entry('receipt', 4)] })
    // exactly `limit` left: all of them, and no cursor (nothing more)
    assert.deepEqual(selectHistory(held, subjectAsk({ limit: 5 }), NOW).next, undefined)
    // a cursor at the end
    assert.deepEqual(selectHistory(held, subjectAsk({ after: historyKey('receipt', 'bafy0004') }), NOW), { entries: [] })
    assert.deepEqual(selectHistory(held, subjectAsk({ after: '~' }), NOW), { entries: [] })
  })

  it('fills an answer exactly up to the byte cap, and not a byte over', () => {
    const cap = 10_000
    // two entries; choose the second's size so that the answer is exactly `cap` bytes
    const a = entry('receipt', 1, 4000)
    // (a size of 256 … 65535 bytes has a 3-byte header, as the result does)
    const exact = cap - historyResponseBytes([4000, 1000]) + 1000
    const fits = [a, entry('receipt', 2, exact)]
    assert.equal(historyResponseBytes([4000, exact]), cap)
    assert.deepEqual(selectHistory(fits, subjectAsk(), NOW, cap).entries.length, 2)
    const over = [a, entry('receipt', 2, exact + 1)]
    const page = selectHistory(over, subjectAsk(), NOW, cap)
    assert.deepEqual(page.entries.map((e) => e.cid), ['bafy0001'])
    assert.equal(page.next, a.key)
    // the cursor's own bytes count: with a third entry after, the exact fit no longer holds
    const withMore = [a, entry('receipt', 2, exact), entry('receipt', 3, 1)]
    assert.equal(selectHistory(withMore, subjectAsk(), NOW, cap).entries.length, 1)
  })

  it('steps over an envelope no answer can hold, so the asker never pages in place', () => {
    const held = [entry('receipt', 1, 20_000), entry('receipt', 2, 10)]
    const page = selectHistory(held, subjectAsk(), NOW, 10_000)
    assert.deepEqual(page, { entries: [], next: held[0]?.key })
    assert.deepEqual(selectHistory(held, subjectAsk({ after: page.next as string }), NOW, 10_000).entries.map((e) => e.cid), ['bafy0002'])
    assert.deepEqual(selectHistory([held[0] as HistoryEntry], subjectAsk(), NOW, 10_000), { entries: [] })
  })
})

describe('servedRefusal: an envelope is relevant only to what was asked', () => {
  const failure = { job: 'x', subject: SUBJECT }
  it('a subject\'s evidence names it', () => {
    assert.equal(servedRefusal(subjectAsk(), 'failure-report', failure, REQUESTER.peerId), undefined)
    assert.equal(servedRefusal(subjectAsk(), 'failure-report', { job: 'x', subject: OTHER }, REQUESTER.peerId), 'IRRELEVANT')
    // a receipt or attestation speaks of its signer
    assert.equal(servedRefusal(subjectAsk(), 'receipt', { job: 'x', requester: REQUESTER.peerId }, SUBJECT), undefined)
    assert.equal(servedRefusal(subjectAsk(), 'attestation', {}, OTHER), 'IRRELEVANT')
    assert.equal(servedRefusal(subjectAsk({ kinds: ['fraud-proof'] }), 'failure-report', failure, REQUESTER.peerId), 'IRRELEVANT')
    assert.equal(servedRefusal(subjectAsk(), 'payment', failure, REQUESTER.peerId), 'IRRELEVANT')
  })

  it('a conviction list holds fraud proofs only', () => {
    const ask: HistoryRequest = { v: 1, q: 'convicted', limit: 1 }
    assert.equal(servedRefusal(ask, 'fraud-proof', { subject: OTHER }, REQUESTER.peerId), undefined)
    assert.equal(servedRefusal(ask, 'failure-report', failure, REQUESTER.peerId), 'IRRELEVANT')
  })
})
