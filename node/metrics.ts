/**
 * gpumesh's own metrics, declared in one place (STYLE: gossipsub src/metrics.ts). Exposed in
 * Prometheus text format by the local API at /metrics, with Node process metrics beside them.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

export interface NodeMetrics {
  readonly registry: Registry
  /** Messages refused, by kind and reason code (RejectReason) — the same codes feed peer scoring. */
  readonly messagesRejected: Counter<'kind' | 'reason'>
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
  return {
    registry,
    messagesRejected: new Counter({ name: 'gpumesh_messages_rejected_total', help: 'Messages refused, by kind and reason', labelNames: ['kind', 'reason'], registers }),
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
