/**
 * fast-check arbitraries that produce valid payloads of every message kind, fresh at NOW.
 */
import fc from 'fast-check'
import { Identity, cidOfRaw, cidOfValue, peerIdFromPublicKey } from '../../crypto/index.js'
import { DEFAULT_CLOCK_SKEW_MS, KINDS, type Kind, type PayloadOf } from '../../protocol/index.js'

/** The identity that signs generated messages (a bid must name its signer as `provider`). */
export const SIGNER = new Identity(new Uint8Array(32).fill(1))

/** 2026-01-01T00:00:00Z: the receivers' clock in property tests. */
export const NOW = 1_767_225_600_000

const uint = fc.integer({ min: 0, max: 2 ** 40 })
const small = fc.integer({ min: 0, max: 1_000_000 })
const slug = fc.stringMatching(/^[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}$/)
const region = fc.stringMatching(/^[a-z]{2}(-[a-z0-9]{1,6}){0,2}$/)
const country = fc.stringMatching(/^[A-Z]{2}$/)
const text = (max: number) => fc.oneof(fc.string({ maxLength: Math.min(max, 24) }), fc.string({ maxLength: Math.min(max, 8), unit: 'grapheme' }))
const blobCid = fc.uint8Array({ maxLength: 48 }).map((b) => cidOfRaw(b))
const cid = fc.jsonValue({ maxDepth: 2 }).map((v) => cidOfValue(v).cid)
const contentCid = fc.oneof(blobCid, cid)
const peerId = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(peerIdFromPublicKey)
const nonce = fc.uint8Array({ minLength: 8, maxLength: 32 })
const gpuUuid = fc.stringMatching(/^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}$/)
const segment = fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/).filter((s) => s !== '.' && s !== '..')
const relativePath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'))
const bytes = (max: number) => fc.uint8Array({ minLength: 1, maxLength: max })
const weeklyWindow = fc.record({ day: fc.integer({ min: 1, max: 7 }), start: fc.integer({ min: 0, max: 1439 }) })
  .chain((w) => fc.integer({ min: w.start + 1, max: 1440 }).map((end) => ({ ...w, end })))
const executor = fc.constantFrom('process' as const, 'docker' as const, 'wasm' as const)

/** An object with `required` keys always present and `optional` ones present or absent (never undefined). */
function obj<R extends Record<string, fc.Arbitrary<unknown>>, O extends Record<string, fc.Arbitrary<unknown>>> (required: R, optional: O = {} as O):
fc.Arbitrary<{ [K in keyof R]: R[K] extends fc.Arbitrary<infer T> ? T : never } & { [K in keyof O]?: O[K] extends fc.Arbitrary<infer T> ? T : never }> {
  return fc.record({ ...required, ...optional }, { requiredKeys: Object.keys(required) }) as never
}

/**
 * A header fresh at NOW: mostly issued around NOW, and now and then at the edges a receiver still
 * accepts at NOW — issued exactly the clock-skew allowance ahead, expiring 1 ms after NOW, or living
 * exactly its kind's longest lifetime.
 */
function header (kind: Kind) {
  const maxLifetime = KINDS[kind].maxLifetimeMs
  const lifetime = fc.integer({ min: 120_000, max: maxLifetime })
  const around = fc.record({ issuedAt: fc.integer({ min: NOW - 60_000, max: NOW + 10_000 }), lifetime })
  const edge = fc.oneof(
    lifetime.map((l) => ({ issuedAt: NOW + DEFAULT_CLOCK_SKEW_MS, lifetime: l })),
    lifetime.map((l) => ({ issuedAt: NOW + 1 - l, lifetime: l })),
    fc.integer({ min: NOW - 60_000, max: NOW + DEFAULT_CLOCK_SKEW_MS }).map((issuedAt) => ({ issuedAt, lifetime: maxLifetime }))
  )
  return fc.oneof({ weight: 4, arbitrary: around }, { weight: 1, arbitrary: edge })
    .map(({ issuedAt, lifetime }) => ({ v: 1 as const, issuedAt, expiresAt: issuedAt + lifetime }))
}

function withHeader<K extends Kind> (kind: K, body: fc.Arbitrary<object>): fc.Arbitrary<PayloadOf<K>> {
  return fc.tuple(header(kind), body).map(([h, b]) => ({ ...h, ...b }) as PayloadOf<K>)
}

const gpu = obj({
  index: fc.integer({ min: 0, max: 63 }),
  uuid: gpuUuid,
  name: text(96),
  model: slug,
  vramMiB: small,
  provenance: fc.constantFrom('detected' as const, 'declared' as const)
}, { driver: fc.stringMatching(/^[0-9]{3}\.[0-9]{2,3}$/), powerLimitW: fc.integer({ min: 50, max: 1500 }) })

export const payloads: { [K in Kind]: fc.Arbitrary<PayloadOf<K>> } = {
  'capability-ad': withHeader('capability-ad', obj({
    seq: uint,
    gpus: fc.array(gpu, { maxLength: 4 }),
    host: obj({ cpuCores: small, memoryMiB: small, diskGiB: small }),
    region,
    price: obj({ floor: uint }, { peak: obj({ price: uint, windows: fc.array(weeklyWindow, { minLength: 1, maxLength: 3 }) }) }),
    availability: obj({ timeZone: fc.constantFrom('UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5'), windows: fc.array(weeklyWindow, { maxLength: 4 }) }),
    workloads: fc.uniqueArray(executor, { minLength: 1, maxLength: 3 }),
    limits: obj({}, { maxPowerW: small, maxTempC: fc.integer({ min: 40, max: 110 }) }),
    attestations: fc.array(cid, { maxLength: 2 }),
    addrs: fc.array(fc.constantFrom('/ip4/127.0.0.1/tcp/4001', '/dns4/gpu.example.org/tcp/443/wss'), { maxLength: 2 })
  }, { country })),
  'job-request': withHeader('job-request', obj({
    nonce,
    workload: obj({
      executor,
      argv: fc.array(text(4096), { minLength: 1, maxLength: 4 }),
      env: fc.dictionary(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,10}$/), text(64), { maxKeys: 4 }),
      inputs: fc.array(obj({ path: relativePath, cid: contentCid, size: uint }), { maxLength: 3 }),
      outputs: fc.array(relativePath, { maxLength: 3 }),
      maxRuntimeSec: fc.integer({ min: 1, max: 30 * 24 * 3600 }),
      network: fc.boolean()
    }, { image: fc.constantFrom('ghcr.io/org/train:1.2', 'python:3.12-slim') }),
    resources: obj({ gpus: fc.integer({ min: 0, max: 64 }), minVramGB: fc.integer({ min: 0, max: 192 }), models: fc.array(slug, { maxLength: 3 }), cpuCores: small, memoryMiB: small, diskMiB: small }),
    sla: obj({ tier: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const), maxPrice: uint, maxStartDelaySec: small }),
    placement: obj({ regions: fc.array(region, { maxLength: 3 }), residency: fc.constantFrom('strict' as const, 'prefer' as const) }),
    verification: fc.oneof(
      fc.constant({ mode: 'none' as const }),
      fc.integer({ min: 2, max: 5 }).map((k) => ({ mode: 'replicate' as const, k })),
      fc.integer({ min: 1, max: 1000 }).map((perMille) => ({ mode: 'spotcheck' as const, perMille }))
    ),
    auction: obj({ bidWindowMs: fc.integer({ min: 50, max: 600_000 }), paymentRule: fc.constantFrom('first-price' as const, 'second-score' as const) })
  }, { label: text(128), meta: fc.uint8Array({ maxLength: 64 }) })),
  bid: withHeader('bid', obj({
    job: cid, provider: fc.constant(SIGNER.peerId), price: uint, gpus: fc.array(gpuUuid, { maxLength: 8 }), model: slug, vramMiB: small, region, startBy: uint, ad: cid
  }, { country, attestation: cid })),
  award: withHeader('award', fc.uniqueArray(cid, { minLength: 1, maxLength: 6, selector: (c) => c.toString() }).chain((bids) => obj({
    job: cid,
    attempt: fc.integer({ min: 1, max: 16 }),
    winner: peerId,
    bid: fc.constantFrom(...bids),
    price: uint,
    paymentRule: fc.constantFrom('first-price' as const, 'second-score' as const),
    considered: fc.constant([...bids].sort((a, b) => a.toString() < b.toString() ? -1 : 1)),
    excluded: fc.array(peerId, { maxLength: 3 }),
    leaseMs: fc.integer({ min: 1_000, max: 3_600_000 }),
    billingIntervalSec: fc.integer({ min: 1, max: 86_400 })
  }))),
  'award-response': withHeader('award-response', obj({
    job: cid, award: cid, decision: fc.constantFrom('accept' as const, 'decline' as const)
  }, { reason: text(256) })),
  'job-status': withHeader('job-status', obj({
    job: cid, award: cid, seq: uint, gpuSeconds: uint,
    state: fc.constantFrom('accepted' as const, 'fetching-inputs' as const, 'running' as const, 'uploading' as const, 'completed' as const, 'failed' as const, 'preempted' as const, 'cancelled' as const)
  }, { message: text(512) })),
  receipt: withHeader('receipt', fc.tuple(uint, small).chain(([startedAt, duration]) => obj({
    job: cid, award: cid, requester: peerId, inputs: fc.array(contentCid, { maxLength: 3 }), outputs: cid,
    exitCode: fc.integer({ min: -1, max: 255 }), startedAt: fc.constant(startedAt), endedAt: fc.constant(startedAt + duration),
    gpuSeconds: uint, gpus: fc.array(gpuUuid, { maxLength: 4 }), executor
  }, { logs: blobCid, attestation: cid }))),
  payment: withHeader('payment', obj({
    job: cid, award: cid, payee: peerId, seq: uint, interval: uint, cumulative: uint, gpuSeconds: uint
  })),
  'failure-report': withHeader('failure-report', obj({
    job: cid, subject: peerId, observedAt: uint, evidence: fc.array(bytes(64), { maxLength: 3 }),
    reason: fc.constantFrom('no-heartbeat' as const, 'declined' as const, 'no-show' as const, 'crashed' as const, 'output-mismatch' as const, 'bad-receipt' as const, 'nonpayment' as const, 'preempted' as const, 'cancelled' as const, 'timeout' as const)
  }, { detail: text(512) })),
  attestation: withHeader('attestation', obj({
    provider: fc.constant(SIGNER.peerId),
    gpus: fc.array(obj({ uuid: gpuUuid, name: text(96), vramMiB: small, provenance: fc.constantFrom('detected' as const, 'declared' as const) }, { driver: fc.constant('550.54.15') }), { maxLength: 4 }),
    host: obj({ cpuCores: small, memoryMiB: small }),
    benchmark: obj({ name: slug, value: uint, unit: slug, durationMs: small })
  }, { confidential: obj({ scheme: fc.constant('nvidia-cc' as const), evidence: bytes(64) }) })),
  'probe-result': withHeader('probe-result', obj({
    subject: peerId, nonce, kind: fc.constantFrom('ping' as const, 'capability' as const, 'freivalds-matmul' as const), ok: fc.boolean(), durationMs: small
  }, { rttMs: small, size: small, device: fc.constantFrom('cpu' as const, 'gpu' as const), model: slug, expectedMs: small, detail: text(256) })),
  'fraud-proof': withHeader('fraud-proof', obj({
    subject: peerId, job: cid, kind: fc.constantFrom('conflicting-receipts' as const, 'wrong-output' as const), request: bytes(256), receipts: fc.array(bytes(64), { minLength: 1, maxLength: 5 })
  }, { inputs: fc.array(bytes(64), { maxLength: 3 }) })),
  'auction-round': withHeader('auction-round', obj({
    job: cid, round: fc.integer({ min: 2, max: 64 }), attempt: fc.integer({ min: 1, max: 16 }), excluded: fc.array(peerId, { maxLength: 3 }), request: bytes(256)
  })),
  'job-cancel': withHeader('job-cancel', obj({ job: cid, award: cid, reason: text(256) }))
}

/** Any kind with a valid payload of that kind. */
export const anyMessage: fc.Arbitrary<{ kind: Kind, payload: PayloadOf<Kind> }> = fc.oneof(
  ...(Object.keys(payloads) as Kind[]).map((kind) => (payloads[kind] as fc.Arbitrary<PayloadOf<Kind>>).map((payload) => ({ kind, payload })))
)
