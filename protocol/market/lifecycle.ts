/**
 * Job lifecycles (DESIGN §5–§6): the requester's and the provider's state machine for one job, as
 * pure reducers `(state, event) → { state, effects }`. node/ and the simulator feed events in (peer
 * messages, local decisions, `tick`s for the `wake`s asked for) and carry the effects out.
 *
 * - requester-lifecycle.ts: bidding → awarded → running → verifying → completed → verified → settled
 *   (+ failed, cancelled, expired), with re-auctions, leases and interval payments.
 * - provider-lifecycle.ts: offered → awarded → accepted → running → completed → settled
 *   (+ lost, declined, preempted, failed, cancelled, stopped-unpaid), with heartbeats and the
 *   one-interval payment risk.
 * - lifecycle-shared.ts: constants, billing arithmetic both sides agree on, timer bookkeeping.
 */
export * from './lifecycle-shared.js'
export * from './requester-lifecycle.js'
export * from './provider-lifecycle.js'
