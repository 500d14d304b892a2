import assert from 'node:assert/strict'
import fc from 'fast-check'
import { generateKeyPair, generateKeyPairFromSeed, privateKeyFromProtobuf, privateKeyToProtobuf, publicKeyFromRaw } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey, peerIdFromPublicKey as libp2pPeerIdFromPublicKey, peerIdFromString } from '@libp2p/peer-id'
import {
  Identity, InvalidKeyError, NobleEd25519, PRIVATE_KEY_PROTOBUF_BYTES, isPeerId, peerIdFromPublicKey, publicKeyFromPeerId, publicKeyToProtobuf
} from '../../../crypto/index.js'
import { NativeEd25519 } from '../../../node/ed25519-native.js'
import { generateIdentity } from '../../../node/random.js'
import { RFC8032_VECTORS, fromHex, toHex } from '../../fixtures/rfc8032-vectors.js'

const seedArb = fc.uint8Array({ minLength: 32, maxLength: 32 })

describe('crypto/identity', () => {
  describe('Identity', () => {
    it('generates a fresh Ed25519 identity with a 12D3KooW peer id', () => {
      const a = generateIdentity()
      const b = generateIdentity()
      assert.equal(a.publicKey.byteLength, 32)
      assert.match(a.peerId, /^12D3KooW[1-9A-HJ-NP-Za-km-z]{44}$/)
      assert.notEqual(a.peerId, b.peerId)
      assert.equal(a.ed25519.name, 'node:crypto')
    })

    it('derives the RFC 8032 public key and signs like the RFC from a known seed', () => {
      for (const vector of RFC8032_VECTORS) {
        for (const ed of [new NativeEd25519(), new NobleEd25519()]) {
          const identity = new Identity(fromHex(vector.secretKey), ed)
          assert.equal(toHex(identity.publicKey), vector.publicKey)
          assert.equal(toHex(identity.sign(fromHex(vector.message))), vector.signature)
          assert.equal(identity.peerId, peerIdFromPublicKey(fromHex(vector.publicKey)))
        }
      }
    })

    it('writes the exact libp2p protobuf private-key bytes', () => {
      const vector = RFC8032_VECTORS[0]
      assert.ok(vector != null)
      const proto = new Identity(fromHex(vector.secretKey)).toProtobuf()
      assert.equal(proto.byteLength, PRIVATE_KEY_PROTOBUF_BYTES)
      assert.equal(PRIVATE_KEY_PROTOBUF_BYTES, 68)
      assert.equal(toHex(proto), '08011240' + vector.secretKey + vector.publicKey)
    })

    it('round-trips through toProtobuf and fromProtobuf (property)', () => {
      fc.assert(fc.property(seedArb, seed => {
        const identity = new Identity(seed)
        const again = Identity.fromProtobuf(identity.toProtobuf())
        assert.equal(again.peerId, identity.peerId)
        assert.deepEqual(again.publicKey, identity.publicKey)
        assert.deepEqual(again.toProtobuf(), identity.toProtobuf())
        assert.deepEqual(again.sign(seed), identity.sign(seed))
      }), { numRuns: 100 })
    })

    it('loads with the implementation it is given', () => {
      const identity = generateIdentity()
      const noble = new NobleEd25519()
      const again = Identity.fromProtobuf(identity.toProtobuf(), noble)
      assert.equal(again.ed25519, noble)
      assert.equal(again.peerId, identity.peerId)
    })

    it('keeps its own copy of the seed', () => {
      const seed = new Uint8Array(32).fill(7)
      const identity = new Identity(seed)
      const message = Uint8Array.from([1, 2, 3])
      const before = identity.sign(message)
      seed.fill(9)
      assert.deepEqual(identity.sign(message), before)

      const proto = identity.toProtobuf()
      const loaded = Identity.fromProtobuf(proto)
      proto.fill(0)
      assert.deepEqual(loaded.sign(message), before)
    })

    it('throws TypeError for a seed that is not 32 bytes', () => {
      assert.throws(() => new Identity(new Uint8Array(31)), TypeError)
      assert.throws(() => new Identity(new Uint8Array(33)), TypeError)
    })

    describe('fromProtobuf rejects', () => {
      const good = new Identity(new Uint8Array(32).fill(1)).toProtobuf()

      it('the wrong length', () => {
        for (const bytes of [new Uint8Array(0), good.subarray(0, 67), Uint8Array.from([...good, 0]), good.subarray(0, 36)]) {
          assert.throws(() => Identity.fromProtobuf(bytes), InvalidKeyError)
        }
      })

      it('another key type (secp256k1, RSA, ECDSA in the Type field)', () => {
        for (const type of [0, 2, 3]) {
          const bytes = Uint8Array.from(good)
          bytes[1] = type
          assert.throws(() => Identity.fromProtobuf(bytes), InvalidKeyError)
        }
      })

      it('a real libp2p secp256k1 private key', async () => {
        const secp = privateKeyToProtobuf(await generateKeyPair('secp256k1'))
        assert.throws(() => Identity.fromProtobuf(secp), InvalidKeyError)
      })

      it('a wrong protobuf header (field tags or data length)', () => {
        for (const [index, value] of [[0, 0x10], [2, 0x1a], [3, 0x20], [3, 0x41]] as const) {
          const bytes = Uint8Array.from(good)
          bytes[index] = value
          assert.throws(() => Identity.fromProtobuf(bytes), InvalidKeyError)
        }
      })

      it('a public half that does not match the seed (any single bit flipped)', () => {
        for (let bit = 0; bit < 256; bit++) {
          const bytes = Uint8Array.from(good)
          const index = 4 + 32 + (bit >> 3)
          bytes[index] = (bytes[index] as number) ^ (1 << (bit & 7))
          assert.throws(() => Identity.fromProtobuf(bytes), InvalidKeyError, `bit ${bit}`)
        }
      })

      it('a seed that does not match its public half', () => {
        const bytes = Uint8Array.from(good)
        bytes[4] = (bytes[4] as number) ^ 1
        assert.throws(() => Identity.fromProtobuf(bytes), InvalidKeyError)
      })
    })
  })

  describe('interop with @libp2p/crypto and @libp2p/peer-id', () => {
    it('privateKeyFromProtobuf loads toProtobuf, with the same peer id (property)', async () => {
      await fc.assert(fc.asyncProperty(seedArb, async seed => {
        const identity = new Identity(seed)
        const key = privateKeyFromProtobuf(identity.toProtobuf())
        assert.equal(key.type, 'Ed25519')
        assert.equal(peerIdFromPrivateKey(key).toString(), identity.peerId)
        assert.deepEqual(key.publicKey.raw, identity.publicKey)
        assert.deepEqual(privateKeyToProtobuf(key), identity.toProtobuf())
        const message = Uint8Array.from([...seed, 42])
        assert.deepEqual(new Uint8Array(await key.sign(message)), identity.sign(message))
      }), { numRuns: 50 })
    })

    it('fromProtobuf loads privateKeyToProtobuf(generateKeyPair("Ed25519")), with the same peer id', async () => {
      for (let i = 0; i < 20; i++) {
        const key = await generateKeyPair('Ed25519')
        const identity = Identity.fromProtobuf(privateKeyToProtobuf(key))
        assert.equal(identity.peerId, peerIdFromPrivateKey(key).toString())
        assert.deepEqual(identity.publicKey, key.publicKey.raw)
        assert.deepEqual(identity.toProtobuf(), privateKeyToProtobuf(key))
        const message = Uint8Array.from([i, 1, 2, 3])
        assert.equal(await key.publicKey.verify(message, identity.sign(message)), true)
      }
    })

    it('agrees with generateKeyPairFromSeed', async () => {
      await fc.assert(fc.asyncProperty(seedArb, async seed => {
        const key = await generateKeyPairFromSeed('Ed25519', seed)
        assert.equal(new Identity(seed).peerId, peerIdFromPrivateKey(key).toString())
      }), { numRuns: 50 })
    })
  })

  describe('peer ids', () => {
    it('peerIdFromPublicKey matches @libp2p/peer-id (property)', () => {
      fc.assert(fc.property(seedArb, seed => {
        const publicKey = new Identity(seed).publicKey
        const expected = libp2pPeerIdFromPublicKey(publicKeyFromRaw(publicKey)).toString()
        assert.equal(peerIdFromPublicKey(publicKey), expected)
      }), { numRuns: 100 })
    })

    it('publicKeyFromPeerId inverts peerIdFromPublicKey (property)', () => {
      fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), publicKey => {
        const peerId = peerIdFromPublicKey(publicKey)
        assert.deepEqual(publicKeyFromPeerId(peerId), publicKey)
        assert.equal(isPeerId(peerId), true)
      }), { numRuns: 200 })
    })

    it('publicKeyFromPeerId reads peer ids made by @libp2p/peer-id', async () => {
      for (let i = 0; i < 10; i++) {
        const key = await generateKeyPair('Ed25519')
        const peerId = peerIdFromPrivateKey(key).toString()
        assert.deepEqual(publicKeyFromPeerId(peerId), key.publicKey.raw)
        assert.deepEqual(peerIdFromString(peerId).publicKey?.raw, publicKeyFromPeerId(peerId))
      }
    })

    it('gives the known peer id of the RFC 8032 TEST 1 key', () => {
      const vector = RFC8032_VECTORS[0]
      assert.ok(vector != null)
      const publicKey = fromHex(vector.publicKey)
      const expected = libp2pPeerIdFromPublicKey(publicKeyFromRaw(publicKey)).toString()
      assert.equal(peerIdFromPublicKey(publicKey), expected)
      assert.ok(expected.startsWith('12D3KooW'))
    })

    it('publicKeyToProtobuf writes the libp2p PublicKey protobuf', () => {
      fc.assert(fc.property(seedArb, seed => {
        const publicKey = new Identity(seed).publicKey
        assert.equal(toHex(publicKeyToProtobuf(publicKey)), '08011220' + toHex(publicKey))
      }), { numRuns: 20 })
    })

    it('throws InvalidKeyError for public keys that are not 32 bytes', () => {
      for (const length of [0, 31, 33, 64]) {
        assert.throws(() => publicKeyToProtobuf(new Uint8Array(length)), InvalidKeyError)
        assert.throws(() => peerIdFromPublicKey(new Uint8Array(length)), InvalidKeyError)
      }
    })

    describe('invalid peer ids throw InvalidKeyError', () => {
      const valid = peerIdFromPublicKey(new Uint8Array(32).fill(3))

      const cases: Array<[string, () => Promise<string> | string]> = [
        ['the empty string', () => ''],
        ['characters outside base58btc (0, O, I, l)', () => valid.slice(0, -1) + '0'],
        ['the multibase-prefixed form', () => `z${valid}`],
        ['a truncated peer id', () => valid.slice(0, -1)],
        ['a peer id with an extra character', () => `${valid}1`],
        ['a secp256k1 peer id', async () => peerIdFromPrivateKey(await generateKeyPair('secp256k1')).toString()],
        ['an RSA-style sha2-256 peer id (Qm…)', () => 'QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N'],
        ['a CID string', () => 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'],
        ['whitespace around a valid id', () => ` ${valid}`]
      ]

      for (const [name, make] of cases) {
        it(name, async () => {
          const peerId = await make()
          assert.throws(() => publicKeyFromPeerId(peerId), InvalidKeyError)
          assert.equal(isPeerId(peerId), false)
        })
      }

      it('random strings (property)', () => {
        fc.assert(fc.property(fc.string({ maxLength: 60 }), value => {
          fc.pre(value !== valid)
          let result: Uint8Array | undefined
          try {
            result = publicKeyFromPeerId(value)
          } catch (err) {
            assert.ok(err instanceof InvalidKeyError, String(err))
            return
          }
          // only a genuine Ed25519 peer id may decode
          assert.equal(peerIdFromPublicKey(result), value)
        }), { numRuns: 300 })
      })
    })
  })
})
