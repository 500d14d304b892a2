export * from './metrics.js'
export * from './report.js'
export * from './charts.js'
export * from './faults.js'
