import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MarketStore } from '../../../../node/market/store.js'
import { NodeStore } from '../../../../node/storage.js'
import { ReputationStore } from '../../../../protocol/trust/reputation.js'

describe('convictions across a restart (node/market/store.ts)', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-convictions-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  it('a conviction and its proof envelope are read back after the database is closed and reopened', async () => {
    const proofBytes = Uint8Array.from([1, 2, 3, 4])
    let store = await NodeStore.open(dir)
    await new MarketStore(store.database, store.journal).putConviction('12D3KooWcheat', 'bafyproof', proofBytes, 1234)
    await store.close()

    store = await NodeStore.open(dir)
    const market = new MarketStore(store.database, store.journal)
    assert.deepEqual(await market.convictions(), [{ subject: '12D3KooWcheat', proof: 'bafyproof', at: 1234 }])
    assert.deepEqual(new Uint8Array(await market.getEnvelope('bafyproof') ?? []), proofBytes)
    // what RequesterMarket.load does with them: the view convicts again, even from an empty snapshot
    const view = new ReputationStore('me')
    for (const c of await market.convictions()) view.convict(c.subject, c.proof)
    assert.equal(view.score('12D3KooWcheat'), 0)
    await store.close()
  })

  it('no convictions: an empty list', async () => {
    const store = await NodeStore.open(dir)
    assert.deepEqual(await new MarketStore(store.database, store.journal).convictions(), [])
    await store.close()
  })
})
