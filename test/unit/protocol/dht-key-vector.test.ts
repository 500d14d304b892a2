/**
 * protocol/README.md §7.3 "On the DHT": the Kademlia key of a capability key is its CID's multihash
 * (34 bytes, `12 20` ‖ digest), not the CID bytes — checked for the spec's vector and every key of the
 * spec's worked provider, and against the spec's text.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { toString as toHex } from 'uint8arrays/to-string'
import { capabilityKeyCid } from '../../../protocol/index.js'
import { specSection } from '../../helpers/spec-text.js'

describe('protocol/README.md §7.3: DHT key bytes', () => {
  it('gpu/nvidia-h100-80gb-hbm3 is looked up under 12 20 ‖ sha2-256 of its prefixed name, 34 bytes', () => {
    const cid = capabilityKeyCid('gpu/nvidia-h100-80gb-hbm3')
    const key = cid.multihash.bytes
    assert.equal(key.length, 34)
    assert.equal(toHex(key, 'base16'), '1220' + createHash('sha256').update('gpumesh/cap/1/gpu/nvidia-h100-80gb-hbm3').digest('hex'))
    // the CID is 01 55 ‖ the key: the version and codec bytes never reach the DHT
    assert.equal(toHex(cid.bytes, 'base16'), '0155' + toHex(key, 'base16'))
    assert.ok(specSection('7.3').includes('`' + toHex(key, 'base16') + '`'), 'the spec shows the 34 key bytes')
  })

  it('every key is 34 bytes starting 12 20, and no two keys share one', () => {
    const names = ['gpu/nvidia-h100-80gb-hbm3', 'region/eu', 'region/eu-west', 'market/eu/40', 'vram/8', 'vram/80']
    const keys = names.map((n) => toHex(capabilityKeyCid(n).multihash.bytes, 'base16'))
    for (const k of keys) assert.match(k, /^1220[0-9a-f]{64}$/)
    assert.equal(new Set(keys).size, names.length)
  })
})
