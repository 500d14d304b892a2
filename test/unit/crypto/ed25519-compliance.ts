/**
 * A compliance suite every `Ed25519` implementation must pass, in the style of the js-libp2p
 * interface compliance tests: call `ed25519Compliance(() => new MyEd25519())` inside a describe.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import type { Ed25519 } from '../../../crypto/index.js'
import { ED25519_PUBLIC_KEY_BYTES, ED25519_SEED_BYTES, ED25519_SIGNATURE_BYTES } from '../../../crypto/index.js'
import { RFC8032_VECTORS, fromHex, toHex } from '../../fixtures/rfc8032-vectors.js'

/** The order of the Ed25519 base point, L = 2^252 + 27742317777372353535851937790883648493. */
const GROUP_ORDER = (1n << 252n) + 27742317777372353535851937790883648493n

export const seedArb = fc.uint8Array({ minLength: ED25519_SEED_BYTES, maxLength: ED25519_SEED_BYTES })
export const messageArb = fc.uint8Array({ maxLength: 256 })

export function flipBit (bytes: Uint8Array, bit: number): Uint8Array {
  const out = Uint8Array.from(bytes)
  out[bit >> 3] = (out[bit >> 3] as number) ^ (1 << (bit & 7))
  return out
}

function littleEndianToBigInt (bytes: Uint8Array): bigint {
  let n = 0n
  for (let i = bytes.byteLength - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number)
  return n
}

function bigIntToLittleEndian (n: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length)
  for (let i = 0; i < length; i++) {
    out[i] = Number(n & 0xffn)
    n >>= 8n
  }
  return out
}

export function ed25519Compliance (make: () => Ed25519): void {
  let ed: Ed25519

  before(() => {
    ed = make()
  })

  it('has a name', () => {
    assert.equal(typeof ed.name, 'string')
    assert.ok(ed.name.length > 0)
  })

  describe('RFC 8032 §7.1 test vectors', () => {
    for (const vector of RFC8032_VECTORS) {
      describe(vector.name, () => {
        const seed = fromHex(vector.secretKey)
        const message = fromHex(vector.message)

        it('derives the published public key', () => {
          assert.equal(toHex(ed.publicKey(seed)), vector.publicKey)
        })

        it('produces the published signature byte for byte', () => {
          assert.equal(toHex(ed.sign(seed, message)), vector.signature)
        })

        it('verifies the published signature', () => {
          assert.equal(ed.verify(fromHex(vector.publicKey), message, fromHex(vector.signature)), true)
        })

        it('rejects the published signature for another message', () => {
          const other = Uint8Array.from([...message, 0])
          assert.equal(ed.verify(fromHex(vector.publicKey), other, fromHex(vector.signature)), false)
        })
      })
    }

    it('checks the fixture shapes (TEST 1024 has 1023 bytes, SHA(abc) is SHA-512 of "abc")', async () => {
      const { createHash } = await import('node:crypto')
      const byName = new Map(RFC8032_VECTORS.map(v => [v.name, v]))
      assert.equal(RFC8032_VECTORS.length, 5)
      assert.equal(fromHex(byName.get('TEST 1')?.message ?? 'x').byteLength, 0)
      assert.equal(fromHex(byName.get('TEST 1024')?.message ?? '').byteLength, 1023)
      assert.equal(byName.get('TEST SHA(abc)')?.message, createHash('sha512').update('abc').digest('hex'))
      for (const v of RFC8032_VECTORS) {
        assert.equal(fromHex(v.secretKey).byteLength, ED25519_SEED_BYTES)
        assert.equal(fromHex(v.publicKey).byteLength, ED25519_PUBLIC_KEY_BYTES)
        assert.equal(fromHex(v.signature).byteLength, ED25519_SIGNATURE_BYTES)
      }
    })
  })

  describe('sign and verify', () => {
    it('returns keys and signatures of the right lengths', () => {
      fc.assert(fc.property(seedArb, messageArb, (seed, message) => {
        assert.equal(ed.publicKey(seed).byteLength, ED25519_PUBLIC_KEY_BYTES)
        assert.equal(ed.sign(seed, message).byteLength, ED25519_SIGNATURE_BYTES)
      }), { numRuns: 100 })
    })

    it('verifies its own signatures (round trip)', () => {
      fc.assert(fc.property(seedArb, messageArb, (seed, message) => {
        const signature = ed.sign(seed, message)
        assert.equal(ed.verify(ed.publicKey(seed), message, signature), true)
      }), { numRuns: 120 })
    })

    it('signs deterministically', () => {
      fc.assert(fc.property(seedArb, messageArb, (seed, message) => {
        assert.deepEqual(ed.sign(seed, message), ed.sign(Uint8Array.from(seed), Uint8Array.from(message)))
      }), { numRuns: 100 })
    })

    it('does not modify its inputs', () => {
      fc.assert(fc.property(seedArb, messageArb, (seed, message) => {
        const seedCopy = Uint8Array.from(seed)
        const messageCopy = Uint8Array.from(message)
        const publicKey = ed.publicKey(seed)
        const signature = ed.sign(seed, message)
        const publicKeyCopy = Uint8Array.from(publicKey)
        const signatureCopy = Uint8Array.from(signature)
        ed.verify(publicKey, message, signature)
        assert.deepEqual(seed, seedCopy)
        assert.deepEqual(message, messageCopy)
        assert.deepEqual(publicKey, publicKeyCopy)
        assert.deepEqual(signature, signatureCopy)
      }), { numRuns: 50 })
    })

    it('accepts seeds, keys and messages that are views into a larger buffer', () => {
      const vector = RFC8032_VECTORS[2]
      assert.ok(vector != null)
      const wrap = (hex: string): Uint8Array => {
        const inner = fromHex(hex)
        const outer = new Uint8Array(inner.byteLength + 7).fill(0xee)
        outer.set(inner, 3)
        return outer.subarray(3, 3 + inner.byteLength)
      }
      assert.equal(toHex(ed.publicKey(wrap(vector.secretKey))), vector.publicKey)
      assert.equal(toHex(ed.sign(wrap(vector.secretKey), wrap(vector.message))), vector.signature)
      assert.equal(ed.verify(wrap(vector.publicKey), wrap(vector.message), wrap(vector.signature)), true)
    })

    it('rejects a signature made with another key', () => {
      fc.assert(fc.property(seedArb, seedArb, messageArb, (seedA, seedB, message) => {
        fc.pre(toHex(seedA) !== toHex(seedB))
        assert.equal(ed.verify(ed.publicKey(seedB), message, ed.sign(seedA, message)), false)
      }), { numRuns: 100 })
    })

    it('throws a TypeError for a seed that is not 32 bytes', () => {
      for (const length of [0, 31, 33, 64]) {
        assert.throws(() => ed.publicKey(new Uint8Array(length)), TypeError)
        assert.throws(() => ed.sign(new Uint8Array(length), new Uint8Array(1)), TypeError)
      }
    })
  })

  describe('tampering', () => {
    it('rejects the signature when any single bit of the message flips', () => {
      fc.assert(fc.property(seedArb, fc.uint8Array({ minLength: 1, maxLength: 128 }), fc.nat(), (seed, message, n) => {
        const signature = ed.sign(seed, message)
        const tampered = flipBit(message, n % (message.byteLength * 8))
        assert.equal(ed.verify(ed.publicKey(seed), tampered, signature), false)
      }), { numRuns: 120 })
    })

    it('rejects the signature when any single bit of the signature flips', () => {
      fc.assert(fc.property(seedArb, messageArb, fc.integer({ min: 0, max: ED25519_SIGNATURE_BYTES * 8 - 1 }), (seed, message, bit) => {
        const signature = ed.sign(seed, message)
        assert.equal(ed.verify(ed.publicKey(seed), message, flipBit(signature, bit)), false)
      }), { numRuns: 120 })
    })

    it('rejects the signature when any single bit of the public key flips', () => {
      fc.assert(fc.property(seedArb, messageArb, fc.integer({ min: 0, max: ED25519_PUBLIC_KEY_BYTES * 8 - 1 }), (seed, message, bit) => {
        const signature = ed.sign(seed, message)
        assert.equal(ed.verify(flipBit(ed.publicKey(seed), bit), message, signature), false)
      }), { numRuns: 120 })
    })

    it('rejects every single-bit flip of the RFC 8032 TEST 2 signature and public key', () => {
      const vector = RFC8032_VECTORS[1]
      assert.ok(vector != null)
      const publicKey = fromHex(vector.publicKey)
      const message = fromHex(vector.message)
      const signature = fromHex(vector.signature)
      for (let bit = 0; bit < ED25519_SIGNATURE_BYTES * 8; bit++) {
        assert.equal(ed.verify(publicKey, message, flipBit(signature, bit)), false, `signature bit ${bit}`)
      }
      for (let bit = 0; bit < ED25519_PUBLIC_KEY_BYTES * 8; bit++) {
        assert.equal(ed.verify(flipBit(publicKey, bit), message, signature), false, `public key bit ${bit}`)
      }
    })

    it('rejects a malleated signature whose S is not reduced (S + L)', () => {
      // RFC 8032 §5.1.7: verifiers must reject S >= L, so a signature has one valid encoding
      for (const vector of RFC8032_VECTORS) {
        const signature = fromHex(vector.signature)
        const s = littleEndianToBigInt(signature.subarray(32))
        assert.ok(s < GROUP_ORDER)
        const malleated = Uint8Array.from(signature)
        malleated.set(bigIntToLittleEndian(s + GROUP_ORDER, 32), 32)
        assert.notDeepEqual(malleated, signature)
        assert.equal(ed.verify(fromHex(vector.publicKey), fromHex(vector.message), malleated), false, vector.name)
      }
    })
  })

  describe('malformed input', () => {
    const vector = RFC8032_VECTORS[0]
    const publicKey = fromHex(vector?.publicKey ?? '')
    const signature = fromHex(vector?.signature ?? '')
    const message = fromHex(vector?.message ?? '')

    it('returns false, never throws, for public keys of the wrong length', () => {
      for (const length of [0, 1, 31, 33, 36, 64]) {
        const key = new Uint8Array(length)
        key.set(publicKey.subarray(0, Math.min(length, publicKey.byteLength)))
        assert.equal(ed.verify(key, message, signature), false, `length ${length}`)
      }
    })

    it('returns false, never throws, for signatures of the wrong length', () => {
      for (const length of [0, 1, 32, 63, 65, 128]) {
        const sig = new Uint8Array(length)
        sig.set(signature.subarray(0, Math.min(length, signature.byteLength)))
        assert.equal(ed.verify(publicKey, message, sig), false, `length ${length}`)
      }
      assert.equal(ed.verify(publicKey, message, Uint8Array.from([...signature, 0])), false)
    })

    it('returns false, never throws, for values that are not byte arrays', () => {
      const notBytes = [undefined, null, 'x'.repeat(32), Array.from(publicKey)] as unknown as Uint8Array[]
      for (const value of notBytes) {
        assert.equal(ed.verify(value, message, signature), false)
        assert.equal(ed.verify(publicKey, message, value), false)
      }
    })

    it('returns false, never throws, for arbitrary keys and signatures', () => {
      fc.assert(fc.property(
        fc.uint8Array({ maxLength: 40 }), messageArb, fc.uint8Array({ maxLength: 70 }),
        (key, msg, sig) => {
          assert.equal(ed.verify(key, msg, sig), false)
        }
      ), { numRuns: 200 })
    })

    it('returns false, never throws, for arbitrary 32-byte keys and 64-byte signatures', () => {
      fc.assert(fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }), messageArb, fc.uint8Array({ minLength: 64, maxLength: 64 }),
        (key, msg, sig) => {
          assert.equal(ed.verify(key, msg, sig), false)
        }
      ), { numRuns: 200 })
    })
  })
}
