/**
 * The market's decision logic (DESIGN §5–§6), pure: calendar and pricing, the provider's bid policy
 * and damping, scoring and awards, the no-bids explanation, and the job lifecycle state machines.
 */
export * from './types.js'
export * from './calendar.js'
export * from './pricing.js'
export * from './bid-policy.js'
export * from './damping.js'
export * from './bid-window.js'
export * from './scoring.js'
export * from './reliability.js'
export * from './award.js'
export * from './bid-store.js'
export * from './explain.js'
export * from './lifecycle.js'
export * from './scheduler.js'
export * from './params.js'
export * from './seen-bids.js'
export * from './provider-agent-types.js'
export * from './provider-agent.js'
export * from './reputation.js'
export * from './requester-agent.js'
export * from './award-review.js'
