/**
 * protocol/README.md §8 "What openAndCertify does not check": `RecordEnvelope.openAndCertify` of
 * @libp2p/peer-record accepts envelopes that §2.3 and §2.4 refuse. Each row of the spec's table is made
 * here from a valid envelope and given to both: the library must accept it (if it ever refuses, the spec's
 * table is out of date) and `openMessage` must refuse it with the code the table names.
 */
import assert from 'node:assert/strict'
import { generateKeyPair, publicKeyToProtobuf } from '@libp2p/crypto/keys'
import { RecordEnvelope } from '@libp2p/peer-record'
import { CID } from 'multiformats/cid'
import { Identity, encodeVarint, signedBytes } from '../../../crypto/index.js'
import { MessageRejectedError, openMessage, sealMessage, type RejectReason } from '../../../protocol/index.js'
import { specSection } from '../../helpers/spec-text.js'

const DOMAIN = 'gpumesh'
const signer = new Identity(new Uint8Array(32).fill(7))
const ID = CID.parse('bafyreihaenio3ym5ufp4op6dbyswdprqqjj3z6rywkq5kzsrumehw2ybbm')
const ISSUED = 1_767_225_602_000
const NOW = ISSUED + 1000
const valid = sealMessage(signer, 'payment', { v: 1, issuedAt: ISSUED, expiresAt: ISSUED + 600_000, job: ID, award: ID, payee: signer.peerId, seq: 1, interval: 1, cumulative: 5, gpuSeconds: 1 }).bytes

/** The four fields of a gpumesh envelope (§2.1): tag and body. */
function fieldsOf (bytes: Uint8Array): Uint8Array[] {
  const bodies: Uint8Array[] = []
  let i = 0
  while (i < bytes.length) {
    let len = 0
    let shift = 0
    let j = i + 1
    for (;;) {
      const b = bytes[j++] as number
      len += (b & 0x7f) * 2 ** shift
      shift += 7
      if (b < 0x80) break
    }
    bodies.push(bytes.subarray(j, j + len))
    i = j + len
  }
  return bodies
}

const cat = (...parts: Array<Uint8Array | number[]>): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]))
const field = (tag: number, body: Uint8Array, length: number[] = [...encodeVarint(body.length)]): Uint8Array => cat([tag], length, body)
const [PK, TYPE, PAYLOAD, SIG] = fieldsOf(valid) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array]

async function secp256k1Envelope (): Promise<Uint8Array> {
  const key = await generateKeyPair('secp256k1')
  const signature = await key.sign(signedBytes(DOMAIN, TYPE, PAYLOAD))
  return cat(field(0x0a, publicKeyToProtobuf(key.publicKey)), field(0x12, TYPE), field(0x1a, PAYLOAD), field(0x2a, signature))
}

function smallOrderEnvelope (): Uint8Array {
  const key = new Uint8Array(32)
  key[0] = 1
  const signature = new Uint8Array(64)
  signature[0] = 1
  return cat(field(0x0a, cat([0x08, 0x01, 0x12, 0x20], key)), field(0x12, TYPE), field(0x1a, PAYLOAD), field(0x2a, signature))
}

/** The spec's rows: the first cell's start, the envelope, and the code gpumesh refuses it with. */
const CASES: Array<[string, () => Promise<Uint8Array> | Uint8Array, RejectReason]> = [
  ['fields out of order', () => cat(field(0x12, TYPE), field(0x0a, PK), field(0x1a, PAYLOAD), field(0x2a, SIG)), 'MALFORMED_ENVELOPE'],
  ['an unknown field', () => cat(field(0x0a, PK), field(0x12, TYPE), field(0x22, Uint8Array.of(1)), field(0x1a, PAYLOAD), field(0x2a, SIG)), 'MALFORMED_ENVELOPE'],
  ['an unknown field', () => cat(valid, field(0x22, Uint8Array.of(1))), 'MALFORMED_ENVELOPE'],
  ['a field repeated', () => cat(field(0x0a, PK), valid), 'MALFORMED_ENVELOPE'],
  ['a non-minimal length', () => cat(field(0x0a, PK), field(0x12, TYPE, [0x84, 0x00]), field(0x1a, PAYLOAD), field(0x2a, SIG)), 'MALFORMED_ENVELOPE'],
  ['trailing bytes that parse as a protobuf field', () => cat(valid, [0x30, 0x01]), 'MALFORMED_ENVELOPE'],
  ['a secp256k1 key', secp256k1Envelope, 'UNSUPPORTED_KEY'],
  ['the small-order key', smallOrderEnvelope, 'BAD_SIGNATURE']
]

describe('protocol/README.md §8: what RecordEnvelope.openAndCertify does not check', () => {
  it('both accept the valid envelope the cases are made from', async () => {
    await RecordEnvelope.openAndCertify(valid, DOMAIN)
    assert.equal(openMessage(valid, 'payment', { now: NOW }).signer, signer.peerId)
  })

  for (const [row, make, code] of CASES) {
    it(`${row}: openAndCertify accepts, openMessage refuses with ${code}`, async () => {
      const bytes = await make()
      await RecordEnvelope.openAndCertify(bytes, DOMAIN)
      assert.throws(() => openMessage(bytes, 'payment', { now: NOW }), (err: unknown) => err instanceof MessageRejectedError && err.reason === code)
    })
  }

  it('the spec\'s table has a row for each case, with the same code', () => {
    const rows = specSection('8.').split('\n').filter((l) => l.startsWith('| ') && l.includes('| accepts'))
    for (const [row, , code] of CASES) {
      const line = rows.find((l) => l.slice(2).startsWith(row))
      assert.ok(line !== undefined, `no row for "${row}"`)
      assert.ok(line.includes(`\`${code}\``), `row "${row}" names ${code}`)
    }
    assert.equal(rows.length, new Set(CASES.map(([row]) => row)).size)
  })
})
