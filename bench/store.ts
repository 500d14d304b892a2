/**
 * npm run bench:store — what the store journal costs: the time per market write with and without
 * the journal, and the start-up check of a database against its journal, for N records (default
 * 10,000: BENCH_RECORDS). Records are shaped like the market's: a ledger entry (≈ 300 B JSON), a
 * requester job record (≈ 2 KB JSON) and a signed envelope (≈ 600 B) per job.
 */
import '../node/polyfill.js'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MarketStore } from '../node/market/store.js'
import type { LedgerEntry } from '../node/market/views.js'
import { NodeStore, openLevel } from '../node/storage.js'
import { journalPath } from '../node/store-journal.js'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 10_000)
const JOBS = Math.ceil(RECORDS / 3)

function ledger (i: number): LedgerEntry {
  return { job: `bafyreijob${i}`, award: `bafyreiaward${i}`, role: 'provider', counterparty: '12D3KooWCounterpartyPeerIdxxxxxxxxxxxxxxxxxxxxx', price: 1_500_000, cumulative: i * 100, seq: 3, gpuSeconds: 120, state: 'settled', updatedAt: 1_700_000_000_000 + i }
}
function job (i: number): Record<string, unknown> {
  return { id: `bafyreijob${i}`, request: `bafyreijob${i}`, submittedAt: 1, updatedAt: 2, paid: 100, logBytes: 0, bids: [], state: { status: 'settled' },
    events: Array.from({ length: 12 }, (_, e) => ({ at: 1_700_000_000_000 + e, type: 'bid', text: `a line of about a hundred characters describing event ${e} of job ${i} for the bench`, peer: '12D3KooWPeer' })) }
}

async function fill (market: MarketStore): Promise<number> {
  const envelope = randomBytes(600)
  const started = performance.now()
  for (let i = 0; i < JOBS; i++) {
    await market.putLedger(ledger(i))
    await market.put('requester', `bafyreijob${i}`, job(i))
    await market.putEnvelope(`bafyreienv${i}`, envelope)
  }
  return (performance.now() - started) / (JOBS * 3)
}

const root = await mkdtemp(join(tmpdir(), 'gpumesh-bench-store-'))
try {
  // without the journal: the database alone, as before
  const plainDb = await openLevel<unknown>(join(root, 'plain', 'db'), 'json')
  const plainMs = await fill(new MarketStore(plainDb))
  await plainDb.close()

  const dataDir = join(root, 'journaled')
  let store = await NodeStore.open(dataDir)
  const journaledMs = await fill(new MarketStore(store.database, store.journal))
  await store.close()
  const journalBytes = (await stat(journalPath(dataDir))).size

  const opens: number[] = []
  for (let run = 0; run < 3; run++) {
    const started = performance.now()
    store = await NodeStore.open(dataDir)
    opens.push(performance.now() - started)
    await store.close()
  }
  const plainOpens: number[] = []
  for (let run = 0; run < 3; run++) {
    const started = performance.now()
    const db = await openLevel<unknown>(join(root, 'plain', 'db'), 'json')
    plainOpens.push(performance.now() - started)
    await db.close()
  }
  const best = (xs: number[]): string => Math.min(...xs).toFixed(0)
  console.log(`store journal, ${JOBS * 3} records (${JOBS} jobs × ledger entry + job record + envelope)`)
  console.log(`  per write, database only:       ${(plainMs * 1000).toFixed(0)} µs`)
  console.log(`  per write, database + journal:  ${(journaledMs * 1000).toFixed(0)} µs (+${((journaledMs - plainMs) * 1000).toFixed(0)} µs)`)
  console.log(`  journal size:                   ${(journalBytes / 2 ** 20).toFixed(1)} MiB`)
  console.log(`  open, database only:            ${best(plainOpens)} ms (best of 3)`)
  console.log(`  open + check against journal:   ${best(opens)} ms (best of 3)`)
} finally {
  await rm(root, { recursive: true, force: true })
}
