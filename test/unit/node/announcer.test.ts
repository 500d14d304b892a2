import assert from 'node:assert/strict'
import { Announcer, PROVIDE_CONCURRENCY } from '../../../node/announcer.js'
import type { GpumeshLibp2p } from '../../../node/libp2p.js'
import { silentLoggers } from '../../../node/logger.js'
import { resolveConfig, ConfigError } from '../../../node/config/load.js'

/**
 * The announcer's scheduling against a DHT whose provides finish when the test says so: how many run
 * at once is what `dht.provideConcurrency` bounds (bench/dht.ts runs 50 nodes on one CPU at 1).
 */
function gatedDht (): { node: GpumeshLibp2p, inFlight: () => number, peak: () => number, release: () => void } {
  let inFlight = 0
  let peak = 0
  let waiting: Array<() => void> = []
  const node = {
    getConnections: () => [{}],
    services: {
      dht: {
        provide: async function * () {
          inFlight++
          peak = Math.max(peak, inFlight)
          await new Promise<void>((resolve) => { waiting.push(resolve) })
          inFlight--
          yield { name: 'PEER_RESPONSE', messageName: 'ADD_PROVIDER' }
        },
        cancelReprovide: async () => {}
      }
    }
  } as unknown as GpumeshLibp2p
  const release = (): void => { const w = waiting; waiting = []; for (const r of w) r() }
  return { node, inFlight: () => inFlight, peak: () => peak, release }
}

const tick = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

async function runAll (concurrency: number | undefined, keys: number): Promise<{ peak: number, provided: number }> {
  const dht = gatedDht()
  const announcer = new Announcer(dht.node, silentLoggers.forComponent('test'), undefined, undefined, concurrency)
  await announcer.set(Array.from({ length: keys }, (_, i) => `gpu/model-${i}`))
  while (announcer.state().some((s) => !s.provided)) {
    await tick()
    dht.release()
  }
  await announcer.stop()
  return { peak: dht.peak(), provided: announcer.state().filter((s) => s.provided).length }
}

describe('Announcer: provides in flight at once', () => {
  it('runs at most `concurrency` provides at a time and still provides every key', async () => {
    assert.deepEqual(await runAll(1, 5), { peak: 1, provided: 5 })
    assert.deepEqual(await runAll(3, 7), { peak: 3, provided: 7 })
  })

  it('defaults to PROVIDE_CONCURRENCY, and never runs more workers than keys', async () => {
    assert.deepEqual(await runAll(undefined, 9), { peak: PROVIDE_CONCURRENCY, provided: 9 })
    assert.deepEqual(await runAll(4, 2), { peak: 2, provided: 2 })
  })

  it('config dht.provideConcurrency: default 4, 1–16, a clear error outside', () => {
    assert.equal(resolveConfig([]).dht.provideConcurrency, PROVIDE_CONCURRENCY)
    assert.equal(resolveConfig([{ source: 'test', values: { dht: { provideConcurrency: 1 } } }]).dht.provideConcurrency, 1)
    assert.equal(resolveConfig([{ source: 'test', values: { dht: { provideConcurrency: 16 } } }]).dht.provideConcurrency, 16)
    for (const bad of [0, 17, 1.5]) {
      assert.throws(() => resolveConfig([{ source: 'test', values: { dht: { provideConcurrency: bad } } }]),
        (err: unknown) => err instanceof ConfigError && err.issues[0]?.field === 'dht.provideConcurrency')
    }
  })
})
