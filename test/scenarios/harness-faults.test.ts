/**
 * The harness's fault hooks (simulations/harness/network.ts `drops`, `blobMs`, `Place.country`;
 * provider-node.ts `restart`): a gossip delivery the network drops is counted lost and never handled;
 * a dropped stream message resets the exec stream on both ends, and the agents' own failure handling
 * follows (a failure report, a re-auction); a crashed provider that restarts bids again, with a fresh
 * agent, its owner's holds and its open ledger lines marked interrupted, as the daemon does at start.
 */
import assert from 'node:assert/strict'
import { Harness, credits, type HarnessOptions } from '../../simulations/harness/index.js'
import { fixedNetwork, type NetworkModel, type Place } from '../../simulations/harness/network.js'
import { MIN, assertSettledBooks, awardsOf, ending, lines, market, peer, reports } from './setup.js'

const START = new Harness().scheduler.now()

/** fixedNetwork(5) with a drop rule. */
function dropping (drops: NetworkModel['drops']): HarnessOptions {
  return { network: () => ({ ...fixedNetwork(5), ...(drops !== undefined ? { drops } : {}) }) }
}

const between = (x: Place, y: Place, a: string, b: string): boolean => (x.node === peer(a) && y.node === peer(b)) || (x.node === peer(b) && y.node === peer(a))

describe('scenario: network faults through the harness hooks', () => {
  it('a gossip delivery the network drops is counted lost and never reaches the node', () => {
    const h = market(dropping((_from, to, _at, channel) => channel === 'gossip' && to.node === peer('cheap')))
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 5 * MIN })
    h.runUntilQuiet()
    const snap = h.recorder.snapshot()
    assert.ok(snap.lost >= 1, `lost ${snap.lost}`)
    assert.equal(snap.lost, snap.trace.filter((l) => l.includes('lost') && l.includes(`>${peer('cheap')} `)).length, 'every lost delivery was to cheap')
    assert.equal(h.recorder.count('bid').count, 2, 'cheap never saw the job, so it never bid')
    assert.deepEqual(awardsOf(h, job).map((a) => a.provider), [peer('mid')])
    assert.equal(ending(h, job).status, 'settled')
    assertSettledBooks(h)
  })

  it('a stream message the network drops resets the exec stream on both ends; the buyer reports the provider and re-auctions', () => {
    const cut = START + 2 * MIN
    const h = market(dropping((from, to, at) => at >= cut && between(from, to, 'buyer', 'cheap')))
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 10 * MIN })
    h.runUntilQuiet()
    const awards = awardsOf(h, job)
    assert.deepEqual(awards.map((a) => a.provider), [peer('cheap'), peer('mid')], 'the job ran on cheap until the cut, then on mid')
    assert.ok((awards[1]?.at ?? 0) >= cut)
    assert.ok(h.recorder.snapshot().lost >= 1, 'the dropped message is counted lost')
    const blamed = reports(h, job)
    assert.equal(blamed.length, 1)
    assert.equal(blamed[0]?.[0], peer('cheap'))
    assert.equal(ending(h, job).status, 'settled')
    // cheap's side saw the stream end too: its offer ended, no work left running
    const theirs = h.recorder.offers.find((o) => o.node === peer('cheap') && o.job === job && o.awarded)
    assert.ok(theirs !== undefined, 'cheap ended its awarded offer')
    assert.ok(theirs.at >= cut && theirs.at < cut + 5 * MIN, `cheap ended it ${(theirs.at - cut) / 1000} s after the cut`)
    assertSettledBooks(h)
  })

  it('an exec stream the network cuts before the provider answers makes it unreachable: a no-show after one lease, and the next provider runs the job', () => {
    const h = market(dropping((from, to, _at, channel) => channel === 'stream' && between(from, to, 'buyer', 'cheap')))
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 5 * MIN })
    h.runUntilQuiet()
    const [first, second] = awardsOf(h, job)
    assert.deepEqual([first?.provider, second?.provider], [peer('cheap'), peer('mid')])
    // as node/market: an award that cannot be delivered is `unreachable`, which the lease's deadline turns into a no-show
    assert.deepEqual(reports(h, job), [[peer('cheap'), 'no-show']])
    assert.ok((second?.at ?? 0) - (first?.at ?? 0) >= h.params.leaseMs, 'the re-auction waited out the lease')
    assert.equal(ending(h, job).status, 'settled')
    assertSettledBooks(h)
  })

  it('a blob takes the network model\'s blobMs when it has one', () => {
    const settledAt = (blobMs?: NetworkModel['blobMs']): number => {
      const h = new Harness({ seed: 1, network: () => ({ ...fixedNetwork(5), ...(blobMs !== undefined ? { blobMs } : {}) }) })
      h.provider('p', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
      const job = h.requester('buyer', { region: 'eu-west' }).submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 5 * MIN, outputBytes: 10_000_000 })
      h.runUntilQuiet()
      return ending(h, job).at
    }
    const seen: Array<[string, string, number]> = []
    const slow = settledAt((from, to, bytes) => { seen.push([from, to, bytes]); return 60_000 })
    const base = settledAt()
    assert.deepEqual(seen, [[peer('p'), peer('buyer'), 10_000_000]], 'the outputs, from the provider to the buyer')
    // the world's 100 MB/s: 100 ms for 10 MB; the model's: 60 s
    assert.equal(slow - base, 60_000 - 100)
  })

  it('a node joins the bus with the country of its spec, where the model can read it', () => {
    const countries = new Set<string>()
    const h = new Harness({ network: () => ({ ...fixedNetwork(5), latencyMs: (from: Place, to: Place) => { countries.add(`${from.node}=${String(from.country)}`); countries.add(`${to.node}=${String(to.country)}`); return 5 } }) })
    h.provider('de', { region: 'eu-central', country: 'DE', gpus: { h100: 1 }, floor: credits(2) })
    h.requester('buyer', { region: 'eu-west', country: 'FR' }).submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: MIN })
    h.runUntilQuiet()
    assert.ok(countries.has('peer:de=DE'), [...countries].join(', '))
    assert.ok(countries.has('peer:buyer=FR'), [...countries].join(', '))
  })
})

describe('scenario: a provider restarts after a crash', () => {
  it('gets the next job after its restart, with its crashed award\'s line marked interrupted; the buyer it crashed on holds it back', () => {
    const h = market()
    const buyer = h.requesters.get('buyer')!
    // a buyer with no history with cheap: the one it crashed on holds it back (standing.ts), this one does not
    const other = h.requester('other', { region: 'eu-west' })
    const cheap = h.providers.get('cheap')!
    const first = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 10 * MIN })
    h.at(START + 3 * MIN, () => { cheap.crash() })
    h.at(START + 5 * MIN, () => { cheap.restart() })
    let second = ''
    let again = ''
    h.at(START + 6 * MIN, () => { second = other.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 5 * MIN }) })
    h.at(START + 30 * MIN, () => { again = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 5 * MIN }) })
    h.runUntilQuiet()
    const heldBack = awardsOf(h, again).map((a) => a.provider)
    assert.equal(heldBack.length, 1)
    assert.notEqual(heldBack[0], peer('cheap'), 'the buyer it failed holds the cheapest bidder back')
    assert.deepEqual(awardsOf(h, first).map((a) => a.provider), [peer('cheap'), peer('mid')], 'the crash re-auctioned the first job')
    assert.equal(ending(h, first).status, 'settled')
    assert.deepEqual(lines(h, 'cheap', first).map((l) => l.state), ['interrupted'], 'open at the crash: interrupted at the restart, as node/market marks it')
    assert.deepEqual(awardsOf(h, second).map((a) => a.provider), [peer('cheap')], 'the restarted node bid and won')
    assert.equal(ending(h, second).status, 'settled')
    assert.equal(cheap.down, false)
    assertSettledBooks(h)
  })

  it('stays out of the market while down, and keeps the owner\'s holds across the restart', () => {
    const h = market()
    const buyer = h.requesters.get('buyer')!
    const cheap = h.providers.get('cheap')!
    cheap.crash()
    assert.equal(cheap.down, true)
    const whileDown = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: MIN })
    h.advance(5 * MIN)
    // the owner's own work takes the GPU for the next two hours, given while the node is down
    cheap.setHolds([{ gpus: ['GPU-cheap-0'], from: h.scheduler.now(), until: h.scheduler.now() + 120 * MIN, label: 'owner' }])
    cheap.restart()
    cheap.restart() // a second restart of a running node changes nothing
    const held = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: MIN })
    h.runUntilQuiet()
    assert.deepEqual(awardsOf(h, whileDown).map((a) => a.provider), [peer('mid')])
    assert.deepEqual(awardsOf(h, held).map((a) => a.provider), [peer('mid')], 'the restarted agent knows the owner\'s holds')
    assertSettledBooks(h)
  })
})
