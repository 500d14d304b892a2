/**
 * npm run bench:trust — what the reputation layer (protocol/trust/reputation.ts) costs (issue 11):
 *  - evidence validations per second: open + verify + schema-check real signed envelopes (payments,
 *    failure reports, probe results) with the native Ed25519, warm (64 signers) and cold (5,000 signers
 *    through the 4,096-key cache), then map each to its record and fold it into a store;
 *  - reputation update cost as evidence grows (10k, 100k, 1M records): the time per record folded in, the
 *    trust recomputation (personalised PageRank over every pair) the first score after new evidence pays,
 *    a score with trust cached, a snapshot and its load, and the heap the store holds.
 * BENCH_MS (default 1000) per rate row; BENCH_RECORDS (default 10000,100000,1000000) for the sizes.
 */
import '../node/polyfill.js'
import { cpus } from 'node:os'
import { Identity, cidOfValue } from '../crypto/index.js'
import { NativeEd25519 } from '../node/ed25519-native.js'
import { randomNonce } from '../node/random.js'
import { openMessage, sealMessage, type PayloadOf } from '../protocol/index.js'
import { ReputationStore, type Evidence } from '../protocol/trust/reputation.js'
import { evidenceFromMessage, type EvidenceMessageKind } from '../protocol/trust/reputation-evidence.js'
import { measure, printTable } from './measure.js'

const MS = Number(process.env.BENCH_MS ?? 1000)
const SIZES = (process.env.BENCH_RECORDS ?? '10000,100000,1000000').split(',').map(Number)
const now = Date.now()
const native = new NativeEd25519()
const gc = (globalThis as { gc?: () => void }).gc

function seedOf (i: number): Uint8Array {
  const seed = new Uint8Array(32)
  new DataView(seed.buffer).setUint32(0, i + 1)
  return seed
}

const job = cidOfValue({ bench: 'trust' }).cid
const subject = new Identity(seedOf(1_000_000), native).peerId

function payloadOf (kind: EvidenceMessageKind, signer: Identity, i: number): PayloadOf<EvidenceMessageKind> {
  const header = { v: 1 as const, issuedAt: now - 1000, expiresAt: now + 86_400_000 }
  switch (kind) {
    case 'payment': return { ...header, job, award: job, payee: subject, seq: i, interval: i, cumulative: 1000 * i, gpuSeconds: 60 * i }
    case 'failure-report': return { ...header, job, subject, reason: 'no-heartbeat', observedAt: now - 1000, evidence: [] }
    case 'probe-result': return { ...header, subject, nonce: randomNonce(), kind: 'freivalds-matmul', ok: true, rttMs: 40, durationMs: 900, size: 1024 }
  }
}

function envelopes (kind: EvidenceMessageKind, signers: number, count: number): Uint8Array[] {
  const ids = Array.from({ length: signers }, (_, i) => new Identity(seedOf(i), native))
  return Array.from({ length: count }, (_, i) => sealMessage(ids[i % signers] as Identity, kind, payloadOf(kind, ids[i % signers] as Identity, i) as never).bytes)
}

console.log(`gpumesh bench:trust — Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, one core, ${MS} ms per row${gc === undefined ? ' (no --expose-gc: heap figures are rough)' : ''}\n`)
console.log('evidence validations (open + verify + schema-check, node:crypto Ed25519)')
const rows = []
const me = new Identity(seedOf(999_999), native).peerId
for (const kind of ['payment', 'failure-report', 'probe-result'] as const) {
  const warm = envelopes(kind, 64, 4096)
  const cold = envelopes(kind, 5000, 5000)
  rows.push(measure(`${kind} (${warm[0]?.byteLength ?? 0} B), warm keys`, (i) => openMessage(warm[i % warm.length] as Uint8Array, kind, { now, ed25519: native }), MS))
  const coldVerifier = new NativeEd25519()
  rows.push(measure(`${kind}, new signer each time`, (i) => openMessage(cold[i % cold.length] as Uint8Array, kind, { now, ed25519: coldVerifier }), MS))
  const store = new ReputationStore(me)
  rows.push(measure(`${kind}, warm keys, then folded into the store`, (i) => { store.add(evidenceFromMessage(openMessage(warm[i % warm.length] as Uint8Array, kind, { now, ed25519: native }))) }, MS))
}
printTable(rows)

/** A deterministic stream of records: 1,000 reporters (10 % of them this node) about 10,000 providers. */
function* records (n: number): Generator<Evidence> {
  let x = 0x2545f491
  const next = (m: number): number => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return (x >>> 0) % m }
  const peer = (i: number): string => `12D3KooW${String(i).padStart(44, '0')}`
  for (let i = 0; i < n; i++) {
    const signer = next(10) === 0 ? me : peer(next(1000))
    const at = now - next(60 * 86_400) * 1000
    const r = next(20)
    yield r === 0
      ? { signer, subject: peer(next(10_000)), kind: 'failure', reason: 'no-heartbeat', at }
      : r === 1 ? { signer, subject: peer(next(10_000)), kind: 'probe', ok: next(4) !== 0, at } : { signer, subject: peer(next(10_000)), kind: 'settlement', at }
  }
}

const heap = (): number => { gc?.(); return process.memoryUsage().heapUsed }
console.log('\nreputation update cost as evidence grows (1,000 reporters, 10,000 providers, 60 days of records)')
console.log('records     per record* trust recompute  score (cached)  snapshot+load   pairs held  dropped   heap held   per pair')
for (const n of SIZES) {
  const before = heap()
  const store = new ReputationStore(me)
  // the records are made as they are folded in (kept, 1M would hold ≈ 200 MB beside the store): the time includes making each
  let t = performance.now()
  for (const e of records(n)) store.add(e)
  const addNs = (performance.now() - t) * 1e6 / n
  const held = heap() - before
  const probe = '12D3KooW' + String(42).padStart(44, '0')
  t = performance.now()
  store.score(probe, now)
  const trustMs = performance.now() - t
  const cached = measure('score', (i) => store.score('12D3KooW' + String(i % 10_000).padStart(44, '0'), now), Math.min(MS, 500))
  t = performance.now()
  const again = new ReputationStore(me)
  again.load(structuredClone(store.snapshot()))
  const snapMs = performance.now() - t
  const size = store.size()
  console.log(`${n.toLocaleString('en-US').padEnd(11)} ${`${addNs.toFixed(0)} ns`.padStart(10)}  ${`${trustMs.toFixed(1)} ms`.padStart(15)}  ${`${(1e6 / cached.perSecond).toFixed(1)} µs`.padStart(14)}  ${`${snapMs.toFixed(0)} ms`.padStart(13)}  ${size.pairs.toLocaleString('en-US').padStart(11)}  ${store.dropped.toLocaleString('en-US').padStart(7)}  ${`${(held / 2 ** 20).toFixed(1)} MiB`.padStart(10)}  ${`${(held / size.pairs).toFixed(0)} B`.padStart(9)}`)
  if (again.score(probe, now) !== store.score(probe, now)) throw new Error('a loaded snapshot scored differently')
}
console.log('* making the record included; trust recompute: the first score after new evidence; snapshot+load: through structuredClone')
