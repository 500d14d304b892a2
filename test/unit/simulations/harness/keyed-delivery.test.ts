/**
 * simulations/harness/keyed-delivery.ts: gossip delays hashed per (message, receiver), and the delivery that
 * visits only the receivers that may act. The two keyed modes must give the same run (the same awards, bids,
 * ledgers, traffic); the same seed the same run; and the keyed model the sequential one's outcomes, up to
 * the draws.
 */
import assert from 'node:assert/strict'
import { VirtualScheduler } from '../../../../protocol/market/scheduler.js'
import { Bus, type Message } from '../../../../simulations/harness/bus.js'
import { KeyedDeliveryError } from '../../../../simulations/harness/keyed-delivery.js'
import { fixedNetwork, regionNetwork, type NetworkModel } from '../../../../simulations/harness/network.js'
import { keyedSeed, Prng } from '../../../../simulations/harness/prng.js'
import { Recorder } from '../../../../simulations/harness/recorder.js'
import { runMarket, type MarketRunOptions } from '../../../../simulations/market/run-market.js'
import type { FleetNode, SimJob, Workload } from '../../../../simulations/model.js'

const MIN = 60_000
const HOUR = 60 * MIN
const credits = (c: number): number => Math.round(c * 1_000_000)
const REGIONS = ['eu-west', 'eu-north', 'us-east', 'ap-south']
const GPUS: Array<[string, number]> = [['NVIDIA H100 80GB HBM3', 81_559], ['Tesla T4', 15_360], ['NVIDIA A100-SXM4-80GB', 81_920]]

/** A small market: `nodes` providers in four regions, `jobs` jobs every 20 s, some with no fitting node (rounds). */
function market (nodes: number, jobs: number): Workload {
  const fleet: FleetNode[] = []
  for (let i = 0; i < nodes; i++) {
    const [gpuName, vramMiB] = GPUS[i % 3] as [string, number]
    fleet.push({ id: `n${i}`, model: gpuName.toLowerCase().replace(/[^a-z0-9]+/g, '-'), gpuName, gpus: 1 + (i % 4), vramMiB, country: 'DE', region: REGIONS[i % 4] as string, cpuMilli: 64_000, memoryMiB: 512_000 })
  }
  const list: SimJob[] = []
  for (let i = 0; i < jobs; i++) {
    const region = i % 5 === 0 ? undefined : REGIONS[i % 4]
    list.push({ id: `j${i}`, submitAt: i * 20_000, durationMs: (10 + (i * 13) % 50) * MIN, gpus: 1 + (i % 3), gpuMilli: 1000, models: [], minVramGB: 0, tier: (['gold', 'silver', 'bronze'] as const)[i % 3] as SimJob['tier'], residency: 'prefer', ...(region !== undefined ? { region } : {}) })
  }
  return { name: 'keyed', fleet, ownerWork: [], jobs: list, horizonMs: 3 * HOUR }
}

const OPTIONS: MarketRunOptions = { floorOf: (n) => credits(1 + (n.gpus % 3) * 0.3), capOf: () => credits(4), seed: 5 }

describe('simulations: keyed gossip delivery', () => {
  it('hashes (seed, message, receiver) into a seed that does not depend on any other draw', () => {
    assert.equal(keyedSeed(1, 2, 3), keyedSeed(1, 2, 3))
    const seen = new Set<number>()
    for (const [s, a, b] of [[1, 2, 3], [1, 2, 4], [1, 3, 3], [2, 2, 3], [1, 0, 0], [0, 0, 0], [0, 0, 1], [0, 1, 0]] as const) seen.add(keyedSeed(s, a, b))
    assert.equal(seen.size, 8)
    // a reseeded stream is the stream of a new one
    const p = new Prng(9)
    p.next()
    p.reseed(keyedSeed(7, 0, 1))
    const q = new Prng(keyedSeed(7, 0, 1))
    assert.deepEqual([p.next(), p.next(), p.seed], [q.next(), q.next(), q.seed])
  })

  it('counts a publish\'s deliveries at once and draws each receiver\'s delay only from its own key', () => {
    const arrivals = (delivery: 'keyed-all' | 'keyed-interested', nodes: string[]): Map<string, number> => {
      const s = new VirtualScheduler(0)
      const rec = new Recorder(() => s.now(), false, false)
      const bus = new Bus(s, regionNetwork(new Prng(1)), new Prng(2), rec, delivery)
      const got = new Map<string, number>()
      bus.join('src', 'eu-west')
      for (const n of nodes) {
        bus.join(n, REGIONS[n.charCodeAt(0) % 4] as string)
        bus.subscribe(n, 't', () => { got.set(n, s.now()) }, ['ping'])
      }
      const m: Message = { kind: 'ping', bytes: 10, body: {} }
      assert.equal(bus.publish('src', ['t'], m), nodes.length)
      // counted at the publish, before any arrival
      assert.equal(rec.snapshot().delivered.ping?.count, nodes.length)
      s.runAll()
      return got
    }
    const all = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']
    const wide = arrivals('keyed-all', all)
    const narrow = arrivals('keyed-interested', ['c', 'f'])
    assert.equal(wide.size, 8)
    // c and f arrive when they would have with six more receivers drawn (a sequential stream would shift)
    assert.equal(narrow.get('c'), wide.get('c'))
    assert.equal(narrow.get('f'), wide.get('f'))
    assert.ok(new Set(wide.values()).size > 1, 'the delays are jittered')
  })

  it('delivers an in-flight bid to a node that a later round of its job reaches first (a late receiver)', () => {
    const heard = (delivery: 'keyed-all' | 'keyed-interested'): string[] => {
      const s = new VirtualScheduler(0)
      const bus = new Bus(s, regionNetwork(new Prng(1), { sameRegion: 2, sameArea: 15, elsewhere: 900 }), new Prng(2), undefined, delivery)
      const log: string[] = []
      const job = { toString: () => 'J' }
      bus.join('bidder', 'ap-south')
      bus.join('buyer', 'eu-west')
      for (const n of ['x', 'y']) {
        bus.join(n, 'eu-west')
        // a shell: a round of J makes it watch J; it acts on J's bids only while it watches J
        let watching = false
        bus.subscribe(n, 't', (_from, m) => {
          if (m.kind === 'auction-round') { watching = true; bus.watch(n, 'J', true) } else if (watching) log.push(`${n} ${m.kind} @${s.now()}`)
        }, ['auction-round', 'bid'])
      }
      bus.publish('bidder', ['t'], { kind: 'bid', bytes: 10, body: { payload: { job } } })
      s.at(10, () => { bus.publish('buyer', ['t'], { kind: 'auction-round', bytes: 10, body: { request: { cid: job } } }) })
      s.runAll()
      return log
    }
    const all = heard('keyed-all')
    assert.equal(all.length, 2, 'the round reaches x and y long before the bid')
    assert.deepEqual(heard('keyed-interested'), all)
  })

  it('refuses a model it cannot key, a gossip model of its own, and an unknown delivery, with a typed error', () => {
    const s = new VirtualScheduler(0)
    const plain = { latencyMs: () => 5, gossipHops: 1, gossipLoss: 0 }
    const code = (fn: () => unknown): string | undefined => { try { fn() } catch (e) { return e instanceof KeyedDeliveryError ? e.code : 'other' } return undefined }
    assert.equal(code(() => new Bus(s, plain, new Prng(1), undefined, 'keyed-interested')), 'NO_KEYED_LATENCY')
    assert.equal(code(() => new Bus(s, { ...fixedNetwork(5), gossipDelayMs: () => 3 }, new Prng(1), undefined, 'keyed-all')), 'GOSSIP_MODEL')
    assert.equal(code(() => new Bus(s, fixedNetwork(5), new Prng(1), undefined, 'fast' as 'keyed-all')), 'UNKNOWN_DELIVERY')
    assert.equal(code(() => new Bus(s, plain, new Prng(1))), undefined)
    assert.equal(code(() => runMarket(market(4, 1), { ...OPTIONS, delivery: 'keyed-interested', mesh: true })), 'GOSSIP_MODEL')
  })

  it('gives the same run visiting every receiver or only those that may act (awards, bids, ledgers, traffic)', () => {
    // the default regions, and slow links (a bid may then overtake its job request, and reach a node
    // before the request does: that node must still be visited)
    const slow = (prng: Prng): NetworkModel => regionNetwork(prng, { sameRegion: 40, sameArea: 300, elsewhere: 900, jitter: 0.5 })
    for (const [seed, network] of [[5, undefined], [11, slow]] as const) {
      const w = market(40, 60)
      const net = network === undefined ? {} : { network }
      const all = runMarket(w, { ...OPTIONS, ...net, seed, delivery: 'keyed-all' })
      const interested = runMarket(w, { ...OPTIONS, ...net, seed, delivery: 'keyed-interested' })
      const a = all.harness.recorder.snapshot()
      const b = interested.harness.recorder.snapshot()
      // the market exercised re-opened rounds (late receivers of in-flight bids) and many bids per job
      assert.ok((a.sent['auction-round']?.count ?? 0) > 0, 'some rounds were re-opened')
      assert.ok(all.stats.bidsPerJob > 5)
      assert.deepEqual(b, a)
      assert.deepEqual(interested.run, all.run)
      assert.deepEqual({ ...interested.stats, events: 0 }, { ...all.stats, events: 0 })
      // …with fewer scheduler steps (receivers that would not act are not visited)
      assert.ok(interested.stats.events < all.stats.events, `${interested.stats.events} vs ${all.stats.events}`)
    }
  })

  it('replays: the same seed gives the same run, another seed another', () => {
    const w = market(30, 40)
    const a = runMarket(w, { ...OPTIONS, seed: 3, delivery: 'keyed-interested' })
    const b = runMarket(w, { ...OPTIONS, seed: 3, delivery: 'keyed-interested' })
    const c = runMarket(w, { ...OPTIONS, seed: 4, delivery: 'keyed-interested' })
    assert.deepEqual(b.harness.recorder.snapshot(), a.harness.recorder.snapshot())
    assert.deepEqual(b.run, a.run)
    assert.notDeepEqual(c.harness.recorder.snapshot(), a.harness.recorder.snapshot())
  })

  it('agrees with the sequential delivery\'s outcomes statistically (same market, several seeds)', () => {
    const w = market(40, 60)
    const sum = { seq: { done: 0, bids: 0, paid: 0 }, keyed: { done: 0, bids: 0, paid: 0 } }
    for (const seed of [1, 2, 3]) {
      for (const [name, delivery] of [['seq', 'sequential'], ['keyed', 'keyed-interested']] as const) {
        const r = runMarket(w, { ...OPTIONS, seed, delivery })
        const s = sum[name]
        s.done += r.run.jobs.filter((j) => j.status === 'completed').length
        s.bids += r.stats.bidsPerJob
        s.paid += r.run.jobs.reduce((t, j) => t + j.paid, 0)
        assert.equal(r.stats.ledgerMismatches, 0)
      }
    }
    const near = (x: number, y: number, share: number): boolean => Math.abs(x - y) <= share * Math.max(x, y)
    assert.ok(near(sum.keyed.done, sum.seq.done, 0.05), `completed ${sum.keyed.done} vs ${sum.seq.done}`)
    assert.ok(near(sum.keyed.bids, sum.seq.bids, 0.15), `bids per job ${sum.keyed.bids / 3} vs ${sum.seq.bids / 3}`)
    assert.ok(near(sum.keyed.paid, sum.seq.paid, 0.1), `paid ${sum.keyed.paid} vs ${sum.seq.paid}`)
  })
})

describe('simulations: a woken scheduler series', () => {
  it('runs a step sooner in the series\' own place, restarts one that ended, and ignores a later wake', () => {
    const s = new VirtualScheduler(0)
    const log: string[] = []
    s.at(10, () => log.push('before'))
    let steps = 0
    const series = s.series(50, () => { log.push(`step@${s.now()}`); steps++; return undefined })
    s.at(10, () => log.push('after'))
    series.wake(10) // sooner: between the call scheduled before the series and the one after
    series.wake(40) // later than its next step: nothing
    assert.equal(s.pending, 3)
    s.runUntil(20)
    assert.deepEqual(log, ['before', 'step@10', 'after'])
    assert.equal(s.pending, 0, 'the replaced step is gone')
    s.runAll()
    assert.equal(steps, 1)
    // ended: a wake starts it again, still in its place among calls due then
    s.at(30, () => log.push('late-call'))
    series.wake(30)
    s.runAll()
    assert.deepEqual(log.slice(3), ['step@30', 'late-call'])
  })
})
