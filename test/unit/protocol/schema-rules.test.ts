import assert from 'node:assert/strict'
import { CID, Identity, cidOfRaw, cidOfValue } from '../../../crypto/index.js'
import * as Digest from 'multiformats/hashes/digest'
import { MessageRejectedError, RejectReason, sealMessage, validatePayload, type Award, type Bid } from '../../../protocol/index.js'
import { utf8Length } from '../../../protocol/messages/common.js'
import { NOW } from '../../helpers/arbitraries.js'

const provider = new Identity(new Uint8Array(32).fill(4))
const job = cidOfValue({ job: 1 }).cid
const bids = [1, 2, 3].map((n) => cidOfValue({ bid: n }).cid).sort((a, b) => a.toString() < b.toString() ? -1 : 1)

function bid (overrides: Partial<Bid> = {}): Bid {
  return {
    v: 1, issuedAt: NOW, expiresAt: NOW + 60_000, job, provider: provider.peerId, price: 1_900_000, gpus: ['GPU-1'], model: 'nvidia-l40s', vramMiB: 46_068,
    region: 'eu-west', startBy: NOW + 10_000, ad: cidOfValue({ ad: 1 }).cid, ...overrides
  }
}

function award (overrides: Partial<Award> = {}): Award {
  return {
    v: 1, issuedAt: NOW, expiresAt: NOW + 60_000, job, attempt: 1, winner: provider.peerId, bid: bids[1] as CID, price: 1_900_000,
    paymentRule: 'first-price', considered: bids, excluded: [], leaseMs: 30_000, billingIntervalSec: 60, ...overrides
  }
}

function invalid (kind: Parameters<typeof validatePayload>[0], value: unknown, path: string): void {
  assert.throws(() => validatePayload(kind, value), (err: unknown) =>
    err instanceof MessageRejectedError && err.reason === RejectReason.INVALID_FIELD && err.path === path)
}

describe('schema rules beyond types', () => {
  it('message references are dag-cbor CIDs with a full sha2-256 digest', () => {
    validatePayload('bid', bid())
    invalid('bid', bid({ job: cidOfRaw(new Uint8Array([1])) }), 'job')
    const short = CID.createV1(0x71, Digest.create(0x12, new Uint8Array(4)))
    invalid('bid', bid({ job: short }), 'job')
    const md5ish = CID.createV1(0x71, Digest.create(0x13, new Uint8Array(64)))
    invalid('bid', bid({ job: md5ish }), 'job')
  })

  it('an award lists the bids it considered, sorted, once each, winner included', () => {
    validatePayload('award', award())
    invalid('award', award({ considered: [...bids].reverse() }), 'considered')
    invalid('award', award({ considered: [bids[0] as CID, bids[0] as CID] , bid: bids[0] as CID }), 'considered')
    invalid('award', award({ bid: cidOfValue({ bid: 99 }).cid }), 'bid')
  })

  it('text limits count UTF-8 bytes', () => {
    assert.equal(utf8Length('abc'), 3)
    assert.equal(utf8Length('é'), 2)
    assert.equal(utf8Length('€'), 3)
    assert.equal(utf8Length('😀'), 4)
    assert.equal(utf8Length('\ud800'), 3)
    assert.equal(utf8Length('😀'), new TextEncoder().encode('😀').byteLength)
    const base = { v: 1, issuedAt: NOW, expiresAt: NOW + 60_000, job, award: job, decision: 'decline' }
    validatePayload('award-response', { ...base, reason: 'é'.repeat(128) }) // 256 bytes
    invalid('award-response', { ...base, reason: 'é'.repeat(129) }, 'reason') // 258 bytes, 129 characters
  })

  it('a message must expire after it is issued', () => {
    assert.throws(() => sealMessage(provider, 'bid', bid({ expiresAt: NOW })), (err: unknown) =>
      err instanceof MessageRejectedError && err.reason === RejectReason.BAD_LIFETIME)
  })
})
