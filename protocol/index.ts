/**
 * gpumesh/protocol — the wire format and (in later issues) the decision logic, as pure code:
 * no I/O, no timers, no wall clock, no unseeded randomness. Time comes in as an argument.
 */
export * from './constants.js'
export * from './limits.js'
export * from './errors.js'
export * from './kinds.js'
export * from './codec.js'
export * from './message.js'
export * from './replay-cache.js'
export * from './messages/capability-ad.js'
export * from './messages/job-request.js'
export * from './messages/bid.js'
export * from './messages/award.js'
export * from './messages/settlement.js'
export * from './messages/evidence.js'
export * from './messages/auction.js'
export * from './discovery.js'
export * from './discovery-completeness.js'
export * from './provider-walk.js'
export * from './market/index.js'
export * from './nat/reachability.js'
