import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import * as ed from '@noble/ed25519'
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js'
import { NobleEd25519, defaultEd25519, isStrictPublicKey, sha256 } from '../../../crypto/index.js'
import { NativeEd25519, nativeEd25519Available } from '../../../node/ed25519-native.js'
import { ed25519Compliance, flipBit, messageArb, seedArb } from './ed25519-compliance.js'

// dist/test/unit/crypto → repository root
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..')

describe('crypto/ed25519', () => {
  describe('NativeEd25519 (node:crypto)', () => {
    ed25519Compliance(() => new NativeEd25519())
  })

  describe('NobleEd25519 (@noble/ed25519)', () => {
    ed25519Compliance(() => new NobleEd25519())
  })

  describe('native and noble agree', () => {
    const native = new NativeEd25519()
    const noble = new NobleEd25519()

    it('derive the same public key from a seed', () => {
      fc.assert(fc.property(seedArb, seed => {
        assert.deepEqual(native.publicKey(seed), noble.publicKey(seed))
      }), { numRuns: 120 })
    })

    it('produce identical signatures (RFC 8032 signing is deterministic)', () => {
      fc.assert(fc.property(seedArb, messageArb, (seed, message) => {
        assert.deepEqual(native.sign(seed, message), noble.sign(seed, message))
      }), { numRuns: 120 })
    })

    it('noble verifies native signatures', () => {
      fc.assert(fc.property(seedArb, messageArb, (seed, message) => {
        assert.equal(noble.verify(native.publicKey(seed), message, native.sign(seed, message)), true)
      }), { numRuns: 120 })
    })

    it('native verifies noble signatures', () => {
      fc.assert(fc.property(seedArb, messageArb, (seed, message) => {
        assert.equal(native.verify(noble.publicKey(seed), message, noble.sign(seed, message)), true)
      }), { numRuns: 120 })
    })

    it('reject the same tampered signatures', () => {
      fc.assert(fc.property(seedArb, messageArb, fc.integer({ min: 0, max: 511 }), (seed, message, bit) => {
        const publicKey = native.publicKey(seed)
        const tampered = flipBit(native.sign(seed, message), bit)
        assert.equal(native.verify(publicKey, message, tampered), false)
        assert.equal(noble.verify(publicKey, message, tampered), false)
      }), { numRuns: 100 })
    })

    it('give the same verdict on arbitrary keys and signatures', () => {
      fc.assert(fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }), messageArb, fc.uint8Array({ minLength: 64, maxLength: 64 }),
        (key, message, signature) => {
          assert.equal(native.verify(key, message, signature), noble.verify(key, message, signature))
        }
      ), { numRuns: 100 })
    })
  })

  // Signatures that only a malicious signer would make: a torsion (order 8) component in R or in the
  // public key. OpenSSL checks the cofactorless equation [S]B = R + [k]A; @noble/ed25519's own strict
  // verify is cofactored ([8][S]B = [8]R + [8][k]A) and accepted these, so NobleEd25519 checks the
  // cofactorless equation itself. Every node must reach the same verdict on every message, or a
  // malicious peer can split the network's view of a bid or receipt.
  describe('native and noble agree on crafted signatures with a small-order component', () => {
    const native = new NativeEd25519()
    const noble = new NobleEd25519()
    const GROUP_ORDER = (1n << 252n) + 27742317777372353535851937790883648493n
    // a point of order 8 (canonical encoding)
    const T8 = ed.Point.fromBytes(Uint8Array.from(Buffer.from('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', 'hex')))
    const le = (bytes: Uint8Array): bigint => {
      let n = 0n
      for (let i = bytes.byteLength - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number)
      return n
    }
    const toLe = (n: bigint): Uint8Array => {
      const out = new Uint8Array(32)
      for (let i = 0; i < 32; i++) {
        out[i] = Number(n & 0xffn)
        n >>= 8n
      }
      return out
    }
    const challenge = (r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint =>
      le(createHash('sha512').update(r).update(a).update(m).digest()) % GROUP_ORDER
    const nonceArb = fc.bigInt({ min: 1n, max: GROUP_ORDER - 1n })
    const torsionArb = fc.integer({ min: 1, max: 7 }).map(i => T8.multiply(BigInt(i), false))

    it('T8 has order 8', () => {
      assert.equal(T8.isSmallOrder(), true)
      assert.equal(T8.multiply(4n, false).is0(), false)
      assert.equal(T8.multiply(8n, false).is0(), true)
    })

    it('R with a torsion component (honest key)', () => {
      fc.assert(fc.property(seedArb, messageArb, nonceArb, torsionArb, (seed, message, r, torsion) => {
        const { scalar, pointBytes } = ed.utils.getExtendedPublicKey(seed)
        const R = ed.Point.BASE.multiply(r, false).add(torsion).toBytes()
        const S = (r + challenge(R, pointBytes, message) * scalar) % GROUP_ORDER
        const signature = Uint8Array.from([...R, ...toLe(S)])
        // [S]B − [k]A = rB ≠ R: refused by both
        assert.equal(native.verify(pointBytes, message, signature), false)
        assert.equal(noble.verify(pointBytes, message, signature), false)
      }), { numRuns: 50 })
    })

    it('a public key with a torsion component: both give the same verdict', () => {
      fc.assert(fc.property(seedArb, messageArb, nonceArb, torsionArb, (seed, message, r, torsion) => {
        const { scalar, point } = ed.utils.getExtendedPublicKey(seed)
        const A = point.add(torsion).toBytes()
        const R = ed.Point.BASE.multiply(r, false).toBytes()
        const S = (r + challenge(R, A, message) * scalar) % GROUP_ORDER
        const signature = Uint8Array.from([...R, ...toLe(S)])
        // [S]B − [k]A = R − [k]T: valid exactly when [k]T is the identity
        const expected = torsion.multiply(challenge(R, A, message), false).is0()
        assert.equal(isStrictPublicKey(A), true) // not small-order itself
        assert.equal(native.verify(A, message, signature), expected)
        assert.equal(noble.verify(A, message, signature), expected)
      }), { numRuns: 100 })
    })

    it('a public key with a torsion component, where the equation holds', () => {
      // search for a message whose challenge k is a multiple of 8, so [k]T8 vanishes
      const seed = new Uint8Array(32).fill(5)
      const { scalar, point } = ed.utils.getExtendedPublicKey(seed)
      const A = point.add(T8).toBytes()
      const r = 12345n
      const R = ed.Point.BASE.multiply(r, false).toBytes()
      let found = 0
      for (let i = 0; found < 3 && i < 200; i++) {
        const message = Uint8Array.from([i])
        const k = challenge(R, A, message)
        if (k % 8n !== 0n) continue
        found++
        const signature = Uint8Array.from([...R, ...toLe((r + k * scalar) % GROUP_ORDER)])
        assert.equal(native.verify(A, message, signature), true)
        assert.equal(noble.verify(A, message, signature), true)
      }
      assert.equal(found, 3)
    })
  })

  describe('defaultEd25519', () => {
    it('finds the native implementation available on this runtime', () => {
      assert.equal(nativeEd25519Available(), true)
    })

    it('is the native implementation once node/ has started (node/polyfill.js, loaded by the test runner)', () => {
      const ed = defaultEd25519()
      assert.ok(ed instanceof NativeEd25519)
      assert.equal(ed.name, 'node:crypto')
    })

    it('returns the same instance every time', () => {
      assert.equal(defaultEd25519(), defaultEd25519())
    })

    it('is the portable @noble implementation, and SHA-256 the pure one, when crypto/ is loaded without node/', () => {
      // a fresh process that loads only dist/crypto: nothing has installed the native paths there
      const script = "const c = await import('./dist/crypto/index.js'); " +
        "console.log(c.defaultEd25519().name + ' ' + Buffer.from(c.sha256(new Uint8Array([97, 98, 99]))).toString('hex'))"
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }).trim()
      assert.equal(out, '@noble/ed25519 ' + createHash('sha256').update('abc').digest('hex'))
    })

    it('gives the same digests from the native and the pure SHA-256', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const pure = Buffer.from(nobleSha256(bytes)).toString('hex')
        assert.equal(Buffer.from(sha256(bytes)).toString('hex'), pure)
        assert.equal(createHash('sha256').update(bytes).digest('hex'), pure)
      }))
    })
  })
})
