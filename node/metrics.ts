/**
 * gpumesh's own metrics, declared in one place (STYLE: gossipsub src/metrics.ts). Exposed in
 * Prometheus text format by the local API at /metrics, with Node process metrics and (when on)
 * libp2p's own metrics (node/libp2p.ts, `libp2p_*`) beside them in the same registry.
 *
 * Money is integer micro-credits (1 credit = 10⁶), time seconds, GPU time GPU-seconds.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export interface NodeMetrics {
  readonly registry: Registry
  /**
   * Messages refused, by message kind (`bid`, `award`, … — `unknown` when the envelope does not say),
   * reason code (RejectReason and the market's refusals; the same codes feed peer scoring), and the
   * way it came (`gossip`, `exec`, `capability`, `history`).
   */
  readonly messagesRejected: Counter<'kind' | 'reason' | 'via'>
  /** Job requests and re-opened rounds this provider looked at (`round`: first or reopened). */
  readonly jobsSeen: Counter<'round'>
  /** Bids this provider signed and published. */
  readonly bidsSent: Counter
  /** Jobs this provider did not bid on, by reason (bid-policy DeclineReason, DAMPED, LOW_TRUST, EXCLUDED, WINDOW_CLOSED, PREEMPTED_HERE, NOT_SELLING). */
  readonly bidsDeclined: Counter<'reason'>
  /** Awards that named one of this provider's bids. */
  readonly awardsWon: Counter
  /** Awards that named another bid than this provider's, by bid-outcome LossReason (`unknown`: the winning bid was not seen). */
  readonly awardsLost: Counter<'reason'>
  /** Requester side: from the job request to its first award. */
  readonly auctionSeconds: Histogram
  /** Jobs by side (requester, provider) and state, read at each scrape. */
  readonly jobsByState: Gauge<'side' | 'state'>
  /** Bronze jobs this provider preempted for better-paying work. */
  readonly preemptions: Counter
  /** Signed failure reports this node recorded, by side and reason (FailureReason: no-show, nonpayment, …). */
  readonly failures: Counter<'side' | 'kind'>
  /** GPU-seconds in the receipts this provider signed. */
  readonly gpuSecondsSold: Counter
  /** Micro-credits in payment commitments this provider accepted (their growth). */
  readonly creditsEarned: Counter
  /** Micro-credits in payment commitments this requester signed (their growth). */
  readonly creditsSpent: Counter
  /** Probes this node ran on providers, by reading (probe summary). */
  readonly probeResults: Counter<'reading'>
  /**
   * Where jobsByState reads from: set by the market once it runs. Each source returns counts by state
   * at scrape time (nothing is kept between scrapes, so a job that ended is not a stale series).
   */
  jobStates: Partial<Record<'requester' | 'provider', () => Record<string, number>>>
  /** Capability ad requests served, by result. */
  readonly capabilityServed: Counter<'result'>
  /** Capability ads fetched from peers, by result. */
  readonly capabilityFetched: Counter<'result'>
  /** History requests served on /gpumesh/history/1.0.0, by result. */
  readonly historyServed: Counter<'result'>
  /** History asked of peers, by result (ok or a HistoryFetchError code). */
  readonly historyFetched: Counter<'result'>
  /** Blob requests served on /gpumesh/blob/1.0.0, by result. */
  readonly blobServed: Counter<'result'>
  /** Blobs fetched from peers, by result (ok or a BlobFetchError code). */
  readonly blobFetched: Counter<'result'>
  /** Blob content bytes moved, by direction (in = fetched, out = served). */
  readonly blobBytes: Counter<'direction'>
  /** Exec streams that failed, by ExecStreamError code (BAD_FRAME, LOG_CREDIT, RESET, GONE, READ_LIMIT, LOCAL). */
  readonly execStreamErrors: Counter<'code'>
  /** Gossipsub inbound RPC streams dropped below the message validator, by reason (e.g. rpc-too-large). */
  readonly gossipRpcDropped: Counter<'reason'>
  readonly provides: Counter<'result'>
  readonly provideSeconds: Histogram
  readonly findProvidersSeconds: Histogram
  readonly connectedPeers: Gauge
  readonly sellingGpus: Gauge
  readonly apiRequests: Counter<'route' | 'status'>
}

export function createMetrics (options: { processMetrics?: boolean } = {}): NodeMetrics {
  const registry = new Registry()
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gpumesh_' })
  const registers = [registry]
  const seconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
  const jobStates: NodeMetrics['jobStates'] = {}
  return {
    registry,
    jobStates,
    messagesRejected: new Counter({ name: 'gpumesh_messages_rejected_total', help: 'Messages refused, by message kind, reason and the way they came', labelNames: ['kind', 'reason', 'via'], registers }),
    jobsSeen: new Counter({ name: 'gpumesh_market_jobs_seen_total', help: 'Job requests and re-opened rounds this provider looked at', labelNames: ['round'], registers }),
    bidsSent: new Counter({ name: 'gpumesh_market_bids_sent_total', help: 'Bids this provider signed and published', registers }),
    bidsDeclined: new Counter({ name: 'gpumesh_market_bids_declined_total', help: 'Jobs this provider did not bid on, by reason', labelNames: ['reason'], registers }),
    awardsWon: new Counter({ name: 'gpumesh_market_awards_won_total', help: 'Awards naming one of this provider\'s bids', registers }),
    awardsLost: new Counter({ name: 'gpumesh_market_awards_lost_total', help: 'Awards naming another bid than this provider\'s, by the scoring term that decided', labelNames: ['reason'], registers }),
    auctionSeconds: new Histogram({ name: 'gpumesh_market_auction_seconds', help: 'Requester side: time from the job request to its first award', buckets: [0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300], registers }),
    jobsByState: new Gauge({
      name: 'gpumesh_market_jobs',
      help: 'Jobs by side and state',
      labelNames: ['side', 'state'],
      registers,
      collect () {
        this.reset()
        for (const side of ['requester', 'provider'] as const) {
          const counts = jobStates[side]?.()
          for (const [state, n] of Object.entries(counts ?? {})) this.set({ side, state }, n)
        }
      }
    }),
    preemptions: new Counter({ name: 'gpumesh_market_preemptions_total', help: 'Bronze jobs this provider preempted', registers }),
    failures: new Counter({ name: 'gpumesh_market_failures_total', help: 'Failure reports this node recorded, by side and reason', labelNames: ['side', 'kind'], registers }),
    gpuSecondsSold: new Counter({ name: 'gpumesh_market_gpu_seconds_sold_total', help: 'GPU-seconds in receipts this provider signed', registers }),
    creditsEarned: new Counter({ name: 'gpumesh_market_earned_microcredits_total', help: 'Micro-credits in payments this provider accepted', registers }),
    creditsSpent: new Counter({ name: 'gpumesh_market_spent_microcredits_total', help: 'Micro-credits in payments this requester signed', registers }),
    probeResults: new Counter({ name: 'gpumesh_probe_results_total', help: 'Probes this node ran, by reading', labelNames: ['reading'], registers }),
    capabilityServed: new Counter({ name: 'gpumesh_capability_served_total', help: 'Capability ad requests served, by result', labelNames: ['result'], registers }),
    capabilityFetched: new Counter({ name: 'gpumesh_capability_fetched_total', help: 'Capability ads fetched from peers, by result', labelNames: ['result'], registers }),
    historyServed: new Counter({ name: 'gpumesh_history_served_total', help: 'History requests served, by result', labelNames: ['result'], registers }),
    historyFetched: new Counter({ name: 'gpumesh_history_fetched_total', help: 'History answers from peers, by result', labelNames: ['result'], registers }),
    blobServed: new Counter({ name: 'gpumesh_blob_served_total', help: 'Blob requests served, by result', labelNames: ['result'], registers }),
    blobFetched: new Counter({ name: 'gpumesh_blob_fetched_total', help: 'Blobs fetched from peers, by result', labelNames: ['result'], registers }),
    blobBytes: new Counter({ name: 'gpumesh_blob_bytes_total', help: 'Blob content bytes moved, by direction', labelNames: ['direction'], registers }),
    execStreamErrors: new Counter({ name: 'gpumesh_exec_stream_errors_total', help: 'Exec streams that failed, by code', labelNames: ['code'], registers }),
    gossipRpcDropped: new Counter({ name: 'gpumesh_gossip_rpc_dropped_total', help: 'Gossipsub inbound RPC streams dropped before validation, by reason', labelNames: ['reason'], registers }),
    provides: new Counter({ name: 'gpumesh_dht_provides_total', help: 'Capability keys provided on the DHT, by result', labelNames: ['result'], registers }),
    provideSeconds: new Histogram({ name: 'gpumesh_dht_provide_seconds', help: 'Time to provide one capability key', buckets: seconds, registers }),
    findProvidersSeconds: new Histogram({ name: 'gpumesh_dht_find_providers_seconds', help: 'Time to answer one providers query', buckets: seconds, registers }),
    connectedPeers: new Gauge({ name: 'gpumesh_connected_peers', help: 'Peers with an open connection', registers }),
    sellingGpus: new Gauge({ name: 'gpumesh_selling_gpus', help: 'GPUs in this node\'s capability ad', registers }),
    apiRequests: new Counter({ name: 'gpumesh_api_requests_total', help: 'Local API requests, by route and status', labelNames: ['route', 'status'], registers })
  }
}
