import assert from 'node:assert/strict'
import { adMatches, lookupKeyFor, modelMatches, type CapabilityAd } from '../../../protocol/index.js'

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

  it('filters ads by region hierarchy, VRAM and model on the same GPU', () => {
    const mixed = ad('eu-west', [['tesla-t4', 15_360], ['nvidia-h100-80gb-hbm3', 81_559]])
    assert.ok(adMatches(mixed, { region: 'eu', minVramGB: 80, gpu: 'h100' }))
    assert.ok(!adMatches(mixed, { gpu: 't4', minVramGB: 40 }))
    assert.ok(!adMatches(mixed, { region: 'us' }))
    assert.ok(!adMatches(ad('eu', []), {}))
  })
})
