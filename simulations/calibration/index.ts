/** Calibration's pure half (issue 10): the workload, the model run, the measures and their comparison. */
export * from './workload.js'
export * from './measures.js'
export * from './model-run.js'
