import assert from 'node:assert/strict'
import fc from 'fast-check'
import { Identity } from '../../../../crypto/index.js'
import { KINDS, MessageRejectedError, RejectReason, openMessage, sealMessage, type FraudProof, type OpenedMessage } from '../../../../protocol/index.js'
import { buildFraudProof, isDeterministic, verifyFraudProof, type FraudProofFields } from '../../../../protocol/trust/fraud-proof.js'
import { DATA, HOUR, INPUT, REQUESTER, T, awardCid, jobPayload, openedJob, outputs, provider, receipt } from '../../../helpers/trust-fixtures.js'

const P1 = provider(1)
const P2 = provider(2)
const REPORTER = new Identity(new Uint8Array(32).fill(9))
const NOW = T + HOUR

const job = openedJob()
const r6 = receipt(P1, job, { outputs: outputs('6') })
const r7 = receipt(P1, job, { outputs: outputs('7'), award: awardCid(2) })

function seal (fields: FraudProofFields, issuedAt = T + 200_000): Uint8Array {
  return sealMessage(REPORTER, 'fraud-proof', { v: 1, issuedAt, expiresAt: issuedAt + 30 * 24 * HOUR, ...fields }).bytes
}

/** A proof made by hand (bypassing the builder's own checks), so each refusal can be reached. */
function handMade (receipts: Array<OpenedMessage<'receipt'>>, extra: Partial<FraudProofFields> = {}): FraudProofFields {
  return { subject: P1.peerId, job: job.cid, kind: 'conflicting-receipts', request: job.bytes, receipts: receipts.map((r) => r.bytes), ...extra }
}

function refused (proof: Uint8Array | FraudProofFields, reason: RejectReason, path?: string): void {
  const input = proof instanceof Uint8Array ? proof : { payload: { v: 1, issuedAt: T, expiresAt: T + HOUR, ...proof } as FraudProof }
  assert.throws(() => verifyFraudProof(input, { now: NOW }), (err: unknown) => {
    assert.ok(err instanceof MessageRejectedError, String(err))
    assert.equal(err.reason, reason, err.message)
    if (path !== undefined) assert.equal(err.path, path)
    return true
  })
}

describe('protocol/trust/fraud-proof', () => {
  it('verifies a proof of exactly two receipts with different outputs, from its envelope bytes alone', () => {
    const fields = buildFraudProof(job, [r6, r7])
    assert.equal(fields.receipts.length, 2)
    const verified = verifyFraudProof(seal(fields), { now: NOW })
    assert.equal(verified.subject, P1.peerId)
    assert.ok(verified.job.equals(job.cid))
    assert.deepEqual(verified.outputs.map(String), [outputs('6'), outputs('7')].map(String).sort())
  })

  it('refuses receipts signed by another peer than the subject, even with the same outputs as the subject\'s', () => {
    const framed = receipt(P2, job, { outputs: outputs('7') })
    refused(handMade([r6, framed]), RejectReason.NOT_BY_SUBJECT, 'receipts.1')
    refused(handMade([r6, r7], { subject: P2.peerId }), RejectReason.NOT_BY_SUBJECT, 'receipts.0')
    assert.throws(() => buildFraudProof(job, [r6, framed]), { reason: RejectReason.NOT_BY_SUBJECT })
    // Another signer's receipt that one-per-output would drop (same output as r6, later CID) is still refused.
    const shadow = [2, 3, 4, 5, 6, 7, 8].map((n) => receipt(P2, job, { outputs: outputs('6'), award: awardCid(n) })).find((r) => r.cid.toString() > r6.cid.toString())
    assert.ok(shadow !== undefined)
    assert.throws(() => buildFraudProof(job, [r6, r7, shadow]), { reason: RejectReason.NOT_BY_SUBJECT })
  })

  it('refuses a request that is not the proof\'s job, and a receipt for another job', () => {
    const other = openedJob(jobPayload({ argv: ['sum.wasm', 'other'] }))
    refused(handMade([r6, r7], { request: other.bytes }), RejectReason.EMBEDDED_MISMATCH, 'request')
    const elsewhere = receipt(P1, other, { outputs: outputs('8') })
    refused(handMade([r6, elsewhere]), RejectReason.EMBEDDED_MISMATCH, 'receipts.1')
  })

  it('refuses a job that is not wasm: process and docker runs may differ honestly', () => {
    for (const executor of ['process', 'docker'] as const) {
      const nondet = openedJob(jobPayload({ executor }))
      assert.equal(isDeterministic(nondet.payload), false)
      const a = receipt(P1, nondet, { outputs: outputs('6'), executor })
      const b = receipt(P1, nondet, { outputs: outputs('7'), executor })
      refused(handMade([a, b], { job: nondet.cid, request: nondet.bytes }), RejectReason.NOT_DETERMINISTIC, 'request')
    }
    assert.equal(isDeterministic(job.payload), true)
  })

  it('refuses receipts whose inputs are not the job\'s, in its order', () => {
    refused(handMade([r6, receipt(P1, job, { outputs: outputs('7'), inputs: [DATA, INPUT] })]), RejectReason.INPUTS_MISMATCH, 'receipts.1.inputs')
    refused(handMade([r6, receipt(P1, job, { outputs: outputs('7'), inputs: [INPUT] })]), RejectReason.INPUTS_MISMATCH, 'receipts.1.inputs')
    refused(handMade([r6, receipt(P1, job, { outputs: outputs('7'), inputs: [INPUT, DATA, DATA] })]), RejectReason.INPUTS_MISMATCH, 'receipts.1.inputs')
  })

  it('takes exit codes 0 … 127 and refuses −1 and 128 + a signal', () => {
    assert.equal(verifyFraudProof(seal(handMade([r6, receipt(P1, job, { outputs: outputs('7'), exitCode: 127 })])), { now: NOW }).outputs.length, 2)
    assert.equal(verifyFraudProof(seal(handMade([receipt(P1, job, { exitCode: 1 }), r7])), { now: NOW }).outputs.length, 2)
    for (const exitCode of [-1, 128, 137, 255]) {
      refused(handMade([r6, receipt(P1, job, { outputs: outputs('7'), exitCode })]), RejectReason.INCOMPLETE_RUN, 'receipts.1.exitCode')
    }
  })

  it('refuses receipts that all name one output', () => {
    const again = receipt(P1, job, { outputs: outputs('6'), award: awardCid(2) })
    refused(handMade([r6, again]), RejectReason.NO_CONFLICT, 'receipts')
    assert.throws(() => buildFraudProof(job, [r6, again]), { reason: RejectReason.NO_CONFLICT })
    assert.throws(() => buildFraudProof(job, []), { reason: RejectReason.NO_CONFLICT })
  })

  it('refuses an embedded envelope that is not a sound receipt, naming where it sits', () => {
    refused(handMade([r6], { receipts: [r6.bytes, job.bytes] }), RejectReason.WRONG_PAYLOAD_TYPE, 'receipts.1')
    const tampered = Uint8Array.from(r7.bytes)
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1
    refused(handMade([r6], { receipts: [r6.bytes, tampered] }), RejectReason.BAD_SIGNATURE, 'receipts.1')
    refused(handMade([r6, r7], { request: r6.bytes }), RejectReason.WRONG_PAYLOAD_TYPE, 'request')
  })

  it('checks the proof envelope itself when given bytes: freshness applies to it, not to what it embeds', () => {
    const fields = buildFraudProof(job, [r6, r7])
    // The job request expired an hour after T; the proof, issued a day later, still verifies.
    assert.equal(verifyFraudProof(seal(fields, T + 24 * HOUR), { now: T + 24 * HOUR + 1 }).subject, P1.peerId)
    refused(seal(fields, NOW - 30 * 24 * HOUR), RejectReason.EXPIRED)
    refused(seal(fields, NOW + 30_001), RejectReason.FUTURE_DATED)
  })

  it('builds at most five receipts, one per output, and the same proof from any order of the receipts', () => {
    const many = ['1', '2', '3', '4', '5', '6', '7'].map((o, i) => receipt(P1, job, { outputs: outputs(o), award: awardCid(i + 1) }))
    const dup = receipt(P1, job, { outputs: outputs('1'), award: awardCid(99) })
    const reference = buildFraudProof(job, [...many, dup])
    assert.equal(reference.receipts.length, 5)
    assert.equal(verifyFraudProof(seal(reference), { now: NOW }).outputs.length, 5)
    fc.assert(fc.property(fc.shuffledSubarray([...many, dup], { minLength: 8, maxLength: 8 }), (shuffled) => {
      assert.deepEqual(buildFraudProof(job, shuffled), reference)
    }), { numRuns: 50 })
  })

  it('property: any two or more receipts of the subject with at least two outputs verify; one output never does', () => {
    const labels = fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 2, maxLength: 5 })
    fc.assert(fc.property(labels, (outs) => {
      const rs = outs.map((o, i) => receipt(P1, job, { outputs: outputs(o), award: awardCid(i) }))
      const fields = handMade(rs)
      if (new Set(outs).size >= 2) assert.equal(verifyFraudProof(seal(fields), { now: NOW }).outputs.length, new Set(outs).size)
      else refused(fields, RejectReason.NO_CONFLICT)
    }), { numRuns: 30 })
  })

  it('the kind\'s size limit holds the largest proof the schema allows: a 64 KiB request and five 16 KiB receipts', () => {
    const largest = handMade([], { request: new Uint8Array(65_536), receipts: Array.from({ length: 5 }, () => new Uint8Array(16_384)) })
    const bytes = seal(largest)
    assert.ok(bytes.byteLength <= KINDS['fraud-proof'].maxBytes, String(bytes.byteLength))
    assert.equal(openMessage(bytes, 'fraud-proof', { now: NOW }).payload.receipts.length, 5)
    assert.throws(() => seal({ ...largest, request: new Uint8Array(65_537) }), { reason: RejectReason.INVALID_FIELD })
    assert.throws(() => seal({ ...largest, receipts: [...largest.receipts, r6.bytes] }), { reason: RejectReason.INVALID_FIELD })
  })

  it('needs no requester signature on the embedded request: the payload is the job', () => {
    const resigned = openedJob(job.payload, REPORTER)
    assert.ok(resigned.cid.equals(job.cid))
    assert.equal(verifyFraudProof(seal(handMade([r6, r7], { request: resigned.bytes })), { now: NOW }).subject, P1.peerId)
    assert.equal(REQUESTER.peerId === REPORTER.peerId, false)
  })
})
