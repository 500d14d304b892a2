import assert from 'node:assert/strict'
import { NobleEd25519, type Ed25519 } from '../../../crypto/index.js'
import { NativeEd25519 } from '../../../node/ed25519-native.js'

// The eight small-order points of edwards25519 (canonical encodings). For such a public key A, the
// "signature" R = identity, S = 0 satisfies the cofactorless equation for every message, so a lenient
// verifier lets anyone sign as A. OpenSSL accepts them; gpumesh refuses them in both implementations.
const SMALL_ORDER_KEYS = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa'
]
const IDENTITY_SIGNATURE = Uint8Array.from(Buffer.from('01' + '00'.repeat(63), 'hex'))

describe('Ed25519 strict public keys', () => {
  for (const impl of [new NativeEd25519(), new NobleEd25519()] as Ed25519[]) {
    it(`${impl.name} refuses small-order public keys, which would verify a trivial signature`, () => {
      for (const hex of SMALL_ORDER_KEYS) {
        const key = Uint8Array.from(Buffer.from(hex, 'hex'))
        for (const message of ['', 'bid', 'pay me']) {
          assert.equal(impl.verify(key, new TextEncoder().encode(message), IDENTITY_SIGNATURE), false, `${hex} / ${message}`)
        }
      }
    })

    it(`${impl.name} refuses a non-canonical public key encoding (y ≥ p)`, () => {
      // y = p + 1 ≡ 1 (mod p): a non-canonical encoding of a small-order point
      const key = Uint8Array.from(Buffer.from('eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex'))
      assert.equal(impl.verify(key, new Uint8Array(0), IDENTITY_SIGNATURE), false)
    })
  }
})
