/**
 * /gpumesh/history/1.0.0 between in-process daemons (memory transport): a node that joins after a
 * conviction learns it from a peer; a bidder's history is asked for and counts in the asker's view;
 * a lying server (forged envelope, an envelope about another subject, too many, an oversized frame)
 * is refused with a typed reason and counted against it, and a server that vanishes mid-answer
 * costs the asker nothing but the answer.
 */
import assert from 'node:assert/strict'
import { lpStream } from '@libp2p/utils'
import { cidOfValue } from '../../crypto/index.js'
import type { Daemon } from '../../node/daemon.js'
import { HistoryFetchError } from '../../node/services/history.js'
import { EVIDENCE_TOPIC, PROTOCOLS, openMessage, sealMessage, type SealedMessage } from '../../protocol/index.js'
import { buildFraudProof } from '../../protocol/trust/fraud-proof.js'
import { HISTORY_MAX_RESPONSE_BYTES, encodeHistoryResponse, type HistoryRequest } from '../../protocol/trust/history.js'
import { startDaemon, startNetwork, type TestNetwork } from '../helpers/network.js'
import { openedJob, outputs, provider, receipt } from '../helpers/trust-fixtures.js'

const DAY = 86_400_000
const CHEAT = provider(1)

async function until<T> (what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== false) return value
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** A conflicting-receipts proof against CHEAT, signed by `by`, fresh now. */
function proofBy (by: Daemon): SealedMessage<'fraud-proof'> {
  const job = openedJob()
  const fields = buildFraudProof(job, [receipt(CHEAT, job, { outputs: outputs('6') }), receipt(CHEAT, job, { outputs: outputs('7') })])
  const now = Date.now()
  return sealMessage(by.identity, 'fraud-proof', { v: 1, issuedAt: now, expiresAt: now + DAY, ...fields })
}

/** A failure report by `by` about `subject`, fresh now. */
function reportBy (by: Daemon, subject: string, n = 0): SealedMessage<'failure-report'> {
  const now = Date.now()
  return sealMessage(by.identity, 'failure-report', { v: 1, issuedAt: now - n, expiresAt: now + DAY, job: cidOfValue({ job: n }).cid, subject, reason: 'no-show', observedAt: now - n, evidence: [] })
}

describe('/gpumesh/history/1.0.0 (in-process)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let server: Daemon
  let liar: Daemon
  let asker: Daemon
  /** A provider no node here has dealt with (no node has its key). */
  const stranger = provider(4).peerId

  before(async () => {
    net = await startNetwork([{ sell: false }, { sell: false }, { sell: false }])
    ;[server, liar, asker] = net.nodes as [Daemon, Daemon, Daemon]
    for (const d of [liar, asker]) await d.node.dial(server.node.getMultiaddrs()[0]!)
    await asker.node.dial(liar.node.getMultiaddrs()[0]!)
  })
  after(async () => { await net?.stop() })

  const ask = (subject: string, limit = 32): HistoryRequest => ({ v: 1, q: 'subject', subject, limit })

  it('a node that joins after a conviction learns it from a peer, verifies the proof and refuses the provider', async () => {
    const proof = proofBy(server)
    await server.market!.convictions.convict({ subject: CHEAT.peerId, proof: proof.cid.toString(), message: proof, relayed: true })
    assert.ok(server.market!.requester.convicted(CHEAT.peerId))
    const late = await startDaemon(net.root, { sell: false }, { dial: [server.addresses()[0] as string] })
    try {
      await until('the late joiner to convict', () => late.market!.requester.convicted(CHEAT.peerId))
      assert.equal(late.market!.requester.agent.reputation.convictionOf(CHEAT.peerId), proof.cid.toString())
      // (the answer is counted once all its envelopes are taken, the conviction kept just after it is made)
      await until('the answer to be counted', () => late.market!.historySync.asker.convictionAnswers >= 1 ? true : undefined)
      // kept: a restart keeps it, and the late joiner now serves it in turn
      const served = await until('the late joiner to serve it', async () => {
        const page = await late.market!.history.page({ v: 1, q: 'convicted', limit: 32 })
        return page.envelopes.length > 0 ? page : undefined
      })
      assert.deepEqual(served.envelopes.map((b) => openMessage(b, 'fraud-proof', { now: Date.now() }).cid.toString()), [proof.cid.toString()])
      // the server kept the proof itself: served back to it, it is KNOWN (nobody's fault, not charged again)
      assert.deepEqual(await server.market!.history.take(proof.bytes, { v: 1, q: 'convicted', limit: 32 }, late.identity.peerId), { taken: false, reason: 'KNOWN', fault: false })
      // and the subject's own history at the server starts with the proof
      const page = await server.market!.history.page(ask(CHEAT.peerId))
      assert.equal(page.envelopes.length, 1)
    } finally {
      await late.stop()
    }
  })

  it('a stranger bidder\'s history is asked of the peers and counts in the asker\'s view', async () => {
    const reports = [reportBy(server, stranger, 1), reportBy(server, stranger, 2)]
    for (const r of reports) await server.market!.gossip.publish(r, [EVIDENCE_TOPIC])
    // the index is written in the background of publish
    await until('the server to index its reports', async () => (await server.market!.history.page(ask(stranger))).envelopes.length === 2 ? true : undefined)
    // only the server speaks truthfully about the stranger here; the liar serves nothing yet
    liar.node.services.history.source = async () => ({ envelopes: [] })
    assert.equal(asker.market!.requester.agent.reputation.reliability(stranger), undefined)
    asker.market!.historySync.providerMet(stranger)
    await until('the asker to hold evidence on the stranger', () => asker.market!.requester.agent.reputation.reliability(stranger) !== undefined ? true : undefined)
    await asker.market!.historySync.idle()
    assert.ok((asker.market!.requester.agent.reputation.reliability(stranger) ?? 1) < 0.5)
    // asked once: a second meeting within the retry window asks nobody
    asker.market!.historySync.providerMet(stranger)
    assert.equal(asker.market!.historySync.asker.outstanding, 0)
  })

  it('a lying server: a forged envelope, one about another subject and a bad fraud proof are refused and counted against it', async () => {
    const subject = provider(5).peerId
    const good = reportBy(liar, subject, 10)
    const forged = good.bytes.slice()
    forged[forged.length - 1] = (forged[forged.length - 1] ?? 0) ^ 1
    const other = reportBy(liar, provider(6).peerId, 11)
    // a fraud proof naming the subject whose receipts another key signed: fails §5.9 (NOT_BY_SUBJECT)
    const fields = proofBy(liar).payload
    const badProof = sealMessage(liar.identity, 'fraud-proof', { ...fields, subject })
    liar.node.services.history.source = async () => ({ envelopes: [forged, other.bytes, good.bytes, new Uint8Array([1, 2, 3]), badProof.bytes] })
    const response = await asker.node.services.history.fetch(liar.node.peerId, ask(subject))
    const outcomes = []
    for (const b of response.envelopes) outcomes.push(await asker.market!.history.take(b, ask(subject), liar.identity.peerId))
    assert.deepEqual(outcomes.map((o) => [o.taken, o.reason, o.fault]), [
      [false, 'BAD_SIGNATURE', true],
      [false, 'IRRELEVANT', true],
      [true, undefined, false],
      [false, 'MALFORMED_ENVELOPE', true],
      [false, 'FRAUD_PROOF_INVALID', true]
    ])
    assert.equal(asker.market!.requester.convicted(subject), false)
    // the same envelope again is known, nobody's fault
    assert.deepEqual(await asker.market!.history.take(good.bytes, ask(subject), liar.identity.peerId), { taken: false, reason: 'KNOWN', fault: false })
    // through the asker: the liar's faults are counted and, past maxFaults, it is asked nothing more
    const sync = asker.market!.historySync
    liar.node.services.history.source = async () => ({ envelopes: [forged, other.bytes] })
    server.node.services.history.source = async () => ({ envelopes: [] })
    const both = [liar.identity.peerId, server.identity.peerId]
    sync.askAbout(provider(7).peerId, both)
    await until('the asker to count the liar\'s faults', () => sync.asker.faultsOf(liar.identity.peerId) >= 2 ? true : undefined)
    await sync.idle()
    assert.equal(sync.asker.faultsOf(server.identity.peerId), 0)
    sync.askAbout(provider(8).peerId, both)
    await until('the liar to be dropped', () => sync.asker.faulty(liar.identity.peerId) ? true : undefined)
    await sync.idle()
    assert.deepEqual(sync.asker.onStranger(provider(9).peerId, [liar.identity.peerId], Date.now()), [])
  })

  it('too many envelopes, an oversized frame: typed errors that count as faults; a server that vanishes mid-answer does not', async () => {
    const subject = provider(5).peerId
    const env = reportBy(liar, subject, 20).bytes
    liar.node.services.history.source = async () => ({ envelopes: [env, env, env] })
    const tooMany = await asker.node.services.history.fetch(liar.node.peerId, ask(subject, 2)).then(() => undefined, (e: unknown) => e)
    assert.ok(tooMany instanceof HistoryFetchError && tooMany.code === 'TOO_MANY' && tooMany.fault, String(tooMany))

    // a raw server in place of the service: a frame one byte over the cap
    await liar.node.unhandle(PROTOCOLS.history)
    try {
      await liar.node.handle(PROTOCOLS.history, async (stream) => {
        const lp = lpStream(stream)
        await lp.read()
        await lp.write(new Uint8Array(HISTORY_MAX_RESPONSE_BYTES + 1)).catch(() => {})
        await stream.close().catch(() => {})
      })
      const big = await asker.node.services.history.fetch(liar.node.peerId, ask(subject)).then(() => undefined, (e: unknown) => e)
      assert.ok(big instanceof HistoryFetchError && big.code === 'TOO_LARGE' && big.fault, String(big))
      await liar.node.unhandle(PROTOCOLS.history)

      // exactly at the cap is a frame the asker reads (and then finds it is not a valid answer)
      await liar.node.handle(PROTOCOLS.history, async (stream) => {
        const lp = lpStream(stream)
        await lp.read()
        await lp.write(new Uint8Array(HISTORY_MAX_RESPONSE_BYTES)).catch(() => {})
        await stream.close().catch(() => {})
      })
      const atCap = await asker.node.services.history.fetch(liar.node.peerId, ask(subject)).then(() => undefined, (e: unknown) => e)
      assert.ok(atCap instanceof HistoryFetchError && atCap.code === 'BAD_RESPONSE', String(atCap))
      await liar.node.unhandle(PROTOCOLS.history)

      // vanishes mid-answer: a length prefix, part of the frame, then the stream is reset
      const half = encodeHistoryResponse({ v: 1, envelopes: [env] })
      await liar.node.handle(PROTOCOLS.history, async (stream) => {
        const lp = lpStream(stream)
        await lp.read()
        stream.send(new Uint8Array([...encodeLength(half.byteLength), ...half.subarray(0, 40)]))
        await new Promise((resolve) => setTimeout(resolve, 50))
        stream.abort(new Error('gone'))
      })
      const gone = await asker.node.services.history.fetch(liar.node.peerId, ask(subject)).then(() => undefined, (e: unknown) => e)
      assert.ok(gone instanceof HistoryFetchError && gone.code === 'UNREACHABLE' && !gone.fault, String(gone))
    } finally {
      await liar.node.unhandle(PROTOCOLS.history).catch(() => {})
    }
  })

  it('an asker over its rate is refused (REFUSED), not served', async () => {
    server.node.services.history.source = async () => ({ envelopes: [] })
    // 8 at once, then one every 5 s: a dozen in a row are not all served
    const fromLiar: string[] = []
    for (let i = 0; i < 12; i++) {
      fromLiar.push(await liar.node.services.history.fetch(server.node.peerId, { v: 1, q: 'convicted', limit: 1 }).then(() => 'ok', (e: unknown) => (e as HistoryFetchError).code))
    }
    assert.ok(fromLiar.includes('ok'), fromLiar.join(','))
    assert.ok(fromLiar.includes('REFUSED'), fromLiar.join(','))
    assert.ok(fromLiar.filter((c) => c === 'ok').length <= 8, fromLiar.join(','))
  })
})

function encodeLength (n: number): number[] {
  const out: number[] = []
  do {
    let b = n & 0x7f
    n >>>= 7
    if (n > 0) b |= 0x80
    out.push(b)
  } while (n > 0)
  return out
}
