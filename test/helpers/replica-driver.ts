/**
 * Replicated and spot-checked jobs on the requester-agent Driver: a job with `verification` and
 * inputs, providers on distinct networks (unless told), and a replica delivered with a signed receipt
 * naming the outputs it claims. Shared by the replica tests of the requester agent.
 */
import { cidOfRaw, cidOfValue, type CID } from '../../crypto/index.js'
import { createMarketParams, openMessage, sealMessage, type JobRequest, type OpenedMessage, type Receipt, type RequesterTrustOptions } from '../../protocol/index.js'
import { Driver, LEASE, NOW, REQUESTER, identity, jobPayload, peer } from './requester-agent-driver.js'

export const INPUT = cidOfRaw(new TextEncoder().encode('(module)'))

/** A job with `verification`, one input; `wasm` makes it deterministic. */
export function verifiedJob (verification: JobRequest['verification'], executor: 'process' | 'wasm' = 'process'): JobRequest {
  const base = jobPayload({ verification })
  return { ...base, workload: { ...base.workload, executor, inputs: [{ path: 'in.bin', cid: INPUT, size: 8 }] } }
}

const OWN_NET = new Map(Array.from({ length: 16 }, (_, i) => [peer(i), `/ip4/10.${i}.0.1/tcp/4001`]))

/** Provider i (0 … 15) sits in its own /16 (10.i.0.0/16) unless `nets` says otherwise. */
export function addressesOf (nets: ReadonlyMap<string, string> = new Map()): (p: string) => string[] | undefined {
  return (p) => {
    const addr = nets.get(p) ?? OWN_NET.get(p)
    return addr === undefined ? undefined : [addr]
  }
}

/** A driver whose agent replicates; the proof audit is off unless `trust` turns it on (its own tests do). */
export function replicaDriver (request: JobRequest, trust: RequesterTrustOptions = { addresses: addressesOf(), auditUnproven: false }): Driver {
  return new Driver(request, createMarketParams({ leaseMs: LEASE }), trust)
}

/** The outputs manifest CID of a run whose one file holds `content`. */
export function outputsOf (content: string): CID {
  const bytes = new TextEncoder().encode(content)
  return cidOfValue({ files: [{ path: 'out.json', size: bytes.byteLength, cid: cidOfRaw(bytes) }] }).cid
}

/** Provider i's signed receipt of the driver's job, naming `content`'s outputs. */
export function receiptBy (d: Driver, i: number, content: string, attempt: number): OpenedMessage<'receipt'> {
  const payload: Receipt = {
    v: 1,
    issuedAt: d.now,
    expiresAt: d.now + 3_600_000,
    job: d.cid,
    award: cidOfValue({ award: attempt, provider: i }).cid,
    requester: REQUESTER,
    inputs: d.request.workload.inputs.map((x) => x.cid),
    outputs: outputsOf(content),
    exitCode: 0,
    startedAt: NOW,
    endedAt: d.now,
    gpuSeconds: 10,
    gpus: [],
    executor: d.request.workload.executor
  }
  return openMessage(sealMessage(identity(i), 'receipt', payload).bytes, 'receipt', { now: d.now, historical: true })
}

/** Accept, run `seconds`, and deliver a receipt of `content`'s outputs, verified. */
export function deliverReplica (d: Driver, i: number, content: string, attempt = 1, seconds = 10): OpenedMessage<'receipt'> {
  d.from(i, { type: 'award-response', decision: 'accept' }, attempt)
  d.from(i, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 }, attempt)
  d.runTo(d.now + seconds * 1000)
  const receipt = receiptBy(d, i, content, attempt)
  d.from(i, { type: 'receipt', exitCode: 0, gpuSeconds: seconds, forThisRequester: true, receipt }, attempt)
  d.from(i, { type: 'outputs-verified', files: 1 }, attempt)
  return receipt
}
