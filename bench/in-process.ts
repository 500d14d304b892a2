/**
 * Settings the benchmarks' in-process networks share (bench/dht.ts, bench/market.ts).
 *
 * All nodes share this process's one event loop, so the provides in flight at once across the network
 * decide how long each takes: at 4 per node (the default for a node on its own machine), 30 nodes ran
 * 120 walks at once and a provide took p50 19.6 s; at 50 nodes every walk outlasted the announcer's
 * 30 s timeout and the retries never finished. At 1 per node, 50 nodes announced all 713 keys in
 * 282 s (provide p50 11.7 s); the total work is the same. BENCH_PROVIDE_CONCURRENCY overrides it.
 */
import { PropagationDelay } from '../calibration/delay-transport.js'

export const PROVIDE_CONCURRENCY = Number(process.env.BENCH_PROVIDE_CONCURRENCY ?? 1)

/** config.dht for a benchmark's node. */
export const benchDht = (dht: Record<string, number> | undefined): Record<string, number> => ({ ...dht, provideConcurrency: PROVIDE_CONCURRENCY })

/**
 * The transport of a benchmark's nodes: the memory transport with a read boundary (each chunk arrives
 * in a later macrotask, as a socket read does; calibration/delay-transport.ts), unless
 * BENCH_READ_BOUNDARY=0. Bare, it delivers in microtasks only: a gossip flood across 50 nodes in one
 * process then never yields to the timers (a 13.6 s run of microtasks was seen, the bid window's close
 * timer 2.4 s late), which is the benchmark's artifact, not the node's.
 */
export function benchTransportDelay (): { delay?: PropagationDelay } {
  return process.env.BENCH_READ_BOUNDARY === '0' ? {} : { delay: new PropagationDelay(0, { readBoundary: true }) }
}
