import assert from 'node:assert/strict'
import fc from 'fast-check'
import * as dagCbor from '@ipld/dag-cbor'
import { CID as MultiformatsCID } from 'multiformats/cid'
import * as Digest from 'multiformats/hashes/digest'
import { identity as identityHash } from 'multiformats/hashes/identity'
import { sha256 as multiformatsSha256, sha512 as multiformatsSha512 } from 'multiformats/hashes/sha2'
import {
  BoundedCache, CborError, DAG_CBOR_CODEC, RAW_CODEC, SHA2_256, bytesEqual, cidMatches, cidOfCborBytes, cidOfRaw, cidOfValue,
  decodeCanonical, decodeVarint, encodeCanonical, encodeVarint, sha256, type CborErrorCode
} from '../../../crypto/index.js'
import { randomNonce } from '../../../node/random.js'
import { toHex } from '../../fixtures/rfc8032-vectors.js'

function bytes (...values: number[]): Uint8Array {
  return Uint8Array.from(values)
}

function expectCborError (code: CborErrorCode, input: Uint8Array): void {
  assert.throws(() => decodeCanonical(input), (err: unknown) => {
    assert.ok(err instanceof CborError, `expected CborError, got ${String(err)}`)
    assert.equal(err.code, code, `${toHex(input)}: ${err.message}`)
    return true
  })
}

/** Values DAG-CBOR can represent exactly: no undefined, no NaN/Infinity, no -0. */
const { value: dagValueArb } = fc.letrec<{ value: unknown }>(tie => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.maxSafeInteger(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter(n => !Object.is(n, -0)),
    fc.string({ maxLength: 20 }),
    fc.uint8Array({ maxLength: 20 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4, noNullPrototype: true })
  )
}))

describe('crypto encoding helpers', () => {
  describe('varint', () => {
    const known: Array<[number, string]> = [
      [0, '00'],
      [1, '01'],
      [127, '7f'],
      [128, '8001'],
      [300, 'ac02'],
      [16383, 'ff7f'],
      [16384, '808001'],
      [0x300001, '8180c001'],
      [2 ** 31, '8080808008'],
      [2 ** 32 - 1, 'ffffffff0f'],
      [Number.MAX_SAFE_INTEGER, 'ffffffffffffff0f']
    ]

    it('encodes known values exactly', () => {
      for (const [value, hex] of known) {
        assert.equal(toHex(encodeVarint(value)), hex, String(value))
        assert.deepEqual(decodeVarint(Buffer.from(hex, 'hex'), 0), [value, hex.length / 2])
      }
    })

    it('round-trips every safe integer (property)', () => {
      fc.assert(fc.property(fc.maxSafeNat(), value => {
        const encoded = encodeVarint(value)
        assert.deepEqual(decodeVarint(encoded, 0), [value, encoded.byteLength])
        assert.ok(encoded.byteLength <= 8)
      }), { numRuns: 1000 })
    })

    it('decodes at an offset and ignores what follows (property)', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 8 }), fc.maxSafeNat(), fc.uint8Array({ maxLength: 8 }), (before, value, after) => {
        const encoded = encodeVarint(value)
        const buffer = Uint8Array.from([...before, ...encoded, ...after])
        assert.deepEqual(decodeVarint(buffer, before.byteLength), [value, encoded.byteLength])
      }), { numRuns: 300 })
    })

    it('every minimal encoding decodes to a value that re-encodes to it (property)', () => {
      fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 10 }), input => {
        const decoded = decodeVarint(input, 0)
        if (decoded === undefined) return
        assert.deepEqual(encodeVarint(decoded[0]), input.subarray(0, decoded[1]))
      }), { numRuns: 1000 })
    })

    it('refuses non-minimal encodings', () => {
      assert.equal(decodeVarint(bytes(0x80, 0x00), 0), undefined)
      assert.equal(decodeVarint(bytes(0x81, 0x00), 0), undefined)
      assert.equal(decodeVarint(bytes(0xff, 0x80, 0x00), 0), undefined)
      assert.equal(decodeVarint(bytes(0xac, 0x82, 0x00), 0), undefined)
      assert.equal(decodeVarint(bytes(0x05, 0x80, 0x00), 1), undefined)
    })

    it('refuses truncated and over-long input', () => {
      assert.equal(decodeVarint(new Uint8Array(0), 0), undefined)
      assert.equal(decodeVarint(bytes(0x80), 0), undefined)
      assert.equal(decodeVarint(bytes(0xff, 0xff), 0), undefined)
      assert.equal(decodeVarint(bytes(0x01), 1), undefined)
      // a ninth byte is never needed for a safe integer
      assert.equal(decodeVarint(bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01), 0), undefined)
    })

    it('refuses values above Number.MAX_SAFE_INTEGER', () => {
      assert.equal(decodeVarint(Buffer.from('ffffffffffffff1f', 'hex'), 0), undefined) // 2^54 - 1
      assert.equal(decodeVarint(Buffer.from('8080808080808010', 'hex'), 0), undefined) // 2^53
      assert.equal(decodeVarint(Buffer.from('ffffffffffffff7f', 'hex'), 0), undefined) // 2^56 - 1
    })

    it('encodeVarint throws RangeError outside the non-negative safe integers', () => {
      for (const value of [-1, 0.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, Infinity, -0.1]) {
        assert.throws(() => encodeVarint(value), RangeError, String(value))
      }
    })
  })

  describe('canonical DAG-CBOR', () => {
    it('encodes like @ipld/dag-cbor', () => {
      assert.equal(toHex(encodeCanonical({ b: 1, a: [true, null, 'x'] })), 'a2' + '6161' + '83f5f66178' + '6162' + '01')
      assert.deepEqual(encodeCanonical({ b: 1, aa: 2, a: 3 }), dagCbor.encode({ a: 3, b: 1, aa: 2 }))
    })

    it('round-trips DAG-CBOR values (property)', () => {
      fc.assert(fc.property(dagValueArb, value => {
        const encoded = encodeCanonical(value)
        const decoded = decodeCanonical(encoded)
        assert.deepEqual(decoded, value)
        assert.deepEqual(encodeCanonical(decoded), encoded)
      }), { numRuns: 300 })
    })

    it('accepts canonical bytes written by hand', () => {
      assert.deepEqual(decodeCanonical(bytes(0xa2, 0x61, 0x61, 0x02, 0x61, 0x62, 0x01)), { a: 2, b: 1 })
      // DAG-CBOR sorts map keys by length first, then bytewise
      assert.deepEqual(decodeCanonical(bytes(0xa2, 0x61, 0x62, 0x02, 0x62, 0x61, 0x61, 0x01)), { b: 2, aa: 1 })
      assert.equal(decodeCanonical(bytes(0x01)), 1)
      assert.equal(decodeCanonical(Buffer.from('fb3ff8000000000000', 'hex')), 1.5)
    })

    it('rejects a map with unsorted keys → CBOR_NON_CANONICAL', () => {
      expectCborError('CBOR_NON_CANONICAL', bytes(0xa2, 0x61, 0x62, 0x01, 0x61, 0x61, 0x02)) // {b:1, a:2}
      expectCborError('CBOR_NON_CANONICAL', bytes(0xa2, 0x62, 0x61, 0x61, 0x01, 0x61, 0x62, 0x02)) // {aa:1, b:2}
    })

    it('rejects an integer or length in more bytes than needed → CBOR_NON_CANONICAL', () => {
      expectCborError('CBOR_NON_CANONICAL', bytes(0x18, 0x01)) // 1 as uint8
      expectCborError('CBOR_NON_CANONICAL', bytes(0x19, 0x00, 0x01)) // 1 as uint16
      expectCborError('CBOR_NON_CANONICAL', bytes(0x38, 0x00)) // -1 as int8
      expectCborError('CBOR_NON_CANONICAL', bytes(0x78, 0x01, 0x61)) // "a" with a one-byte length
      expectCborError('CBOR_NON_CANONICAL', bytes(0x98, 0x01, 0x01)) // [1] with a one-byte length
    })

    it('rejects a float where DAG-CBOR writes an integer → CBOR_NON_CANONICAL', () => {
      expectCborError('CBOR_NON_CANONICAL', bytes(0xf9, 0x3c, 0x00)) // 1.0 as half float
      expectCborError('CBOR_NON_CANONICAL', bytes(0xfa, 0x3f, 0x80, 0x00, 0x00)) // 1.0 as single float
      expectCborError('CBOR_NON_CANONICAL', Buffer.from('fb3ff0000000000000', 'hex')) // 1.0 as double
    })

    it('rejects a float narrower than 64 bits → CBOR_NON_CANONICAL', () => {
      expectCborError('CBOR_NON_CANONICAL', bytes(0xf9, 0x3e, 0x00)) // 1.5 as half float
    })

    it('rejects undefined (decoded as null) → CBOR_NON_CANONICAL', () => {
      expectCborError('CBOR_NON_CANONICAL', bytes(0xf7))
    })

    it('rejects bytes that are not DAG-CBOR → CBOR_MALFORMED', () => {
      const malformed: Array<[string, Uint8Array]> = [
        ['empty input', new Uint8Array(0)],
        ['truncated string', bytes(0x62, 0x61)],
        ['truncated map', bytes(0xa1, 0x61, 0x61)],
        ['trailing bytes', bytes(0x01, 0x01)],
        ['indefinite-length array', bytes(0x9f, 0x01, 0xff)],
        ['duplicate map keys', bytes(0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02)],
        ['a map key that is not a string', bytes(0xa1, 0x01, 0x02)],
        ['NaN', bytes(0xf9, 0x7e, 0x00)],
        ['Infinity', bytes(0xf9, 0x7c, 0x00)],
        ['a tag other than 42', bytes(0xc1, 0x01)],
        ['tag 42 around bytes that are not a CID', bytes(0xd8, 0x2a, 0x41, 0x00)],
        ['a reserved additional-information value', bytes(0x1c)],
        ['a lone break byte', bytes(0xff)]
      ]
      for (const [name, input] of malformed) {
        assert.throws(() => decodeCanonical(input), (err: unknown) => {
          assert.ok(err instanceof CborError, `${name}: ${String(err)}`)
          assert.equal(err.code, 'CBOR_MALFORMED', `${name}: ${err.message}`)
          return true
        })
      }
    })

    it('random bytes → decodeCanonical throws only CborError, or returns a value that re-encodes to them (property)', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 40 }), input => {
        let value: unknown
        try {
          value = decodeCanonical(input)
        } catch (err) {
          assert.ok(err instanceof CborError, String(err))
          return
        }
        assert.deepEqual(encodeCanonical(value), input)
      }), { numRuns: 2000 })
    })

    it('bytesEqual compares contents', () => {
      assert.equal(bytesEqual(bytes(1, 2), bytes(1, 2)), true)
      assert.equal(bytesEqual(bytes(1, 2), bytes(1, 3)), false)
      assert.equal(bytesEqual(bytes(1, 2), bytes(1, 2, 3)), false)
      assert.equal(bytesEqual(new Uint8Array(0), new Uint8Array(0)), true)
    })
  })

  describe('content ids', () => {
    it('sha256 gives the FIPS 180-2 digest of "abc"', () => {
      assert.equal(toHex(sha256(new TextEncoder().encode('abc'))), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    })

    it('cidOfRaw of the empty blob is the well-known raw CIDv1', () => {
      const cid = cidOfRaw(new Uint8Array(0))
      assert.equal(cid.toString(), 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku')
      assert.equal(cid.version, 1)
      assert.equal(cid.code, RAW_CODEC)
      assert.equal(cid.multihash.code, SHA2_256)
    })

    it('cidOfRaw equals CID.create(1, 0x55, sha256.digest(bytes)) from multiformats (property)', async () => {
      await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 1000 }), async input => {
        const expected = MultiformatsCID.create(1, 0x55, await multiformatsSha256.digest(input))
        const cid = cidOfRaw(input)
        assert.equal(cid.toString(), expected.toString())
        assert.ok(cid.equals(expected))
        assert.deepEqual(cid.bytes, expected.bytes)
      }), { numRuns: 300 })
    })

    it('cidOfValue and cidOfCborBytes equal the dag-cbor CID from multiformats (property)', async () => {
      await fc.assert(fc.asyncProperty(dagValueArb, async value => {
        const encoded = dagCbor.encode(value)
        const expected = MultiformatsCID.create(1, dagCbor.code, await multiformatsSha256.digest(encoded))
        const { cid, bytes: written } = cidOfValue(value)
        assert.deepEqual(written, encoded)
        assert.equal(cid.toString(), expected.toString())
        assert.equal(cidOfCborBytes(encoded).toString(), expected.toString())
        assert.equal(cid.code, DAG_CBOR_CODEC)
        assert.equal(DAG_CBOR_CODEC, 0x71)
      }), { numRuns: 200 })
    })

    it('cidMatches is true for the bytes a CID was made from (property)', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), input => {
        assert.equal(cidMatches(cidOfRaw(input), input), true)
        assert.equal(cidMatches(cidOfCborBytes(input), input), true)
      }), { numRuns: 200 })
    })

    it('cidMatches is false for any other bytes (property)', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }), (a, b) => {
        fc.pre(!bytesEqual(a, b))
        assert.equal(cidMatches(cidOfRaw(a), b), false)
      }), { numRuns: 200 })
    })

    it('cidMatches is false when a single bit of the content flips', () => {
      const content = new TextEncoder().encode('model weights, shard 7')
      const cid = cidOfRaw(content)
      for (let bit = 0; bit < content.byteLength * 8; bit++) {
        const tampered = Uint8Array.from(content)
        tampered[bit >> 3] = (tampered[bit >> 3] as number) ^ (1 << (bit & 7))
        assert.equal(cidMatches(cid, tampered), false)
      }
    })

    it('cidMatches is false for CIDs it cannot check: v0, other hashes', async () => {
      const content = new TextEncoder().encode('hello')
      const v0 = MultiformatsCID.createV0(await multiformatsSha256.digest(content))
      assert.equal(cidMatches(v0, content), false)
      const sha512Cid = MultiformatsCID.createV1(RAW_CODEC, await multiformatsSha512.digest(content))
      assert.equal(cidMatches(sha512Cid, content), false)
      const inline = MultiformatsCID.createV1(RAW_CODEC, identityHash.digest(content))
      assert.equal(cidMatches(inline, content), false)
      // a sha2-256 multihash that is truncated is not the digest of the content
      const truncated = MultiformatsCID.createV1(RAW_CODEC, Digest.create(SHA2_256, sha256(content).subarray(0, 20)))
      assert.equal(cidMatches(truncated, content), false)
    })

    it('cidMatches keeps codecs apart: the raw CID does not match as dag-cbor', () => {
      const content = encodeCanonical({ a: 1 })
      const raw = cidOfRaw(content)
      const cbor = cidOfCborBytes(content)
      assert.notEqual(raw.toString(), cbor.toString())
      assert.equal(cidMatches(raw, content), true)
      assert.equal(cidMatches(cbor, content), true)
      assert.equal(raw.equals(cbor), false)
    })
  })

  describe('BoundedCache', () => {
    it('evicts the oldest entry beyond capacity', () => {
      const cache = new BoundedCache<string, number>(3)
      cache.set('a', 1)
      cache.set('b', 2)
      cache.set('c', 3)
      assert.equal(cache.size, 3)
      cache.set('d', 4)
      assert.equal(cache.size, 3)
      assert.equal(cache.get('a'), undefined)
      assert.equal(cache.get('b'), 2)
      assert.equal(cache.get('c'), 3)
      assert.equal(cache.get('d'), 4)
      cache.set('e', 5)
      assert.equal(cache.get('b'), undefined)
      assert.equal(cache.size, 3)
    })

    it('re-setting a key makes it the newest and keeps the latest value', () => {
      const cache = new BoundedCache<string, number>(2)
      cache.set('a', 1)
      cache.set('b', 2)
      cache.set('a', 10)
      assert.equal(cache.size, 2)
      cache.set('c', 3)
      assert.equal(cache.get('b'), undefined)
      assert.equal(cache.get('a'), 10)
      assert.equal(cache.get('c'), 3)
    })

    it('a get does not refresh an entry (first in, first out)', () => {
      const cache = new BoundedCache<string, number>(2)
      cache.set('a', 1)
      cache.set('b', 2)
      assert.equal(cache.get('a'), 1)
      cache.set('c', 3)
      assert.equal(cache.get('a'), undefined)
      assert.equal(cache.get('b'), 2)
    })

    it('holds a single entry with capacity 1', () => {
      const cache = new BoundedCache<number, string>(1)
      cache.set(1, 'x')
      cache.set(2, 'y')
      assert.equal(cache.size, 1)
      assert.equal(cache.get(1), undefined)
      assert.equal(cache.get(2), 'y')
    })

    it('agrees with a model: the last `capacity` distinct keys set, with their latest values (property)', () => {
      fc.assert(fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 15 }), fc.integer()), { maxLength: 60 }),
        (capacity, operations) => {
          const cache = new BoundedCache<number, number>(capacity)
          let model: Array<[number, number]> = []
          for (const [key, value] of operations) {
            cache.set(key, value)
            model = model.filter(([k]) => k !== key)
            model.push([key, value])
            if (model.length > capacity) model.shift()
            assert.ok(cache.size <= capacity)
          }
          assert.equal(cache.size, model.length)
          const kept = new Map(model)
          for (let key = 0; key <= 15; key++) assert.equal(cache.get(key), kept.get(key), `key ${key}`)
        }
      ), { numRuns: 300 })
    })

    it('refuses a capacity that is not a positive integer', () => {
      for (const capacity of [0, -1, 1.5, Number.NaN, Infinity]) {
        assert.throws(() => new BoundedCache(capacity), RangeError, String(capacity))
      }
    })
  })

  describe('randomNonce', () => {
    it('draws 16 bytes by default, or the length asked for, fresh each time', () => {
      assert.equal(randomNonce().byteLength, 16)
      assert.equal(randomNonce(32).byteLength, 32)
      assert.equal(randomNonce(0).byteLength, 0)
      assert.notDeepEqual(randomNonce(), randomNonce())
    })
  })
})
