import assert from 'node:assert/strict'
import fc from 'fast-check'
import { adMatches, lookupKeyFor, modelInFamily, modelMatches, modelSlug, type CapabilityAd } from '../../../protocol/index.js'

function ad (region: string, gpus: Array<[string, number]>): CapabilityAd {
  return {
    v: 1, issuedAt: 0, expiresAt: 1, seq: 1, region, host: { cpuCores: 1, memoryMiB: 1, diskGiB: 0 },
    gpus: gpus.map(([model, vramMiB], index) => ({ index, uuid: `GPU-${index}`, name: model, model, vramMiB, provenance: 'declared' as const })),
    price: { floor: 1 }, availability: { timeZone: 'UTC', windows: [] }, workloads: ['process'], limits: {}, attestations: [], addrs: []
  }
}

describe('provider discovery decisions', () => {
  it('looks up the most selective key the query allows', () => {
    assert.equal(lookupKeyFor({ region: 'eu-west', minVramGB: 40 }), 'market/eu/40')
    assert.equal(lookupKeyFor({ region: 'eu', minVramGB: 50 }), 'market/eu/48')
    assert.equal(lookupKeyFor({ region: 'eu-west' }), 'region/eu-west')
    assert.equal(lookupKeyFor({ minVramGB: 80 }), 'vram/80')
    assert.equal(lookupKeyFor({ gpu: 'h100' }), 'vram/8')
    assert.equal(lookupKeyFor({}), 'vram/8')
  })

  it('matches GPU model words in any order', () => {
    assert.ok(modelMatches('nvidia-a100-sxm4-80gb', 'A100 80GB'))
    assert.ok(modelMatches('nvidia-h100-80gb-hbm3', 'h100'))
    assert.ok(modelMatches('nvidia-geforce-rtx-4090', 'RTX 4090'))
    assert.ok(modelMatches('nvidia-geforce-rtx-4090', 'rtx-40'))
    assert.ok(!modelMatches('nvidia-a100-sxm4-40gb', 'A100 80GB'))
    assert.ok(!modelMatches('nvidia-h100-80gb-hbm3', 'h200'))
  })

  it('lets a person\'s provider search (not a job) match part of a word: rtx-40 finds the 40 series', () => {
    assert.ok(modelMatches('nvidia-geforce-rtx-4090', 'rtx-40'))
    assert.ok(modelMatches('nvidia-a100-sxm4-80gb', 'a10'), 'a search may show more than a job accepts')
  })

  describe('job model constraints (modelInFamily, §7.4a)', () => {
    it('never matches a model whose name merely contains the wanted one', () => {
      assert.ok(!modelInFamily('nvidia-a100-sxm4-80gb', 'a10'), 'a10 is not an A100')
      assert.ok(!modelInFamily('nvidia-a100-pcie-40gb', 'nvidia-a10'))
      assert.ok(!modelInFamily('nvidia-l40s', 'l4'), 'l4 is not an L40S')
      assert.ok(!modelInFamily('nvidia-l40s', 'l40'), 'the L40 and the L40S are different parts')
      assert.ok(!modelInFamily('nvidia-h100-80gb-hbm3', 'h10'))
      assert.ok(!modelInFamily('nvidia-geforce-rtx-4090', 'rtx-40'))
      assert.ok(!modelInFamily('nvidia-h100-80gb-hbm3', 'h200'))
    })

    it('matches the exact slug, and every model whose words include all the wanted words', () => {
      assert.ok(modelInFamily('nvidia-a10', 'a10'))
      assert.ok(modelInFamily('nvidia-l4', 'l4'))
      assert.ok(modelInFamily('nvidia-l40s', 'l40s'))
      assert.ok(modelInFamily('nvidia-h100-80gb-hbm3', 'nvidia-h100-80gb-hbm3'))
      assert.ok(modelInFamily('nvidia-h100-80gb-hbm3', 'h100'))
      assert.ok(modelInFamily('nvidia-h100-nvl', 'h100'))
      assert.ok(modelInFamily('nvidia-a100-sxm4-80gb', 'a100-80gb'))
      assert.ok(modelInFamily('nvidia-a100-sxm4-80gb', '80gb-a100'), 'word order does not matter')
      assert.ok(!modelInFamily('nvidia-a100-sxm4-40gb', 'a100-80gb'))
      assert.ok(modelInFamily('nvidia-geforce-rtx-4090', '4090'))
    })

    it('is the word rule: true exactly when every word of the wanted slug is a word of the model (property)', () => {
      const word = fc.constantFrom('nvidia', 'a10', 'a100', 'h100', 'l4', 'l40', 'l40s', '40gb', '80gb', 'sxm4', 'rtx', '4090', '40', '0')
      fc.assert(fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), fc.array(word, { minLength: 1, maxLength: 3 }), (m, w) => {
        const model = m.join('-')
        const wanted = w.join('-')
        assert.equal(modelInFamily(model, wanted), w.every((x) => m.includes(x)))
        assert.ok(modelInFamily(model, model))
      }))
    })

    it('scans words without splitting: the same answer as the split-and-Set rule on any string, empty words and stray dashes included (property)', () => {
      // the definition the allocation-free modelInFamily replaced (bench:pipeline): it must agree everywhere
      const reference = (model: string, family: string): boolean => {
        if (family === '') return false
        const words = new Set(model.split('-'))
        return family.split('-').every((w) => words.has(w))
      }
      const text = fc.string({ unit: fc.constantFrom('a', 'b', '1', '-'), maxLength: 8 })
      fc.assert(fc.property(text, text, (model, family) => {
        assert.equal(modelInFamily(model, family), reference(model, family), `${JSON.stringify(model)} ${JSON.stringify(family)}`)
      }), { numRuns: 3000 })
      for (const [model, family, expected] of [['', '', false], ['-', '-', true], ['a-', 'a-', true], ['a', 'a-', false], ['a--b', 'a--b', true], ['a--b', 'b-', true], ['a-b', 'b-', false], ['ab', 'a', false], ['a-ab', 'ab-a', true]] as const) {
        assert.equal(modelInFamily(model, family), expected, `${model} ${family}`)
      }
    })

    it('reproduces the worked example of protocol/README.md §7.4a', () => {
      const models = ['nvidia-a10', 'nvidia-a100-sxm4-40gb', 'nvidia-a100-sxm4-80gb', 'nvidia-l4', 'nvidia-l40s', 'nvidia-h100-80gb-hbm3', 'nvidia-h100-nvl']
      const table: Array<[string, string]> = [
        ['a10', 'yes no no no no no no'], ['a100', 'no yes yes no no no no'], ['a100-80gb', 'no no yes no no no no'],
        ['80gb-a100', 'no no yes no no no no'], ['l4', 'no no no yes no no no'], ['l40', 'no no no no no no no'],
        ['h100', 'no no no no no yes yes'], ['nvidia-h100-80gb-hbm3', 'no no no no no yes no']
      ]
      for (const [family, row] of table) {
        assert.equal(models.map((m) => modelInFamily(m, family) ? 'yes' : 'no').join(' '), row, family)
      }
    })

    it('takes the wanted model as a slug: what a job holds', () => {
      assert.equal(modelSlug('A100 80GB'), 'a100-80gb')
      assert.ok(modelInFamily('nvidia-a100-sxm4-80gb', modelSlug('A100 80GB')))
      assert.ok(!modelInFamily('nvidia-a100-sxm4-80gb', ''), 'an empty slug names no family')
    })
  })

  it('filters ads by region hierarchy, VRAM and model on the same GPU', () => {
    const mixed = ad('eu-west', [['tesla-t4', 15_360], ['nvidia-h100-80gb-hbm3', 81_559]])
    assert.ok(adMatches(mixed, { region: 'eu', minVramGB: 80, gpu: 'h100' }))
    assert.ok(!adMatches(mixed, { gpu: 't4', minVramGB: 40 }))
    assert.ok(!adMatches(mixed, { region: 'us' }))
    assert.ok(!adMatches(ad('eu', []), {}))
  })
})
