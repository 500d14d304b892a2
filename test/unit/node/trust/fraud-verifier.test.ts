import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'
import { Identity, cidOfRaw, type CID } from '../../../../crypto/index.js'
import { openMessage, sealMessage, type FraudProof, type OpenedMessage } from '../../../../protocol/index.js'
import { buildFraudProof } from '../../../../protocol/trust/fraud-proof.js'
import { BlobStore } from '../../../../node/blobs/store.js'
import { silentLoggers } from '../../../../node/logger.js'
import { FraudVerifier, ProofRefusal, type Conviction } from '../../../../node/trust/fraud-verifier.js'
import { outputsManifestCid } from '../../../../node/trust/reexecute.js'
import { HOUR, T, awardCid, jobPayload, openedJob, provider, receipt } from '../../../helpers/trust-fixtures.js'

const FIXTURES = fileURLToPath(new URL('../../../../../test/fixtures/wasm/', import.meta.url))
const enc = (s: string): Uint8Array => new TextEncoder().encode(s)
const CHEAT = provider(1)
const HONEST = provider(2)
const REPORTERS = [9, 10, 11].map((n) => new Identity(new Uint8Array(32).fill(n)))

describe('node/trust/fraud-verifier', function () {
  this.timeout(60_000)
  let root: string
  let box: Uint8Array
  let blobs: BlobStore
  let job: OpenedMessage<'job-request'>
  let convictions: Conviction[]
  let fetched: string[]

  before(async () => {
    const module = (await wabt()).parseWat('box.wat', await readFile(join(FIXTURES, 'box.wat'), 'utf8'))
    try { module.validate(); box = module.toBinary({}).buffer } finally { module.destroy() }
    job = openedJob(jobPayload({ argv: ['box.wasm', 'write', 'out.txt', 'hello'], inputs: [{ path: 'box.wasm', cid: cidOfRaw(box), size: box.byteLength }], outputs: ['out.txt'] }))
  })
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-fraud-test-'))
    blobs = await BlobStore.open(join(root, 'blobs'))
    convictions = []
    fetched = []
  })
  afterEach(async () => { await rm(root, { recursive: true, force: true }) })

  function verifier (extra: { perSigner?: number, maxQueued?: number } = {}): FraudVerifier {
    const convicted = new Set<string>()
    return new FraudVerifier({
      now: () => T + HOUR,
      log: silentLoggers.forComponent('test'),
      blobs,
      fetch: async (peer, cid) => { fetched.push(peer); if (cid.equals(cidOfRaw(box))) return box; throw new Error('no such blob') },
      convicted: (s) => convicted.has(s),
      onConvicted: (c) => { convicted.add(c.subject); convictions.push(c) },
      maxInputBytes: 1 << 20,
      reexecute: { tmpRoot: join(root, 'work') },
      ...extra
    })
  }

  const right = (): CID => outputsManifestCid(['out.txt'], [{ path: 'out.txt', bytes: enc('hello') }])
  const wrong = (): CID => outputsManifestCid(['out.txt'], [{ path: 'out.txt', bytes: enc('hellp') }])

  function proof (subject: Identity, outputs: CID, options: { inputs?: boolean, by?: Identity, award?: number } = {}): OpenedMessage<'fraud-proof'> {
    const r = receipt(subject, job, { outputs, award: awardCid(options.award ?? 1) })
    const payload: FraudProof = {
      v: 1, issuedAt: T + 200_000, expiresAt: T + 30 * 24 * HOUR, subject: subject.peerId, job: job.cid, kind: 'wrong-output',
      request: job.bytes, receipts: [r.bytes], ...(options.inputs === false ? {} : { inputs: [box] })
    }
    return openMessage(sealMessage(options.by ?? REPORTERS[0] as Identity, 'fraud-proof', payload).bytes, 'fraud-proof', { now: T + HOUR })
  }

  it('re-executes a wrong-output proof and convicts the subject once, not relayed yet (the node republishes it)', async () => {
    const v = verifier()
    const p = proof(CHEAT, wrong())
    assert.equal(v.take(p), ProofRefusal.PENDING)
    // a second proof on the same subject while the first runs is not needed
    assert.equal(v.take(proof(CHEAT, wrong(), { by: REPORTERS[1] as Identity })), ProofRefusal.KNOWN)
    await v.idle()
    assert.equal(convictions.length, 1)
    assert.equal(convictions[0]?.subject, CHEAT.peerId)
    assert.equal(convictions[0]?.proof, p.cid.toString())
    assert.equal(convictions[0]?.relayed, false)
    assert.deepEqual(fetched, [])
    assert.equal(v.take(proof(CHEAT, wrong(), { by: REPORTERS[2] as Identity })), ProofRefusal.KNOWN)
  })

  it('without inputs in the proof, fetches them by CID from the proof\'s signer', async () => {
    const v = verifier()
    assert.equal(v.take(proof(CHEAT, wrong(), { inputs: false })), ProofRefusal.PENDING)
    await v.idle()
    assert.deepEqual(fetched, [(REPORTERS[0] as Identity).peerId])
    assert.equal(convictions.length, 1)
  })

  it('a proof the re-execution refutes convicts nobody and discredits its signer', async () => {
    const v = verifier()
    const liar = REPORTERS[1] as Identity
    assert.equal(v.take(proof(HONEST, right(), { by: liar })), ProofRefusal.PENDING)
    await v.idle()
    assert.deepEqual(convictions, [])
    assert.equal(v.refuted(liar.peerId), 1)
    assert.equal(v.take(proof(CHEAT, wrong(), { by: liar })), ProofRefusal.DISCREDITED)
    assert.equal(v.refuted((REPORTERS[0] as Identity).peerId), 0)
  })

  it('bounds the queue per signer: its third proof waiting is BUSY; others still get in', async () => {
    const v = verifier({ perSigner: 2 })
    const subjects = [3, 4, 5, 6].map((n) => provider(n))
    assert.equal(v.take(proof(subjects[0] as Identity, wrong())), ProofRefusal.PENDING)
    assert.equal(v.take(proof(subjects[1] as Identity, wrong())), ProofRefusal.PENDING)
    assert.equal(v.take(proof(subjects[2] as Identity, wrong())), ProofRefusal.BUSY)
    assert.equal(v.take(proof(subjects[3] as Identity, wrong(), { by: REPORTERS[1] as Identity })), ProofRefusal.PENDING)
    await v.idle()
    assert.equal(convictions.length, 3)
  })

  it('bounds the whole queue: maxQueued 1 takes one waiting proof (the first starts at once)', async () => {
    const v = verifier({ maxQueued: 1 })
    const a = v.take(proof(provider(3), wrong(), { by: REPORTERS[0] as Identity }))
    const b = v.take(proof(provider(4), wrong(), { by: REPORTERS[1] as Identity }))
    const c = v.take(proof(provider(5), wrong(), { by: REPORTERS[2] as Identity }))
    assert.deepEqual([a, b, c], [ProofRefusal.PENDING, ProofRefusal.PENDING, ProofRefusal.BUSY])
    await v.idle()
  })

  it('a conflicting-receipts proof convicts at once (relayed by gossip); an invalid proof is refused', () => {
    const v = verifier()
    const fields = buildFraudProof(job, [receipt(CHEAT, job, { outputs: wrong() }), receipt(CHEAT, job, { outputs: right(), award: awardCid(2) })])
    const sealed = sealMessage(REPORTERS[0] as Identity, 'fraud-proof', { v: 1, issuedAt: T + 200_000, expiresAt: T + 30 * 24 * HOUR, ...fields })
    assert.equal(v.take(openMessage(sealed.bytes, 'fraud-proof', { now: T + HOUR })), undefined)
    assert.equal(convictions[0]?.relayed, true)
    // a receipt of HONEST in a proof naming another subject: NOT_BY_SUBJECT
    const framed = proof(HONEST, wrong(), { by: REPORTERS[1] as Identity })
    assert.equal(v.take({ ...framed, payload: { ...framed.payload, subject: provider(7).peerId } }), ProofRefusal.INVALID)
    assert.equal(convictions.length, 1)
  })
})
