/** The simulator's workloads: trace loaders, the generic job CSV, generators, list prices, the Workload builder. */
export * from './csv.js'
export * from './gpu-models.js'
export * from './regions.js'
export * from './workload.js'
export * from './alibaba.js'
export * from './generic-csv.js'
export * from './synthetic.js'
export * from './prices.js'
