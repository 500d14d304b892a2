/**
 * Settings the benchmarks' in-process networks share (bench/dht.ts, bench/market.ts).
 *
 * All nodes share this process's one event loop, so the provides in flight at once across the network
 * decide how long each takes: at 4 per node (the default for a node on its own machine), 30 nodes ran
 * 120 walks at once and a provide took p50 19.6 s; at 50 nodes every walk outlasted the announcer's
 * 30 s timeout and the retries never finished. At 1 per node, 50 nodes announced all 713 keys in
 * 282 s (provide p50 11.7 s); the total work is the same. BENCH_PROVIDE_CONCURRENCY overrides it.
 */
export const PROVIDE_CONCURRENCY = Number(process.env.BENCH_PROVIDE_CONCURRENCY ?? 1)

/** config.dht for a benchmark's node. */
export const benchDht = (dht: Record<string, number> | undefined): Record<string, number> => ({ ...dht, provideConcurrency: PROVIDE_CONCURRENCY })
