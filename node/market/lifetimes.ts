/**
 * How long the market's signed messages live, for both sides' sealing (provider-messages.ts,
 * requester-messages.ts): the shortest that covers each message's use, within each kind's limit
 * (protocol/kinds.ts).
 */
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../protocol/index.js'

/** An award response only matters while the award is being handled. */
export const RESPONSE_LIFETIME_MS = 10 * MINUTE_MS
/** A status is evidence of liveness for a short while (the kind allows 15 min). */
export const STATUS_LIFETIME_MS = 5 * MINUTE_MS
/** An award and a job cancel matter while the attempt runs; an auction round an hour past its window. */
export const AWARD_LIFETIME_MS = HOUR_MS
/** Receipts, payments and failure reports are evidence (settlement, reputation): kept for a month. */
export const EVIDENCE_LIFETIME_MS = 30 * DAY_MS
/** A failure report embeds at most this many envelopes. */
export const MAX_EVIDENCE = 4
