/**
 * The scenario harness's parts (simulations/harness/): the seeded PRNG, the wire-size estimate
 * against real sealed messages, and the in-memory bus (gossip delivery, loss, ordered streams).
 */
import assert from 'node:assert/strict'
import { Identity, encodeCanonical } from '../../crypto/index.js'
import { sealMessage } from '../../protocol/index.js'
import { VirtualScheduler } from '../../protocol/market/scheduler.js'
import { Bus, type Message } from '../../simulations/harness/bus.js'
import { IdFactory, counterCid } from '../../simulations/harness/ids.js'
import { fixedNetwork, regionNetwork, type Place } from '../../simulations/harness/network.js'
import { capabilityAd, credits, jobRequest } from '../../simulations/harness/payloads.js'
import { Prng } from '../../simulations/harness/prng.js'
import { Recorder } from '../../simulations/harness/recorder.js'
import { cborSize, signedSize } from '../../simulations/harness/wire-size.js'

const T0 = 1_704_067_200_000

describe('harness: seeded PRNG', () => {
  it('gives the same sequence for the same seed, and another for another seed', () => {
    const draw = (seed: number | string): number[] => { const p = new Prng(seed); return Array.from({ length: 8 }, () => p.uint32()) }
    assert.deepEqual(draw(7), draw(7))
    assert.deepEqual(draw('seven'), draw('seven'))
    assert.notDeepEqual(draw(7), draw(8))
  })

  it('forks independent streams: draws on one do not shift another', () => {
    const a = new Prng(1)
    const b = new Prng(1)
    const fa = a.fork('links')
    for (let i = 0; i < 5; i++) b.next()
    const fb = b.fork('links')
    assert.deepEqual([fa.next(), fa.next()], [fb.next(), fb.next()])
    assert.notEqual(new Prng(1).fork('x').next(), new Prng(1).fork('y').next())
  })

  it('keeps int() inside its bounds, both ends reachable, and chance() exact at 0 and 1', () => {
    const p = new Prng(3)
    const seen = new Set<number>()
    for (let i = 0; i < 2_000; i++) {
      const n = p.int(-2, 2)
      assert.ok(n >= -2 && n <= 2 && Number.isInteger(n))
      seen.add(n)
    }
    assert.deepEqual([...seen].sort(), [-1, -2, 0, 1, 2])
    for (let i = 0; i < 100; i++) { assert.equal(p.chance(0), false); assert.equal(p.chance(1), true) }
    assert.throws(() => p.int(3, 2), RangeError)
  })
})

describe('harness: ids and wire sizes', () => {
  it('makes distinct, well-formed CIDs from counters, the same in every run', () => {
    const a = new IdFactory()
    const b = new IdFactory()
    const x = [a.cid('job'), a.cid('job'), a.cid('bid')]
    const y = [b.cid('job'), b.cid('job'), b.cid('bid')]
    assert.deepEqual(x.map(String), y.map(String))
    assert.equal(new Set(x.map(String)).size, 3)
    assert.equal(x[0]?.version, 1)
    assert.equal(x[0]?.code, 0x71)
    assert.ok(counterCid('job', 256).equals(counterCid('job', 256)))
    assert.ok(!counterCid('job', 256).equals(counterCid('job', 257)))
  })

  it('sizes a payload as DAG-CBOR encodes it, to the byte', () => {
    const ids = new IdFactory()
    const job = jobRequest({ gpus: 2, minVramGB: 40, models: ['nvidia-h100-80gb-hbm3'], regions: ['eu'], residency: 'strict', label: 'wörk ✓' }, T0, ids.nonce())
    const ad = capabilityAd('p1', { region: 'eu-west', gpus: { h100: 2, l40s: 1 }, floor: credits(1.5) }, T0)
    for (const value of [job, ad, { cid: ids.cid('x'), list: [0, 23, 24, 255, 256, 65_535, 65_536, 2 ** 32, -1, -25] }]) {
      assert.equal(cborSize(value), encodeCanonical(value).byteLength)
    }
  })

  it('sizes a signed message within a few bytes of the real envelope', () => {
    const signer = new Identity(new Uint8Array(32).fill(7))
    const ids = new IdFactory()
    const payload = jobRequest({}, T0, ids.nonce())
    const bid = {
      v: 1 as const, issuedAt: T0, expiresAt: T0 + 60_000, job: ids.cid('job'), provider: signer.peerId, price: credits(2), gpus: ['GPU-a'],
      model: 'nvidia-h100-80gb-hbm3', vramMiB: 81_559, region: 'eu-west', startBy: T0, ad: ids.cid('ad')
    }
    for (const [kind, p] of [['job-request', payload], ['bid', bid]] as const) {
      const real = sealMessage(signer, kind, p as never).bytes.byteLength
      assert.ok(Math.abs(signedSize(p) - real) <= 4, `${kind}: estimated ${signedSize(p)}, sealed ${real}`)
    }
  })
})

function bus (latency = 10, loss = 0, seed = 1): { s: VirtualScheduler, bus: Bus, rec: Recorder } {
  const s = new VirtualScheduler(T0)
  const rec = new Recorder(() => s.now())
  return { s, bus: new Bus(s, fixedNetwork(latency, { loss }), new Prng(seed), rec), rec }
}

const msg = (kind: string, body: unknown = null): Message => ({ kind, bytes: 100, body })

describe('harness: the bus', () => {
  it('delivers gossip once per subscriber (even on two topics), never to the sender, after the latency', () => {
    const { s, bus: b, rec } = bus(10)
    const got: Array<[string, number]> = []
    for (const n of ['a', 'b', 'c']) {
      b.join(n, 'eu-west')
      b.subscribe(n, 't1', () => { got.push([n, s.now() - T0]) })
      b.subscribe(n, 't2', () => { got.push([n, s.now() - T0]) })
    }
    b.join('d', 'eu-west')
    assert.equal(b.publish('a', ['t1', 't2'], msg('bid')), 2)
    s.runAll()
    assert.deepEqual(got, [['b', 10], ['c', 10]])
    assert.deepEqual(rec.count('bid'), { count: 1, bytes: 100 })
    assert.deepEqual(rec.count('bid', 'delivered'), { count: 2, bytes: 200 })
  })

  it('delivers same-instant gossip in subscriber order, before anything a receiver schedules for that instant', () => {
    const { s, bus: b } = bus(10)
    const order: string[] = []
    for (const n of ['src', 'a', 'b', 'c']) b.join(n, 'eu')
    for (const n of ['a', 'b', 'c']) {
      b.subscribe(n, 't', () => {
        order.push(n)
        s.at(s.now(), () => { order.push(`${n}'s follow-up`) })
      })
    }
    b.publish('src', ['t'], msg('job-request'))
    s.runAll()
    assert.deepEqual(order, ['a', 'b', 'c', "a's follow-up", "b's follow-up", "c's follow-up"])
  })

  it('delivers a publish in time order, receivers due together in subscriber order, interleaved with other calls as one entry per delivery would be', () => {
    // a jittered model whose every draw the test sees: the bus draws one delay per receiver, in subscriber order
    const s = new VirtualScheduler(T0)
    const draws: Array<[string, number]> = []
    const jitter = new Prng(5)
    const model = { latencyMs: (_from: Place, to: Place) => { const d = 1 + jitter.int(0, 6); draws.push([to.node, d]); return d }, gossipHops: 2, gossipLoss: 0 }
    const counted = new Recorder(() => s.now(), false)
    const b = new Bus(s, model, new Prng(1), counted)
    const got: string[] = []
    const names = Array.from({ length: 40 }, (_, i) => `n${i}`)
    b.join('src', 'eu')
    for (const n of names) {
      b.join(n, 'eu')
      b.subscribe(n, 't', () => { got.push(`${n}@${s.now() - T0}`) })
    }
    // other calls at every instant a delivery may fall on, scheduled before the publish and after it
    for (let t = 2; t <= 14; t++) s.at(T0 + t, () => { got.push(`before@${t}`) })
    assert.equal(b.publish('src', ['t'], msg('bid')), 40)
    for (let t = 2; t <= 14; t++) s.at(T0 + t, () => { got.push(`after@${t}`) })
    s.runAll()
    // what one scheduler entry per delivery gives: by time, then by when each was scheduled
    const expected: Array<{ t: number, seq: number, label: string }> = []
    let seq = 0
    for (let t = 2; t <= 14; t++) expected.push({ t, seq: seq++, label: `before@${t}` })
    for (const [to, d] of draws) expected.push({ t: 2 * d, seq: seq++, label: `${to}@${2 * d}` })
    for (let t = 2; t <= 14; t++) expected.push({ t, seq: seq++, label: `after@${t}` })
    expected.sort((x, y) => x.t - y.t || x.seq - y.seq)
    assert.equal(draws.length, 40)
    assert.ok(new Set(draws.map(([, d]) => d)).size > 3, 'the draws spread the receivers over several instants')
    assert.ok(draws.some(([, d], i) => i > 0 && d < (draws[i - 1] as [string, number])[1]), 'subscriber order is not time order')
    assert.deepEqual(got, expected.map((e) => e.label))
    assert.deepEqual(counted.count('bid', 'delivered'), { count: 40, bytes: 4_000 }, 'counted in bulk, all the same')
  })

  it('hands a subscriber only the kinds it asked for, and still delivers and counts the others', () => {
    const { s, bus: b, rec } = bus(10)
    const got: string[] = []
    for (const n of ['src', 'a', 'b']) b.join(n, 'eu')
    b.subscribe('a', 't', (_f, m) => { got.push(`a ${m.kind}`) }, ['bid'])
    b.subscribe('b', 't', (_f, m) => { got.push(`b ${m.kind}`) })
    b.subscribe('a', 't', (_f, m) => { got.push(`a2 ${m.kind}`) }, [])
    b.publish('src', ['t'], msg('award'))
    b.publish('src', ['t'], msg('bid'))
    s.runAll()
    assert.deepEqual(got, ['b award', 'a bid', 'b bid'])
    assert.deepEqual(rec.count('award', 'delivered'), { count: 2, bytes: 200 })
  })

  it('reads a subscriber\'s own Set of kinds at each delivery, so it may change what it takes after the publish', () => {
    const { s, bus: b, rec } = bus(10)
    const got: string[] = []
    const takes = new Set<string>()
    for (const n of ['src', 'a']) b.join(n, 'eu')
    b.subscribe('a', 't', (_f, m) => { got.push(m.kind) }, takes)
    b.publish('src', ['t'], msg('bid'))
    s.runAll()
    b.publish('src', ['t'], msg('bid'))
    takes.add('bid')
    s.runAll()
    takes.delete('bid')
    b.publish('src', ['t'], msg('bid'))
    s.runAll()
    assert.deepEqual(got, ['bid'], 'only the bid delivered while the set held it')
    assert.deepEqual(rec.count('bid', 'delivered'), { count: 3, bytes: 300 }, 'all three delivered and counted')
  })

  it('follows joins, leaves and (un)subscribes between one publish and the next, and between a publish and its delivery', () => {
    // the bus keeps who gets a topic's gossip from one publish to the next: each change must reach it
    const { s, bus: b } = bus(10)
    const got: string[] = []
    const sub = (n: string, tag = n): void => { b.subscribe(n, 't', () => { got.push(`${tag}@${s.now()}`) }) }
    for (const n of ['src', 'a', 'b']) { b.join(n, 'eu'); if (n !== 'src') sub(n) }
    b.publish('src', ['t'], msg('bid'))
    s.runAll()
    b.join('c', 'eu'); sub('c')
    b.publish('src', ['t'], msg('bid'))
    s.runAll()
    b.unsubscribe('a', 't')
    b.publish('src', ['t'], msg('bid'))
    s.runAll()
    assert.deepEqual(got.splice(0).map((x) => x.split('@')[0]), ['a', 'b', 'a', 'b', 'c', 'b', 'c'], 'each publish sees the subscribers of its time')
    // changes after a publish, before its delivery: the delivery sees them (as gossip reaching a node that left would not)
    b.publish('src', ['t'], msg('bid'))
    b.leave('b')
    sub('c', 'c2')
    b.join('b', 'eu')
    s.runAll()
    assert.deepEqual(got.map((x) => x.split('@')[0]), ['c', 'c2'])
  })

  it('loses gossip deliveries at the model\'s rate, the same ones for the same seed', () => {
    const lostWith = (seed: number): string[] => {
      const { s, bus: b, rec } = bus(5, 0.3, seed)
      for (let i = 0; i < 50; i++) { b.join(`n${i}`, 'eu'); b.subscribe(`n${i}`, 't', () => {}) }
      for (let i = 0; i < 20; i++) b.publish('n0', ['t'], msg('job-request'))
      s.runAll()
      return rec.trace.filter((l) => l.includes('lost'))
    }
    const a = lostWith(4)
    assert.deepEqual(a, lostWith(4))
    assert.notDeepEqual(a, lostWith(5))
    // 20 × 49 deliveries at 0.3: far from none and from all
    assert.ok(a.length > 200 && a.length < 400, `${a.length} lost`)
  })

  it('keeps a stream ordered although the jitter would reorder it, and closes after what was sent', () => {
    const s = new VirtualScheduler(T0)
    const b = new Bus(s, regionNetwork(new Prng(9), { elsewhere: 100, jitter: 5 }), new Prng(9))
    b.join('req', 'eu-west')
    b.join('prov', 'us-east')
    const got: string[] = []
    b.listen('prov', (end) => {
      end.onMessage((m) => { got.push(m.kind) })
      end.onClose((why) => { got.push(`closed: ${why}`) })
    })
    const end = b.open('req', 'prov')
    for (let i = 0; i < 20; i++) end.send(msg(`m${i}`))
    end.close('done')
    end.send(msg('after-close'))
    s.runAll()
    assert.deepEqual(got, [...Array.from({ length: 20 }, (_, i) => `m${i}`), 'closed: done'])
  })

  it('resets a stream to a node with no listener, and drops what is in flight on a reset', () => {
    const { s, bus: b } = bus(10)
    b.join('a', 'eu')
    b.join('b', 'eu')
    const closes: string[] = []
    const end = b.open('a', 'b')
    end.onClose((why) => { closes.push(why) })
    s.runAll()
    assert.deepEqual(closes, ['no listener'])

    const got: string[] = []
    b.listen('b', (e) => { e.onMessage((m) => { got.push(m.kind) }); e.onClose((why) => { got.push(`closed: ${why}`) }) })
    const second = b.open('a', 'b')
    second.send(msg('first'))
    s.advance(15)
    second.send(msg('in-flight'))
    second.reset('gone')
    s.runAll()
    assert.deepEqual(got, ['first', 'closed: gone'])
  })
})
