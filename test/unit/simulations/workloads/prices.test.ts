/**
 * simulations/workloads/prices.ts on the real price snapshot: the family rule, the VRAM-class rule for
 * models the table lacks, median vs cheapest, one provider, spot where given, and the unverified rows.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { CsvValueError } from '../../../../simulations/workloads/csv.js'
import { GPU_MODELS, slugOf } from '../../../../simulations/workloads/gpu-models.js'
import { ListPrices, parsePrices, priceFamily, PricesError } from '../../../../simulations/workloads/prices.js'

const TEXT = readFileSync(fileURLToPath(new URL('../../../../../simulations/data/prices/gpu_prices_snapshot.csv', import.meta.url)), 'utf8')
const rows = parsePrices(TEXT)

describe('simulations/workloads: list prices', () => {
  it('reads the 19 rows of the snapshot, with families and VRAM', () => {
    assert.equal(rows.length, 19)
    assert.deepEqual(rows.slice(0, 4).map((r) => [r.family, r.vramGB, r.onDemandUsd]), [['h100', 80, 3.29], ['h100', 80, 2.99], ['h100', 80, 2.49], ['a100-40gb', 40, 1.29]])
    assert.equal(rows.find((r) => r.gpu === 'RTX A6000')?.spotUsd, 0.33)
    assert.equal(priceFamily('A100 80GB PCIe'), 'a100-80gb')
    assert.equal(priceFamily('H100 (p5.48xlarge)'), 'h100')
    assert.equal(priceFamily('A100 SXM4 40GB'), 'a100-40gb')
  })

  it('prices a model by its most specific family, median of the rows (micros per GPU-hour)', () => {
    const lp = new ListPrices(rows)
    const a100 = lp.priceFor(slugOf(GPU_MODELS.a100_40), GPU_MODELS.a100_40.vramMiB)
    assert.equal(a100.rule, 'model')
    assert.equal(a100.onDemand, 1_245_000, 'median of Lambda 1.29 and Vast 1.20; AWS\'s plain "A100" row is less specific')
    assert.equal(a100.spot, undefined)
    const a100_80 = lp.priceFor(slugOf(GPU_MODELS.a100_80), GPU_MODELS.a100_80.vramMiB)
    assert.deepEqual([a100_80.onDemand, a100_80.spot], [1_765_000, 1_190_000], 'RunPod 1.64 / 1.89, spot 1.19')
    const h100 = lp.priceFor('nvidia-h100-80gb-hbm3', 81_559)
    assert.equal(h100.onDemand, 2_990_000, 'median of 3.29, 2.99, 2.49, 1.80, 4.916 (the UNVERIFIED 12.29 left out)')
    assert.equal(new ListPrices(rows, { includeUnverified: true }).priceFor('nvidia-h100-80gb-hbm3', 81_559).onDemand, 3_140_000)
    assert.equal(new ListPrices(rows, { pick: 'min' }).priceFor('nvidia-h100-80gb-hbm3', 81_559).onDemand, 1_800_000)
    assert.equal(new ListPrices(rows, { provider: 'Lambda' }).priceFor('nvidia-h100-80gb-hbm3', 81_559).onDemand, 2_990_000)
  })

  it('prices a model the table lacks by the nearest VRAM class, a tie going to the smaller', () => {
    const lp = new ListPrices(rows)
    const t4 = lp.priceFor(slugOf(GPU_MODELS.t4), GPU_MODELS.t4.vramMiB)
    assert.equal(t4.rule, 'vram-class')
    assert.deepEqual(t4.rows.map((r) => `${r.provider}:${r.gpu}`), ['Lambda:V100', 'Vast.ai:V100'], '16 GB class')
    assert.equal(t4.onDemand, 375_000)
    const a10 = lp.priceFor(slugOf(GPU_MODELS.a10), GPU_MODELS.a10.vramMiB)
    assert.deepEqual(a10.rows.map((r) => r.gpu), ['RTX 4090', 'RTX 3090'], '24 GB class')
    // 22 GB: 20 (RTX A4500) and 24 (4090/3090) are 2 away each: the smaller class wins.
    assert.deepEqual(lp.priceFor('some-card', 22 * 1024).rows.map((r) => r.gpu), ['RTX A4500'])
    assert.equal(lp.priceFor('nvidia-a10', 0).rows[0]?.gpu, 'V100', 'unknown VRAM: the smallest class')
    // A word is not part of a word: a10 is not a100.
    assert.equal(lp.priceFor('nvidia-a10', 23_028).rule, 'vram-class')
  })

  it('refuses a bad snapshot with the line and column, and an empty selection', () => {
    const head = 'provider,gpu,offer,usd_per_gpu_hour_ondemand,usd_per_gpu_hour_spot,source\n'
    assert.throws(() => parsePrices(head + 'X,H100,o,1.0,,s\nY,H100,o,cheap,,s\n'), (e: unknown) => e instanceof CsvValueError && e.line === 3 && e.column === 'usd_per_gpu_hour_ondemand')
    assert.throws(() => parsePrices(head + 'X,(x),o,1.0,,s\n'), (e: unknown) => e instanceof CsvValueError && e.code === 'BAD_VALUE' && e.column === 'gpu')
    assert.throws(() => new ListPrices(rows, { provider: 'Nobody' }), (e: unknown) => e instanceof PricesError && e.code === 'NO_ROWS')
    const unsized = parsePrices(head + 'X,Mystery,o,1.0,,s\n')
    assert.throws(() => new ListPrices(unsized).priceFor('tesla-t4', 15_360), (e: unknown) => e instanceof PricesError && e.code === 'NO_PRICE')
  })
})
