/**
 * protocol/README.md on cached inputs (issue 12, data-aware placement): §8's bid keeps its CID, the same
 * bid with `cached` has the CID §5.4 shows, and §5.6's "Cached inputs" example is what the reference
 * code computes (factor, score, the price an uncached bidder must beat).
 */
import assert from 'node:assert/strict'
import { CID } from 'multiformats/cid'
import { cidOfValue } from '../../../../crypto/index.js'
import { bidSchema, type Bid } from '../../../../protocol/index.js'
import { INPUT_TRANSFER_BYTES_PER_SEC, MAX_CACHE_DISCOUNT, transferSaving } from '../../../../protocol/market/input-cache.js'
import { compareRanked, effectivePrice, scoreFactor } from '../../../../protocol/market/scoring.js'
import { specSection } from '../../../helpers/spec-text.js'

const hex = (h: string): Uint8Array => Uint8Array.from((h.match(/../g) ?? []).map((x) => parseInt(x, 16)))
const flat = (text: string): string => text.replace(/\s+/g, ' ')

/** §8's input `eval.py` and bid. */
const EVAL_PY = CID.decode(hex('01551220b80792336156c7b0f7fe02eeef24610d2d52a10d1810397744471d1dc5738180'))
const BID: Bid = {
  v: 1,
  ad: CID.decode(hex('01711220178aa80af00f7e46811ade34f02973ffc30cb3796796b556cfd4a5edcf51b16c')),
  job: CID.decode(hex('01711220bca6d3643b05894aae4817151813c5fe0f670d6e9a7f3c5a46cddebde66848ad')),
  gpus: ['GPU-5b0e1a3c-7d2f-4e8a-9c61-0f3e2d4b6a78'],
  model: 'nvidia-h100-80gb-hbm3',
  price: 1800000,
  region: 'eu-west',
  country: 'DE',
  startBy: 1767225662000,
  vramMiB: 81559,
  issuedAt: 1767225602000,
  provider: '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7',
  expiresAt: 1767226202000
}

/** §5.6's example job: one hour, inputs of 700 MiB and 100 MiB. */
const MODEL = CID.parse('bafkreicl6ujc6ncfktctxxroxognfn7d2fqavvrryoc2lv6m4i6hpbkfti')
const DATA = CID.parse('bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku')
const WORKLOAD = { maxRuntimeSec: 3600, inputs: [{ path: 'model.bin', cid: MODEL, size: 734003200 }, { path: 'data.bin', cid: DATA, size: 104857600 }] }

describe('protocol/README.md: cached inputs (vectors)', () => {
  it('§8\'s bid keeps its CID; with cached: [eval.py] it has the CID §5.4 shows', () => {
    assert.equal(cidOfValue(BID).cid.toString(), 'bafyreihaenio3ym5ufp4op6dbyswdprqqjj3z6rywkq5kzsrumehw2ybbm')
    const cached = { ...BID, cached: [EVAL_PY] }
    assert.ok(bidSchema.safeParse(cached).success)
    const id = cidOfValue(cached).cid.toString()
    const text = flat(specSection('5.4 '))
    assert.ok(text.includes(`"cached": [42(h'00${Buffer.from(EVAL_PY.bytes).toString('hex')}')]`))
    assert.ok(text.includes(`has the payload CID \`${id}\``), id)
  })

  it('the schema bounds cached: never empty, at most 256, content CIDs only', () => {
    assert.equal(bidSchema.safeParse({ ...BID, cached: [] }).success, false)
    assert.equal(bidSchema.safeParse({ ...BID, cached: Array.from({ length: 257 }, () => EVAL_PY) }).success, false)
    assert.ok(bidSchema.safeParse({ ...BID, cached: Array.from({ length: 256 }, () => EVAL_PY) }).success)
    assert.equal(bidSchema.safeParse({ ...BID, cached: [BID.ad.toString()] }).success, false)
  })

  it('§5.6\'s parameters and example: factor, score, and the price an uncached bidder must beat', () => {
    const text = flat(specSection('5.6'))
    assert.equal(INPUT_TRANSFER_BYTES_PER_SEC, 1048576)
    assert.equal(MAX_CACHE_DISCOUNT, 0.5)
    assert.ok(text.includes('| input transfer rate assumed for `cached` inputs | 1048576 bytes/s (1 MiB/s) |'))
    assert.ok(text.includes('| cache discount | at most 0.5 |'))
    const saving = transferSaving(WORKLOAD, [MODEL])
    assert.deepEqual([saving.inputBytes, saving.cachedBytes, saving.savedSec], [838860800, 734003200, 700])
    const factor = scoreFactor({ cacheFactor: saving.factor }, 'silver')
    const score = effectivePrice({ price: 1800000, cacheFactor: saving.factor }, 'silver')
    assert.ok(text.includes(`inputSec = 800, savedSec = 700, cacheFactor = 1 − 700 / 4400 = ${saving.factor};`), String(saving.factor))
    assert.ok(text.includes(`factor = 1.4300000000000002 × ${saving.factor} = ${factor}, so a price of 1800000 scores ${score}, where the same bid without \`cached\` scores 2574000.0000000005`))
    // the highest uncached ask that still ranks first (its CID string lower) against the cached bid
    let tie = Math.floor(1800000 * saving.factor) + 2
    while (compareRanked({ effectivePrice: effectivePrice({ price: tie }, 'silver'), cid: 'a' }, { effectivePrice: score, cid: 'b' }) > 0) tie--
    assert.ok(text.includes(`must ask at most ${tie} to rank first`), String(tie))
  })

  it('the cap: a transfer-bound job discounts at most half; nothing cached is exactly 1', () => {
    assert.equal(transferSaving({ maxRuntimeSec: 60, inputs: [{ path: 'x', cid: MODEL, size: 1024 * 1048576 }] }, [MODEL]).factor, 0.5)
    assert.equal(transferSaving(WORKLOAD, undefined).factor, 1)
    assert.equal(transferSaving(WORKLOAD, []).factor, 1)
  })
})
