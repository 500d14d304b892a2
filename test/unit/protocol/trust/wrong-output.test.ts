import assert from 'node:assert/strict'
import { Identity } from '../../../../crypto/index.js'
import { MessageRejectedError, RejectReason, sealMessage, type FraudProof } from '../../../../protocol/index.js'
import { verifyFraudProof } from '../../../../protocol/trust/fraud-proof.js'
import { buildWrongOutputProof, checkWrongOutput, settleWrongOutput, type WrongOutputFields } from '../../../../protocol/trust/wrong-output.js'
import { HOUR, T, jobPayload, openedJob, outputs, provider, receipt } from '../../../helpers/trust-fixtures.js'

const P1 = provider(1)
const P2 = provider(2)
const REPORTER = new Identity(new Uint8Array(32).fill(9))
const NOW = T + HOUR
const enc = (s: string): Uint8Array => new TextEncoder().encode(s)
/** The fixture job's inputs: sum.wasm and data.txt (trust-fixtures INPUT and DATA). */
const INPUT_BYTES = [enc('(module)'), enc('1 2 3\n')]

const job = openedJob()
const wrong = receipt(P1, job, { outputs: outputs('7') })
const right = outputs('6')

function fields (extra: Partial<WrongOutputFields> = {}): WrongOutputFields {
  return { subject: P1.peerId, job: job.cid, kind: 'wrong-output', request: job.bytes, receipts: [wrong.bytes], inputs: INPUT_BYTES, ...extra }
}

function refused (f: WrongOutputFields | Uint8Array, reason: RejectReason, path?: string): void {
  const input = f instanceof Uint8Array ? f : { payload: { v: 1, issuedAt: T, expiresAt: T + HOUR, ...f } as FraudProof }
  assert.throws(() => checkWrongOutput(input, { now: NOW }), (err: unknown) => {
    assert.ok(err instanceof MessageRejectedError, String(err))
    assert.equal(err.reason, reason, err.message)
    if (path !== undefined) assert.equal(err.path, path)
    return true
  })
}

describe('protocol/trust/wrong-output', () => {
  it('a proof with inputs passes the pure checks pending, and a re-execution naming another output convicts the subject', () => {
    const built = buildWrongOutputProof(job, wrong, right, INPUT_BYTES)
    const bytes = sealMessage(REPORTER, 'fraud-proof', { v: 1, issuedAt: T + 200_000, expiresAt: T + 30 * 24 * HOUR, ...built }).bytes
    const pending = checkWrongOutput(bytes, { now: NOW })
    assert.equal(pending.subject, P1.peerId)
    assert.equal(pending.inputs?.length, 2)
    const verified = settleWrongOutput(pending, right)
    assert.equal(verified.subject, P1.peerId)
    assert.deepEqual(verified.outputs.map(String), [right, outputs('7')].map(String).sort())
  })

  it('without inputs it is pending too (the verifier fetches them by CID)', () => {
    const pending = checkWrongOutput({ payload: { v: 1, issuedAt: T, expiresAt: T + HOUR, ...fields({ inputs: undefined }) } }, { now: NOW })
    assert.equal(pending.inputs, undefined)
  })

  it('settle: a re-execution that agrees with the receipt refutes the proof (REEXECUTION_AGREES), and the builder never accuses on agreement', () => {
    const pending = checkWrongOutput({ payload: { v: 1, issuedAt: T, expiresAt: T + HOUR, ...fields() } }, { now: NOW })
    assert.throws(() => settleWrongOutput(pending, outputs('7')), { reason: RejectReason.REEXECUTION_AGREES })
    assert.throws(() => buildWrongOutputProof(job, wrong, outputs('7')), { reason: RejectReason.REEXECUTION_AGREES })
  })

  it('refuses a forged receipt (a flipped bit in its signature)', () => {
    const forged = Uint8Array.from(wrong.bytes)
    forged[forged.length - 1] = (forged[forged.length - 1] as number) ^ 1
    refused(fields({ receipts: [forged] }), RejectReason.BAD_SIGNATURE, 'receipts.0')
  })

  it('refuses a receipt signed by another key than the subject', () => {
    refused(fields({ receipts: [receipt(P2, job, { outputs: outputs('7') }).bytes] }), RejectReason.NOT_BY_SUBJECT, 'receipts.0')
    refused(fields({ subject: P2.peerId }), RejectReason.NOT_BY_SUBJECT, 'receipts.0')
  })

  it('refuses a job that is not deterministic', () => {
    const proc = openedJob(jobPayload({ executor: 'process' }))
    const r = receipt(P1, proc, { outputs: outputs('7') })
    refused(fields({ job: proc.cid, request: proc.bytes, receipts: [r.bytes] }), RejectReason.NOT_DETERMINISTIC, 'request')
  })

  it('refuses inputs that do not match the job: a changed blob, one missing, one too many, swapped', () => {
    refused(fields({ inputs: [INPUT_BYTES[0] as Uint8Array, enc('1 2 4\n')] }), RejectReason.INPUTS_MISMATCH, 'inputs.1')
    refused(fields({ inputs: [INPUT_BYTES[0] as Uint8Array] }), RejectReason.INPUTS_MISMATCH, 'inputs')
    refused(fields({ inputs: [...INPUT_BYTES, enc('')] }), RejectReason.INPUTS_MISMATCH, 'inputs')
    refused(fields({ inputs: [...INPUT_BYTES].reverse() }), RejectReason.INPUTS_MISMATCH, 'inputs.0')
    // and a receipt that lists other inputs than the request
    const other = receipt(P1, job, { outputs: outputs('7'), inputs: [job.payload.workload.inputs[0]!.cid] })
    refused(fields({ receipts: [other.bytes] }), RejectReason.INPUTS_MISMATCH, 'receipts.0.inputs')
  })

  it('refuses a run that did not end on its own (128 + a signal) and takes 127; refuses a request of another job', () => {
    refused(fields({ receipts: [receipt(P1, job, { outputs: outputs('7'), exitCode: 128 }).bytes] }), RejectReason.INCOMPLETE_RUN, 'receipts.0.exitCode')
    const at127 = receipt(P1, job, { outputs: outputs('7'), exitCode: 127 })
    assert.equal(checkWrongOutput({ payload: { v: 1, issuedAt: T, expiresAt: T + HOUR, ...fields({ receipts: [at127.bytes] }) } }, { now: NOW }).receipt.payload.exitCode, 127)
    const other = openedJob(jobPayload({ argv: ['sum.wasm', 'other'] }))
    refused(fields({ request: other.bytes }), RejectReason.EMBEDDED_MISMATCH, 'request')
  })

  it('refuses other than exactly one receipt, and keeps the two kinds apart', () => {
    refused(fields({ receipts: [wrong.bytes, receipt(P1, job, { outputs: outputs('8') }).bytes] }), RejectReason.INVALID_FIELD, 'receipts')
    refused(fields({ kind: 'conflicting-receipts' }), RejectReason.INVALID_FIELD, 'kind')
    assert.throws(() => verifyFraudProof({ payload: { v: 1, issuedAt: T, expiresAt: T + HOUR, ...fields() } }, { now: NOW }), { reason: RejectReason.INVALID_FIELD })
  })
})
