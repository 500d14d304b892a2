import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { CID } from '../../crypto/index.js'
import type { Daemon } from '../../node/daemon.js'
import type { AuditResult } from '../../node/market/audit.js'
import type { JobView, LedgerEntry } from '../../node/market/views.js'
import { untilJob, type NodeSpec, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, SHORT_LEASE_MARKET, useNetwork } from '../helpers/market-network.js'

/**
 * The market end to end in one process: 10 providers with different hardware, prices, regions,
 * windows and workloads, and one requester, over the memory transport. Every job runs for real
 * (process executor, sandboxed when bubblewrap exists), and every award, receipt and payment is signed.
 */

const H100 = 'NVIDIA H100 80GB HBM3:81559'
const A100_40 = 'NVIDIA A100-SXM4-40GB:40960'
const A100_80 = 'NVIDIA A100-SXM4-80GB:81920'
const L40S = 'NVIDIA L40S:46068'
const RTX4090 = 'NVIDIA GeForce RTX 4090:24564'

/** A weekly window that is closed for the next 24 hours, whatever today is (UTC). */
function closedForADay (): string[] {
  const days = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
  const today = (new Date().getUTCDay() + 6) % 7 // 0 = Monday
  const day = days[(today + 3) % 7] as string
  return [`${day} 00:00-24:00`]
}

const MARKET = SHORT_LEASE_MARKET

const PROVIDERS: Array<NodeSpec & { name: string }> = [
  { name: 'h100-eu', region: 'eu-west', gpus: [`${H100}x2`], priceFloor: 3.0 },
  { name: 'a100-eu', region: 'eu-west', gpus: [`${A100_40}x4`], priceFloor: 1.5 },
  { name: 'l40s-eu-north', region: 'eu-north', gpus: [`${L40S}x2`], priceFloor: 1.0 },
  { name: 'l40s-us', region: 'us-east', gpus: [`${L40S}x2`], priceFloor: 0.8 },
  { name: '4090-us', region: 'us-east', gpus: [`${RTX4090}x2`], priceFloor: 0.4 },
  { name: '4090-ap-wasm', region: 'ap-south', gpus: [`${RTX4090}x1`], priceFloor: 0.3, provider: { workloads: ['wasm'] } },
  { name: 'h100-eu-closed', region: 'eu-west', gpus: [`${H100}x1`], priceFloor: 2.0, provider: { availability: { timeZone: 'UTC', windows: closedForADay() } } },
  { name: 'a100-80-eu', region: 'eu-central', gpus: [`${A100_80}x2`], priceFloor: 2.5 },
  { name: 'a100-us-pricey', region: 'us-west', gpus: [`${A100_40}x1`], priceFloor: 5.0 },
  { name: '4090-eu', region: 'eu-west', gpus: [`${RTX4090}x2`], priceFloor: 0.5 }
].map((p) => ({ ...p, market: MARKET }))

const FINAL = FINAL_STATUSES

describe('the market: 10 providers, 1 requester (in-process)', function () {
  this.timeout(300_000)
  let net: TestNetwork
  let requester: Daemon
  const provider = (name: string): Daemon => net.nodes[PROVIDERS.findIndex((p) => p.name === name)] as Daemon
  const nameOf = (peer: string | undefined): string => PROVIDERS[net.nodes.findIndex((n) => n.identity.peerId === peer)]?.name ?? `unknown ${peer}`

  const network = useNetwork([...PROVIDERS, { sell: false, market: MARKET }], { bootstrapCount: 1, announceTimeoutMs: 120_000 })
  before(() => {
    net = network.net
    requester = net.nodes[PROVIDERS.length] as Daemon
  })

  async function submit (fields: Record<string, unknown>): Promise<string> {
    const market = requester.market
    assert.ok(market !== undefined)
    const { job } = await market.submit({ command: ['/bin/sh', '-c', 'echo "ran on $CUDA_VISIBLE_DEVICES" > out.txt'], outputs: ['out.txt'], bidWindowMs: 700, maxRuntimeSec: 60, ...fields })
    return job
  }

  const until = async (id: string, done: (v: JobView) => boolean, timeoutMs?: number): Promise<JobView> => await untilJob(requester, id, done, timeoutMs)

  const final = async (id: string, timeoutMs?: number): Promise<JobView> => await until(id, (v) => FINAL.has(v.status), timeoutMs)

  it('the cheapest eligible provider wins: region, VRAM and price cap honoured, and both sides agree on the money', async () => {
    // eligible in eu with ≥ 40 GB under 2.6: a100-eu 1.5, l40s-eu-north 1.0, a100-80-eu 2.5 (h100-eu is over the cap)
    const id = await submit({ gpus: 1, minVramGB: 40, regions: ['eu'], residency: 'strict', maxPrice: 2.6 })
    const view = await final(id)
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(nameOf(view.award?.provider), 'l40s-eu-north')
    assert.equal(view.award?.price, 1_000_000)
    assert.equal(view.receipt?.exitCode, 0)
    assert.equal(view.receipt?.outputsValid, true)
    const result = requester.market?.requester.result(id)
    const out = result?.outputs.find((o) => o.path === 'out.txt')
    assert.ok(out !== undefined)
    assert.match(await readFile(out.file, 'utf8'), /^ran on GPU-declared-[0-9a-f]{16}-0\n/)
    // the ledgers: what the requester committed is what the provider holds, signed
    const spent = (await requester.market!.ledger()).entries.find((e) => e.job === id)
    const earned = (await provider('l40s-eu-north').market!.ledger()).entries.find((e) => e.job === id)
    assert.ok(spent !== undefined && earned !== undefined)
    assert.equal(earned.cumulative, spent.cumulative)
    assert.equal(earned.state, 'settled')
    assert.ok(view.bids.every((b) => ['a100-eu', 'l40s-eu-north', 'a100-80-eu'].includes(nameOf(b.provider))), `bids from ${view.bids.map((b) => nameOf(b.provider))}`)
  })

  it('a third node recomputes the award from the gossiped bids', async () => {
    const id = await submit({ gpus: 1, minVramGB: 40, regions: ['eu'], residency: 'strict', maxPrice: 2.6, label: 'audited' })
    const view = await final(id)
    // any node that saw the auction: one that did not win
    const auditor = net.nodes.find((n) => n.identity.peerId !== view.award?.provider && n !== requester) as Daemon
    let results: AuditResult[] | undefined
    for (let i = 0; i < 50 && (results?.length ?? 0) === 0; i++) {
      results = auditor.market?.audit.check(id)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.ok(results !== undefined && results.length >= 1, 'the auditor saw the award')
    assert.deepEqual(results[0]?.audit, { ok: true })
    assert.equal(results[0]?.winner, view.award?.provider)
  })

  it('honours GPU models and availability windows', async () => {
    // h100-eu-closed is cheaper but closed for the next day: h100-eu wins
    const view = await final(await submit({ gpus: 1, models: ['h100'], maxPrice: 4 }))
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(nameOf(view.award?.provider), 'h100-eu')
  })

  it('honours allowed workloads', async () => {
    // 4090-ap-wasm (0.3) runs only wasm: the process job goes to 4090-us (0.4)
    const view = await final(await submit({ gpus: 1, maxPrice: 1 }))
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(nameOf(view.award?.provider), '4090-us')
  })

  it('explains a job nobody can take', async () => {
    const id = await submit({ gpus: 1, maxPrice: 0.35, bidWindowMs: 300 })
    const view = await until(id, (v) => FINAL.has(v.status) && v.explanation !== undefined, 60_000)
    assert.equal(view.status, 'expired')
    const explanation = view.explanation as { perConstraint: Array<{ constraint: string, meeting: number }>, summary: string[] }
    assert.equal(explanation.perConstraint.find((c) => c.constraint === 'PRICE')?.meeting, 1)
    assert.equal(explanation.perConstraint.find((c) => c.constraint === 'WORKLOAD')?.meeting, 9)
  })

  it('explains a VRAM request larger than any GPU from every provider it knows, by peer id', async () => {
    const id = await submit({ gpus: 1, minVramGB: 500, maxPrice: 10, bidWindowMs: 300 })
    const view = await until(id, (v) => FINAL.has(v.status) && v.explanation !== undefined, 60_000)
    assert.equal(view.status, 'expired')
    const explanation = view.explanation as {
      total: number, perConstraint: Array<{ constraint: string, meeting: number }>, largestVram?: { vramMiB: number, provider: string }, summary: string[]
    }
    // the requester sells nothing; it knows the 10 providers, whatever their VRAM
    assert.equal(explanation.total, PROVIDERS.length, explanation.summary.join('\n'))
    assert.equal(explanation.perConstraint.find((c) => c.constraint === 'VRAM')?.meeting, 0)
    assert.equal(explanation.largestVram?.vramMiB, 81_920, 'the A100 80GB reports the most')
    assert.equal(nameOf(explanation.largestVram?.provider), 'a100-80-eu')
    const text = explanation.summary.join('\n')
    assert.match(text, /≥ 500 GB VRAM per GPU: 0 of 10 \(the largest on offer: 80 GB/)
    assert.ok(text.includes(explanation.largestVram?.provider ?? '-'), 'providers are named by peer id')
    assert.doesNotMatch(text, /#\d/, 'no provider is named by an index')
  })

  it('a running job cancelled after a paid interval: both ledgers record the same amount and ending', async () => {
    // two H100s in eu-west under 4: h100-eu alone (3.0); it runs until cancelled
    const id = await submit({ gpus: 2, models: ['h100'], regions: ['eu-west'], residency: 'strict', maxPrice: 4, command: ['/bin/sh', '-c', 'sleep 30; echo late > out.txt'] })
    await until(id, (v) => v.status === 'running' && v.events.some((e) => e.type === 'accepted'))
    // one billing interval (2 s) paid, then part of the next one run
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    await requester.market!.requester.cancel(id)
    const seller = provider('h100-eu')
    const both = async (): Promise<[LedgerEntry, LedgerEntry]> => {
      const deadline = Date.now() + 20_000
      while (true) {
        const spent = (await requester.market!.ledger()).entries.find((e) => e.job === id)
        const earned = (await seller.market!.ledger()).entries.find((e) => e.job === id)
        if (spent !== undefined && earned !== undefined && spent.state !== 'open' && earned.state !== 'open' && spent.cumulative === earned.cumulative) return [spent, earned]
        if (Date.now() > deadline) assert.fail(`ledgers disagree: requester ${JSON.stringify(spent)}, provider ${JSON.stringify(earned)}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const [spent, earned] = await both()
    assert.equal(spent.award, earned.award)
    assert.ok(spent.cumulative > 0, 'the time run is paid')
    assert.equal(earned.cumulative, spent.cumulative)
    assert.equal(spent.state, 'cancelled')
    assert.equal(earned.state, 'cancelled')
  })

  it('a tampered output is detected, and the job completes elsewhere', async () => {
    const cheat = provider('a100-80-eu')
    const blob = cheat.node.services.blob
    const honest = blob.store
    assert.ok(honest !== undefined)
    // the cheat serves altered bytes for every raw blob (its outputs), as if the receipt lied
    blob.store = new Proxy(honest, {
      get (target, prop, receiver) {
        if (prop !== 'get') return Reflect.get(target, prop, receiver)
        return async (cid: CID) => {
          const bytes = await target.get(cid)
          return bytes !== undefined && cid.code === 0x55 ? new TextEncoder().encode('tampered output\n') : bytes
        }
      }
    })
    try {
      // ≥ 80 GB: a100-80-eu (2.5) is cheapest, then h100-eu (3.0)
      const view = await final(await submit({ gpus: 1, minVramGB: 80, maxPrice: 3.5, bidWindowMs: 500 }))
      assert.equal(view.status, 'settled', view.reason)
      assert.equal(nameOf(view.award?.provider), 'h100-eu')
      const failure = view.events.find((e) => e.type === 'failure')
      assert.ok(failure !== undefined && failure.text.startsWith('output-mismatch'), JSON.stringify(view.events))
      assert.equal(nameOf(failure.peer), 'a100-80-eu')
    } finally {
      blob.store = honest
    }
  })

  it('gold preempts bronze, and the bronze job still completes elsewhere', async () => {
    // bronze: two 4090s anywhere → 4090-us (0.4); it runs long enough to be displaced
    const bronze = await submit({ tier: 'bronze', gpus: 2, models: ['4090'], maxPrice: 1, command: ['/bin/sh', '-c', 'sleep 4; echo bronze > out.txt'] })
    await until(bronze, (v) => v.status === 'running' && v.events.some((e) => e.type === 'accepted'))
    assert.equal(nameOf(requester.market?.requester.view(bronze)?.award?.provider), '4090-us')
    // gold: two 4090s in us only: 4090-us must preempt the bronze job to take it
    // it must start within 5 s (the bronze job may hold the GPUs for up to a minute), and it runs long
    // enough that 4090-us is still busy when the bronze job is auctioned again
    const gold = await submit({ tier: 'gold', gpus: 2, models: ['4090'], regions: ['us'], residency: 'strict', maxPrice: 2, maxStartDelaySec: 5, command: ['/bin/sh', '-c', 'sleep 3; echo gold > out.txt'] })
    const goldView = await final(gold)
    assert.equal(goldView.status, 'settled', goldView.reason)
    assert.equal(nameOf(goldView.award?.provider), '4090-us')
    const bronzeView = await final(bronze, 90_000)
    assert.equal(bronzeView.status, 'settled', bronzeView.reason)
    assert.equal(nameOf(bronzeView.award?.provider), '4090-eu', bronzeView.events.map((e) => `${e.type}: ${e.text} ${nameOf(e.peer)}`).join('\n'))
    assert.ok(bronzeView.events.some((e) => e.type === 're-auction' && e.text.includes('preempted')), JSON.stringify(bronzeView.events))
    // the preempted award: both ledgers hold the same amount and say preempted
    const seller = provider('4090-us')
    const spent = (await requester.market!.ledger()).entries.find((e) => e.job === bronze && e.counterparty === seller.identity.peerId)
    const earned = (await seller.market!.ledger()).entries.find((e) => e.job === bronze)
    assert.ok(spent !== undefined && earned !== undefined, 'both sides hold the preempted award')
    assert.deepEqual([spent.award, spent.cumulative, spent.state], [earned.award, earned.cumulative, earned.state])
    assert.equal(earned.state, 'preempted')
    // the provider that displaced it does not bid on its next round (it could only start it later)
    assert.ok(!bronzeView.bids.some((b) => nameOf(b.provider) === '4090-us'), JSON.stringify(bronzeView.bids))
  })

  it('a provider killed mid-job: the job is re-auctioned without it and completes', async () => {
    // A100 40 GB in us: a100-us-pricey (5.0) only under a cap of 6 … make the victim the cheapest instead:
    // ≥ 40 GB in us: l40s-us (0.8), then a100-us-pricey (5.0)
    const id = await submit({ gpus: 1, minVramGB: 40, regions: ['us'], residency: 'strict', maxPrice: 6, command: ['/bin/sh', '-c', 'sleep 4; echo done > out.txt'] })
    // killed after its first billing interval (2 s) was paid
    await until(id, (v) => v.status === 'running' && v.paid > 0)
    const victim = requester.market?.requester.view(id)?.award?.provider
    assert.equal(nameOf(victim), 'l40s-us')
    let victimAward: LedgerEntry | undefined
    for (let i = 0; i < 100 && victimAward === undefined; i++) {
      victimAward = (await requester.market!.ledger()).entries.find((e) => e.job === id && e.counterparty === victim)
      if (victimAward === undefined) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.equal(victimAward?.state, 'open')
    await provider('l40s-us').stop()
    const view = await final(id, 90_000)
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(nameOf(view.award?.provider), 'a100-us-pricey')
    assert.ok(view.events.some((e) => e.type === 'failure' && e.peer === victim), JSON.stringify(view.events))
    // the failed award's ledger entry is closed as failed at what was paid, not left open
    const failed = (await requester.market!.ledger()).entries.find((e) => e.award === victimAward?.award)
    assert.deepEqual([failed?.state, failed?.cumulative], ['failed', victimAward?.cumulative])
  })

  it('inputs reach the job, hash-checked', async () => {
    const file = join(net.root, 'input.txt')
    await writeFile(file, 'hello from the requester\n')
    const view = await final(await submit({ gpus: 1, maxPrice: 1, regions: ['eu'], residency: 'strict', inputs: [{ path: 'data/in.txt', file }], command: ['/bin/sh', '-c', 'cat data/in.txt > out.txt'] }))
    assert.equal(view.status, 'settled', view.reason)
    const out = requester.market?.requester.result(view.id)?.outputs[0]
    assert.equal(await readFile(out!.file, 'utf8'), 'hello from the requester\n')
  })
})
