import { createHash } from 'node:crypto'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import {
  EVIDENCE_TOPIC, PROTOCOLS, capabilityKeyCid, gossipMessageId, capabilityKeys, marketTopic, modelSlug, regionAncestry, regionWithin,
  VRAM_BUCKETS_GB, formatVram, nominalVramGB, vramLookupBucket, vramBuckets, vramMeetsGB
} from '../../../protocol/index.js'

describe('protocol constants and capability keys', () => {
  it('names protocols and topics as DESIGN §4–§5 says', () => {
    assert.equal(PROTOCOLS.kad, '/gpumesh/kad/1.0.0')
    assert.equal(PROTOCOLS.capability, '/gpumesh/capability/1.0.0')
    assert.equal(PROTOCOLS.exec, '/gpumesh/exec/1.0.0')
    assert.equal(PROTOCOLS.blob, '/gpumesh/blob/1.0.0')
    assert.equal(PROTOCOLS.probe, '/gpumesh/probe/1.0.0')
    assert.equal(marketTopic('eu'), 'gpumesh/2/market/eu')
    assert.equal(marketTopic(), 'gpumesh/2/market/global')
    assert.equal(EVIDENCE_TOPIC, 'gpumesh/2/evidence')
  })

  it('names a gossiped message by the SHA-256 of its topic and data (§7.6): the §8 bid envelope on gpumesh/2/market/eu', () => {
    const envelope = Buffer.from(
      '0a2408011220ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c120483cefd011ad002ad617601626164d82a5825000171122017' +
      '8aa80af00f7e46811ade34f02973ffc30cb3796796b556cfd4a5edcf51b16c636a6f62d82a58250001711220bca6d3643b05894aae4817151813c5fe0f670d6e' +
      '9a7f3c5a46cddebde66848ad64677075738178284750552d35623065316133632d376432662d346538612d396336312d306633653264346236613738656d6f64' +
      '656c756e76696469612d683130302d383067622d68626d336570726963651a001b774066726567696f6e6765752d7765737467636f756e747279624445677374' +
      '61727442791b0000019b76db9a30677672616d4d69421a00013e976869737375656441741b0000019b76daafd06870726f76696465727834313244334b6f6f57' +
      '52617750627850745031655a614a70756d476e7957583244635579643352516e796472336541746f34417a37696578706972657341741b0000019b76e3d7902a' +
      '4077e9aa32f28ddd547e0bd25b2355e5267ce02fc52ae743911343bc8f336f062c89e9d0cb9555f238339a10ea62b05f497c0c3315c9126bf6b145d7605636ae' +
      '0e', 'hex')
    assert.equal(envelope.byteLength, 449)
    const topic = 'gpumesh/2/market/eu'
    const id = gossipMessageId(topic, envelope)
    assert.equal(Buffer.from(id).toString('hex'), 'e2349e5ac2e8ffb7cbe4ef6fc1c74ccbb40ffd4d8eaccf69817428dc6df2a069')
    // varint(19) ‖ topic ‖ envelope, hashed as one
    assert.deepEqual(Buffer.from(id), createHash('sha256').update(Buffer.from([19])).update(topic).update(envelope).digest())
    // another topic, or one byte less of data, is another message
    assert.notDeepEqual(gossipMessageId(marketTopic(), envelope), id)
    assert.notDeepEqual(gossipMessageId(topic, envelope.subarray(1)), id)
    // a topic of 128 bytes takes a two-byte varint
    const long = 'x'.repeat(128)
    assert.deepEqual(Buffer.from(gossipMessageId(long, envelope)), createHash('sha256').update(Buffer.from([0x80, 0x01])).update(long).update(envelope).digest())
  })

  it('slugs GPU model names as nvidia-smi prints them', () => {
    assert.equal(modelSlug('NVIDIA H100 80GB HBM3'), 'nvidia-h100-80gb-hbm3')
    assert.equal(modelSlug('NVIDIA A100-SXM4-40GB'), 'nvidia-a100-sxm4-40gb')
    assert.equal(modelSlug('  Tesla T4 '), 'tesla-t4')
  })

  it('maps reported MiB to the marketed VRAM buckets', () => {
    // memory.total in MiB as nvidia-smi reports it for these cards
    const cards: Array<[string, number, number]> = [
      ['H100 80GB HBM3', 81_559, 80],
      ['H200', 143_771, 141],
      ['A100-SXM4-40GB', 40_960, 40],
      ['A100-PCIE-40GB', 40_536, 40],
      ['L40S', 46_068, 48],
      ['A10', 23_028, 24],
      ['RTX 4090', 24_564, 24],
      ['Tesla T4', 15_360, 16],
      ['Tesla V100-SXM2-32GB', 32_768, 32]
    ]
    for (const [name, mib, marketed] of cards) {
      const buckets = vramBuckets(mib)
      assert.equal(buckets.at(-1), marketed, name)
      assert.ok(vramMeetsGB(mib, marketed), name)
    }
    assert.deepEqual(vramBuckets(4096), [])
    assert.equal(vramLookupBucket(40), 40)
    assert.equal(vramLookupBucket(50), 48) // a 64 GB card announces 48 and meets "at least 50"
    assert.equal(vramLookupBucket(500), 192)
    assert.equal(vramLookupBucket(4), undefined)
  })

  it('a GPU meets a VRAM requirement by its nominal size, never by the slack of the 0.92 rule', () => {
    // the 0.92 rule alone let an H100 (81,559 MiB ≥ floor(86 × 1024 × 0.92) = 81,018) pass for 86 GB
    assert.equal(nominalVramGB(81_559), 80)
    assert.ok(vramMeetsGB(81_559, 80))
    assert.ok(!vramMeetsGB(81_559, 81))
    assert.ok(!vramMeetsGB(81_559, 86))
    assert.ok(vramMeetsGB(81_559, 79.5))
    // L40S reports 45 GiB but is a 48 GB card, and meets 48, not 49
    assert.equal(nominalVramGB(46_068), 48)
    assert.ok(vramMeetsGB(46_068, 48))
    assert.ok(!vramMeetsGB(46_068, 49))
    // a card between buckets keeps its own size: a 20 GB card (20,475 MiB) meets 20, not 21
    assert.equal(nominalVramGB(20_475), 20)
    assert.ok(vramMeetsGB(20_475, 20) && !vramMeetsGB(20_475, 21))
    // unknown VRAM (0 MiB) meets only "no requirement" and claims no bucket
    assert.equal(nominalVramGB(0), 0)
    assert.ok(vramMeetsGB(0, 0) && !vramMeetsGB(0, 1))
    assert.deepEqual(vramBuckets(0), [])
    assert.equal(formatVram(81_559), '80 GB (79.6 GiB reported)')
    assert.equal(formatVram(46_068), '48 GB (45.0 GiB reported)')
    assert.equal(formatVram(0), 'VRAM unknown')
  })

  it('announces exactly the buckets of the 0.92 threshold table: at, and one MiB below, each threshold', () => {
    for (const gb of VRAM_BUCKETS_GB) {
      const threshold = Math.floor(gb * 1024 * 0.92)
      assert.equal(vramBuckets(threshold).at(-1), gb, `${gb} at ${threshold}`)
      assert.ok(!vramBuckets(threshold - 1).includes(gb), `${gb} below ${threshold}`)
      assert.ok(vramMeetsGB(threshold, gb) && !vramMeetsGB(threshold - 1, gb), `${gb}`)
    }
  })

  it('treats regions as a hierarchy', () => {
    assert.deepEqual(regionAncestry('eu-west-2'), ['eu-west-2', 'eu-west', 'eu'])
    assert.ok(regionWithin('eu-west', 'eu'))
    assert.ok(regionWithin('eu', 'eu'))
    assert.ok(!regionWithin('europa', 'eu'))
    assert.ok(!regionWithin('eu', 'eu-west'))
    assert.ok(!regionWithin('eu-', 'eu-'.slice(0, 2) + 'x'))
    assert.ok(regionWithin('eu-', 'eu'), 'a trailing dash is still inside')
    assert.ok(!regionWithin('eux-west', 'eu'))
    // the definition the allocation-free check replaced (bench:pipeline): the same answer on any pair
    const text = fc.string({ unit: fc.constantFrom('e', 'u', '-'), maxLength: 6 })
    fc.assert(fc.property(text, text, (region, wanted) => {
      assert.equal(regionWithin(region, wanted), region === wanted || region.startsWith(`${wanted}-`))
    }), { numRuns: 2000 })
  })

  it('derives the capability keys a provider announces', () => {
    const keys = capabilityKeys({ region: 'eu-west', gpus: [{ model: 'nvidia-a100-sxm4-40gb', vramMiB: 40_536 }, { model: 'nvidia-a100-sxm4-40gb', vramMiB: 40_536 }] })
    assert.deepEqual(keys, [
      'gpu/nvidia-a100-sxm4-40gb',
      ...['12', '16', '24', '32', '40', '8'].map((gb) => `market/eu/${gb}`),
      'region/eu', 'region/eu-west',
      'vram/12', 'vram/16', 'vram/24', 'vram/32', 'vram/40', 'vram/8'
    ].sort())
  })

  it('hashes a capability key to a stable raw CIDv1', () => {
    const cid = capabilityKeyCid('gpu/nvidia-h100-80gb-hbm3')
    assert.equal(cid.version, 1)
    assert.equal(cid.code, 0x55)
    assert.equal(cid.multihash.code, 0x12)
    // CIDv1(raw, sha2-256("gpumesh/cap/1/gpu/nvidia-h100-80gb-hbm3")), computed independently and pinned
    // so that the wire name cannot drift unnoticed
    const digest = createHash('sha256').update('gpumesh/cap/1/gpu/nvidia-h100-80gb-hbm3').digest()
    assert.deepEqual([...cid.multihash.digest], [...digest])
    assert.equal(cid.toString(), 'bafkreihndcy3sfn6b7hoemke2f4d6wqubnkyph3tv4dxuyrnkipl2gmxya')
    assert.notEqual(cid.toString(), capabilityKeyCid('gpu/nvidia-h100').toString())
  })
})
