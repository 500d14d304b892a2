/**
 * npm run bench:crypto — Ed25519 sign/verify per second for both implementations, and signed
 * envelope seal/open per second for gpumesh messages, on one core (all work here is synchronous).
 * Target (issue 2): the native path opens at least 8,000 envelopes per second.
 */
import '../node/polyfill.js'
import { cpus } from 'node:os'
import { Identity, NobleEd25519, type Ed25519 } from '../crypto/index.js'
import { NativeEd25519 } from '../node/ed25519-native.js'
import { randomNonce } from '../node/random.js'
import { openMessage, sealMessage, type Bid, type JobRequest } from '../protocol/index.js'
import { measure, printTable, type Rate } from './measure.js'

const MS = Number(process.env.BENCH_MS ?? 1000)
const now = Date.now()
const message = new Uint8Array(200).fill(7)

function ed25519Rows (impl: Ed25519): Rate[] {
  const seed = new Uint8Array(32).fill(5)
  const publicKey = impl.publicKey(seed)
  const signature = impl.sign(seed, message)
  return [
    measure(`${impl.name} sign (200 B)`, () => impl.sign(seed, message), MS),
    measure(`${impl.name} verify (200 B)`, () => { if (!impl.verify(publicKey, message, signature)) throw new Error('verify failed') }, MS)
  ]
}

function job (): JobRequest {
  return {
    v: 1, issuedAt: now, expiresAt: now + 3_600_000, nonce: randomNonce(),
    workload: { executor: 'process', argv: ['python3', 'infer.py', '--batch', '64'], env: { HF_HOME: '/cache' }, inputs: [], outputs: ['out.jsonl'], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: [], cpuCores: 8, memoryMiB: 65_536, diskMiB: 20_480 },
    sla: { tier: 'silver', maxPrice: 2_500_000, maxStartDelaySec: 120 },
    placement: { regions: ['eu'], residency: 'prefer' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule: 'first-price' }
  }
}

function seedOf (i: number): Uint8Array {
  const seed = new Uint8Array(32)
  new DataView(seed.buffer).setUint32(0, i + 1)
  return seed
}

function envelopeRows (impl: Ed25519): Rate[] {
  const identity = new Identity(new Uint8Array(32).fill(9), impl)
  const jobSealed = sealMessage(identity, 'job-request', job())
  const bid: Bid = {
    v: 1, issuedAt: now, expiresAt: now + 60_000, job: jobSealed.cid, provider: identity.peerId, price: 1_850_000,
    gpus: ['GPU-5f2c9a3e-1b7d-4c1e-9a0f-2b3c4d5e6f70'], model: 'nvidia-h100-80gb-hbm3', vramMiB: 81_559,
    region: 'eu-west', startBy: now + 30_000, ad: jobSealed.cid
  }
  const bidSealed = sealMessage(identity, 'bid', bid)
  // 5,000 signers cycled through a 4,096-key cache: every open imports and checks a new key, as
  // when a flood comes from fresh identities
  const coldBids = Array.from({ length: 5000 }, (_, i) => {
    const signer = new Identity(seedOf(i), impl)
    return sealMessage(signer, 'bid', { ...bid, provider: signer.peerId }).bytes
  })
  const cold = impl instanceof NativeEd25519 ? new NativeEd25519() : new NobleEd25519()
  return [
    measure(`${impl.name} seal bid (${bidSealed.bytes.byteLength} B)`, () => sealMessage(identity, 'bid', bid), MS),
    measure(`${impl.name} open bid`, () => openMessage(bidSealed.bytes, 'bid', { now, ed25519: impl }), MS),
    measure(`${impl.name} open bid, new signer each time`, (i) => openMessage(coldBids[i % coldBids.length] as Uint8Array, 'bid', { now, ed25519: cold }), MS),
    measure(`${impl.name} seal job request (${jobSealed.bytes.byteLength} B)`, () => sealMessage(identity, 'job-request', jobSealed.payload), MS),
    measure(`${impl.name} open job request`, () => openMessage(jobSealed.bytes, 'job-request', { now, ed25519: impl }), MS)
  ]
}

const native = new NativeEd25519()
const noble = new NobleEd25519()
console.log(`gpumesh bench:crypto — Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, one core, ${MS} ms per row\n`)
const rows = [...ed25519Rows(native), ...ed25519Rows(noble), ...envelopeRows(native), ...envelopeRows(noble)]
printTable(rows)

const rate = (name: string): number => rows.find((r) => r.name.startsWith(name))?.perSecond ?? NaN
console.log('\nratios')
console.log(`  native/noble verify: ${(rate('node:crypto verify') / rate('@noble/ed25519 verify')).toFixed(1)}×`)
console.log(`  native/noble sign:   ${(rate('node:crypto sign') / rate('@noble/ed25519 sign')).toFixed(1)}×`)
console.log(`  native open bid / raw verify: ${(rate('node:crypto open bid') / rate('node:crypto verify')).toFixed(2)} (envelope + schema overhead)`)
console.log(`  native open bid, cold/warm key cache: ${(rate('node:crypto open bid, new') / rate('node:crypto open bid')).toFixed(2)}`)
const target = 8000
const openBid = rate('node:crypto open bid')
const openJob = rate('node:crypto open job request')
console.log(`\ntarget: native open ≥ ${target}/s on one core — bid ${Math.round(openBid)}/s, job request ${Math.round(openJob)}/s: ${Math.min(openBid, openJob) >= target ? 'met' : 'NOT met'}`)
