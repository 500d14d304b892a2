/** The simulator's network model (issue 10): measured delays, bandwidth, loss, churn, partitions. */
export * from './bandwidth.js'
export * from './churn.js'
export * from './country-network.js'
export * from './distributions.js'
export * from './geo.js'
export * from './latency.js'
export * from './partition.js'
export * from './rtt-table.js'
