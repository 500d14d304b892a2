import assert from 'node:assert/strict'
import { VirtualScheduler } from '../../../../protocol/market/scheduler.js'
import { Bus, type Message, type Traffic } from '../../../../simulations/harness/bus.js'
import type { Place } from '../../../../simulations/harness/network.js'
import { Prng } from '../../../../simulations/harness/prng.js'
import { InvalidBandwidthError } from '../../../../simulations/network/bandwidth.js'
import { InvalidCountryNetworkError, type CountryNetworkOptions, UnknownNodeError, countryNetwork, countryOfNodes } from '../../../../simulations/network/country-network.js'
import { UnknownCountryError, countryRegion } from '../../../../simulations/network/geo.js'
import { InvalidPartitionError } from '../../../../simulations/network/partition.js'
import { rttMatrix, rttTable } from './rtt-file.js'

const COUNTRY: Record<string, string> = { de1: 'DE', de2: 'DE', fr1: 'FR', us1: 'US', jp1: 'JP', se1: 'SE' }
const place = (node: string): Place => ({ node, region: countryRegion(COUNTRY[node] as string) })
const msg: Message = { kind: 'ping', bytes: 100, body: null }

/** A bus on the country network with every node of COUNTRY joined and subscribed to `t`; returns what each received, and when. */
function world (options: CountryNetworkOptions = {}, seed = 1, traffic?: Traffic): { bus: Bus, scheduler: VirtualScheduler, got: Array<{ to: string, at: number }> } {
  const scheduler = new VirtualScheduler(0)
  const prng = new Prng(seed)
  const net = countryNetwork(rttMatrix(), (n) => COUNTRY[n] as string, prng.fork('net'), options)
  const bus = new Bus(scheduler, net, prng.fork('bus'), traffic)
  const got: Array<{ to: string, at: number }> = []
  for (const node of Object.keys(COUNTRY)) {
    bus.join(node, place(node).region)
    bus.subscribe(node, 't', () => { got.push({ to: node, at: scheduler.now() }) })
  }
  return { bus, scheduler, got }
}

describe('simulations/network countryNetwork', () => {
  it('implements the harness NetworkModel: whole ms ≥ 1 from the RTT table, gossip after hops × latency', () => {
    const m = rttMatrix()
    const net = countryNetwork(m, (n) => COUNTRY[n] as string, new Prng(1), { jitter: 'none' })
    assert.equal(net.latencyMs(place('de1'), place('fr1')), Math.round(m.meanOneWayMs('DE', 'FR')))
    assert.equal(net.latencyMs(place('us1'), place('jp1')), net.latencyMs(place('jp1'), place('us1')))
    assert.equal(net.countryOf('jp1'), 'JP')
    const fromTable = countryNetwork(rttTable(), (n) => COUNTRY[n] as string, new Prng(1), { jitter: 'none' })
    assert.equal(fromTable.latencyMs(place('de1'), place('fr1')), net.latencyMs(place('de1'), place('fr1')))
    assert.equal(net.gossipHops, 2)
    assert.equal(net.gossipLoss, 0)
    const { bus, scheduler, got } = world({ jitter: 'none' })
    bus.publish('de1', ['t'], msg)
    scheduler.runAll()
    const fr = got.find((g) => g.to === 'fr1')
    assert.equal(fr?.at, 2 * Math.round(m.meanOneWayMs('DE', 'FR')))
    assert.equal(got.length, 5)
  })

  it('is deterministic per seed through the bus', () => {
    const run = (seed: number): Array<{ to: string, at: number }> => {
      const { bus, scheduler, got } = world({}, seed)
      for (let i = 0; i < 20; i++) bus.publish(i % 2 === 0 ? 'de1' : 'us1', ['t'], msg)
      scheduler.runAll()
      return got
    }
    assert.deepEqual(run(3), run(3))
    assert.notDeepEqual(run(3), run(4))
  })

  it('drops gossip across a partition sent inside [t1, t2), counted lost, and delivers it at t2', () => {
    const lost: number[] = []
    const { bus, scheduler, got } = world({ partitions: [{ sideA: ['eu'], sideB: ['us'], fromMs: 1000, untilMs: 2000 }] }, 1, { sent: () => {}, delivered: () => {}, lost: () => { lost.push(scheduler.now()) } })
    const sendAt = (t: number): void => { scheduler.at(t, () => { bus.publish('us1', ['t'], { ...msg, body: t }) }) }
    for (const t of [999, 1000, 1999, 2000]) sendAt(t)
    scheduler.runAll()
    const toEurope = (lo: number, hi: number): number => got.filter((g) => g.to !== 'jp1' && g.at > lo && g.at <= hi).length
    // Each publish reaches de1, de2, fr1, se1 (Europe) and jp1. At 1000 and 1999 only jp1 hears it.
    assert.equal(got.filter((g) => g.to === 'jp1').length, 4)
    assert.equal(got.length, 5 + 1 + 1 + 5)
    assert.equal(toEurope(0, Infinity), 8)
    assert.equal(toEurope(2000, Infinity), 4, 'the publish at 2000 reaches Europe')
    assert.equal(toEurope(1000, 2000), 4, 'the publish at 999 arrives inside the window: judged when sent')
    assert.deepEqual(lost, [1000, 1000, 1000, 1000, 1999, 1999, 1999, 1999], 'each delivery the partition drops is counted lost')
  })

  it('resets a stream across a partition (an open refused, a message dropped) and carries one opened after it', () => {
    const { bus, scheduler } = world({ partitions: [{ sideA: ['eu'], sideB: ['ap-east'], fromMs: 1000, untilMs: 5000 }] })
    const heard: Array<{ at: number, kind: string }> = []
    const closed: string[] = []
    bus.listen('jp1', (end) => {
      end.onMessage((m) => heard.push({ at: scheduler.now(), kind: m.kind }))
      end.onClose((reason) => closed.push(`jp1 ${reason}`))
    })
    const before = bus.open('de1', 'jp1')
    before.onClose((reason) => closed.push(`de1 ${reason}`))
    before.send({ ...msg, kind: 'before' })
    scheduler.at(1000, () => { before.send({ ...msg, kind: 'during' }) })
    scheduler.at(1500, () => { bus.open('de1', 'jp1').onClose((reason) => closed.push(`opened during: ${reason}`)) })
    scheduler.at(5000, () => { bus.open('de1', 'jp1').send({ ...msg, kind: 'after' }) })
    scheduler.runUntil(60_000)
    assert.deepEqual(heard.map((h) => h.kind), ['before', 'after'])
    assert.ok((heard[1]?.at ?? 0) > 5000)
    assert.deepEqual(closed, ['de1 unreachable', 'jp1 unreachable', 'opened during: unreachable'], 'both ends of the stream see the reset at once; the open across the cut is refused')
    assert.equal(before.closed, true)
  })

  it('places a node by the country it joins the bus with, without an adapter', () => {
    const m = rttMatrix()
    const scheduler = new VirtualScheduler(0)
    const net = countryNetwork(m, new Prng(1), { jitter: 'none' })
    assert.equal(net.latencyMs({ node: 'a', region: 'eu-central', country: 'DE' }, { node: 'b', region: 'ap-east', country: 'JP' }), Math.round(m.meanOneWayMs('DE', 'JP')))
    assert.equal(net.countryOf('a'), 'DE', 'a node is known by the country it was seen with')
    assert.throws(() => net.countryOf('c'), UnknownNodeError, 'neither a country nor an adapter')
    const bus = new Bus(scheduler, net, new Prng(2))
    const got: number[] = []
    bus.join('x', 'eu-west', 'FR')
    bus.join('y', 'us', 'US')
    bus.subscribe('y', 't', () => { got.push(scheduler.now()) })
    bus.publish('x', ['t'], msg)
    scheduler.runAll()
    assert.deepEqual(got, [2 * Math.round(m.meanOneWayMs('FR', 'US'))])
    assert.throws(() => { bus.join('x', 'eu-west', 'DE') }, /joined in FR and in DE/)
  })

  it('loses about lossRate of the gossip deliveries (the bus draws them)', () => {
    const { bus, scheduler, got } = world({ lossRate: 0.25 })
    for (let i = 0; i < 800; i++) bus.publish('de1', ['t'], msg)
    scheduler.runAll()
    // 4000 deliveries, Binomial(4000, 0.75): sd ≈ 27; 4 sd either side.
    assert.ok(Math.abs(got.length - 3000) < 110, String(got.length))
  })

  it('delivers: partition and loss for one message, as overlay models use it', () => {
    const net = countryNetwork(rttMatrix(), (n) => COUNTRY[n] as string, new Prng(2), { lossRate: 0, partitions: [{ sideA: ['eu'], sideB: ['us'], fromMs: 10, untilMs: 20 }] })
    assert.equal(net.delivers(place('de1'), place('us1'), 9), true)
    assert.equal(net.delivers(place('de1'), place('us1'), 10), false)
    assert.equal(net.delivers(place('us1'), place('de1'), 19), false)
    assert.equal(net.delivers(place('de1'), place('us1'), 20), true)
    const lossy = countryNetwork(rttMatrix(), (n) => COUNTRY[n] as string, new Prng(2), { lossRate: 1 })
    assert.equal(lossy.delivers(place('de1'), place('de2'), 0), false)
  })

  it('times a blob transfer as latency + bytes over the narrower link, per node, drawn once', () => {
    const links: Record<string, { upMbps: number, downMbps: number }> = { de1: { upMbps: 10, downMbps: 100 }, fr1: { upMbps: 1000, downMbps: 50 } }
    const net = countryNetwork(rttMatrix(), (n) => COUNTRY[n] as string, new Prng(1), { jitter: 'none', bandwidth: (n) => links[n]! })
    const lat = rttMatrix().meanOneWayMs('DE', 'FR')
    // 10 MB from de1 (10 Mbit/s up) to fr1 (50 down): 8e7 bits / 1e4 bits per ms = 8000 ms.
    assert.equal(net.transferMs(place('de1'), place('fr1'), 10_000_000), lat + 8000)
    assert.equal(net.transferMs(place('fr1'), place('de1'), 10_000_000), lat + 800)
    assert.equal(net.transferMs(place('fr1'), place('de1'), 0), lat)
    assert.equal(net.blobMs('de1', 'fr1', 10_000_000), 8000)
    const drawn = countryNetwork(rttMatrix(), (n) => COUNTRY[n] as string, new Prng(1))
    const a = drawn.bandwidthOf('jp1')
    assert.deepEqual(drawn.bandwidthOf('jp1'), a)
    assert.deepEqual(countryNetwork(rttMatrix(), (n) => COUNTRY[n] as string, new Prng(1)).bandwidthOf('jp1'), a)
    assert.ok(a.upMbps >= 1 && a.downMbps <= 100_000)
  })

  it('refuses bad options and unknown countries with typed errors', () => {
    const make = (o: CountryNetworkOptions): unknown => countryNetwork(rttMatrix(), (n) => COUNTRY[n] ?? 'XX', new Prng(1), o)
    const codes: Array<[CountryNetworkOptions, string]> = [
      [{ lossRate: -0.01 }, 'LOSS_RATE'],
      [{ lossRate: 1.01 }, 'LOSS_RATE'],
      [{ gossipHops: 0 }, 'GOSSIP_HOPS'],
      [{ gossipHops: 1.5 }, 'GOSSIP_HOPS'],
      [{ jitter: 'uniform' as never }, 'JITTER']
    ]
    for (const [o, code] of codes) assert.throws(() => make(o), (e: unknown) => e instanceof InvalidCountryNetworkError && e.code === code, code)
    make({ lossRate: 0, gossipHops: 1 })
    make({ lossRate: 1 })
    make({ partitions: [{ sideA: ['eu'], sideB: ['us'], fromMs: 0, untilMs: 1 }] })
    assert.throws(() => make({ partitions: [{ sideA: ['eu'], sideB: ['eu-west'], fromMs: 0, untilMs: 1 }] }), InvalidPartitionError)
    assert.throws(() => make({ bandwidth: [{ name: 'x', weight: 1, down: { median: 0, sigma: 1 }, up: { median: 1, sigma: 1 } }] }), (e: unknown) => e instanceof InvalidBandwidthError && e.field === 'x.down.median')
    const net = countryNetwork(rttMatrix(), (n) => COUNTRY[n] ?? 'XX', new Prng(1))
    assert.throws(() => net.latencyMs(place('de1'), { node: 'zz', region: 'eu' }), UnknownCountryError)
    const of = countryOfNodes([{ id: 'a', country: 'DE' }])
    assert.equal(of('a'), 'DE')
    assert.throws(() => of('b'), (e: unknown) => e instanceof UnknownNodeError && e.node === 'b' && e.code === 'UNKNOWN_NODE')
  })
})
