/**
 * Builds the libp2p node every participant runs (DESIGN §2, §4): TCP + WebSockets (+ circuit relay),
 * Noise, Yamux, identify, ping, the private Kademlia DHT, gossipsub, bootstrap discovery, and the
 * gpumesh capability service. The bootstrap role adds a circuit-relay server and peer exchange.
 * Tests swap in the memory transport; nothing else differs.
 */
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { bootstrap } from '@libp2p/bootstrap'
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2'
import { dcutr } from '@libp2p/dcutr'
import { gossipsub } from '@libp2p/gossipsub'
import { identify, identifyPush } from '@libp2p/identify'
import type { ComponentLogger, ConnectionEncrypter, ConnectionGater, PeerDiscovery, PrivateKey, StreamMuxerFactory, Transport } from '@libp2p/interface'
import { kadDHT, passthroughMapper, removePrivateAddressesMapper } from '@libp2p/kad-dht'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import { webSockets } from '@libp2p/websockets'
import type { Datastore } from 'interface-datastore'
import { createLibp2p, type Libp2p } from 'libp2p'
import { prometheusMetrics } from '@libp2p/prometheus-metrics'
import { gossipsubMetrics } from './gossip-metrics.js'
import { EVIDENCE_TOPIC, PROTOCOLS, gossipMessageId, providerTopics } from '../protocol/index.js'
import type { Config } from './config/schema.js'
import { GOSSIP_MAX_RPC_BYTES, countDroppedRpcs } from './gossip-limits.js'
import { autoNAT } from './autonat.js'
import { SILENT_LIBP2P_LOGGER } from './libp2p-logger.js'
import { silentLoggers, type Logger } from './logger.js'
import type { NodeMetrics } from './metrics.js'
import { GOSSIP_SCORE_THRESHOLDS, gossipScoreParams } from './peer-score.js'
import { blobService, type BlobService } from './services/blob.js'
import { capabilityService, type CapabilityService } from './services/capability.js'
import { execService, type ExecService } from './services/exec.js'
import { historyService, type HistoryService } from './services/history.js'
import { probeService, type ProbeService } from './services/probe.js'
import { reachabilityService, type ReachabilityService } from './services/reachability.js'

export type Role = 'node' | 'bootstrap'

/** Ping is shared with kad-dht's liveness checks: allow more than the default one stream each way. */
const PING_STREAMS = { maxOutboundStreams: 8, maxInboundStreams: 16 }

export type GpumeshServices = {
  identify: ReturnType<ReturnType<typeof identify>>
  identifyPush: ReturnType<ReturnType<typeof identifyPush>>
  ping: ReturnType<ReturnType<typeof ping>>
  dht: ReturnType<ReturnType<typeof kadDHT>>
  pubsub: ReturnType<ReturnType<typeof gossipsub>>
  capability: CapabilityService
  probe: ProbeService
  blob: BlobService
  exec: ExecService
  history: HistoryService
  relay?: ReturnType<ReturnType<typeof circuitRelayServer>>
  autoNAT: unknown
  dcutr?: unknown
  reachability: ReachabilityService
}

export type GpumeshLibp2p = Libp2p<GpumeshServices>

export interface BuildOptions {
  privateKey: PrivateKey
  config: Config
  role: Role
  /** Bootstrap peers (already merged from config, env, flags and the community list). */
  bootstrapPeers: string[]
  datastore?: Datastore
  metrics?: NodeMetrics
  /** Where gossipsub's refused RPCs are logged (gossip-limits.ts); silent without. */
  log?: Logger
  /** libp2p's component logger (node/libp2p-logger.ts); silent without. */
  logger?: ComponentLogger
  now?: () => number
  /** In-process tests: memory transport, plaintext encryption, peers dialled directly. */
  transports?: Array<(components: any) => Transport>
  connectionEncrypters?: Array<(components: any) => ConnectionEncrypter>
  streamMuxers?: Array<(components: any) => StreamMuxerFactory>
  /** In-process tests: which peers this node may connect to (libp2p's connection gater). */
  connectionGater?: ConnectionGater
}

export async function buildLibp2p (options: BuildOptions): Promise<GpumeshLibp2p> {
  const { config, role } = options
  const peerDiscovery: Array<(components: any) => PeerDiscovery> = []
  if (options.bootstrapPeers.length > 0) peerDiscovery.push(bootstrap({ list: options.bootstrapPeers }))

  const services: Record<string, unknown> = {
    identify: identify(),
    // tells connected peers (the DHT servers answering for this node's provider records) when its addresses
    // change, e.g. once a relay reservation adds a /p2p-circuit address; without it they keep the old ones
    identifyPush: identifyPush(),
    ping: ping(PING_STREAMS),
    dht: kadDHT({
      protocol: PROTOCOLS.kad,
      // automatic mode waits for a public address and never serves on private networks
      clientMode: role === 'bootstrap' ? false : config.dht.mode === 'client',
      alpha: config.dht.alpha,
      disjointPaths: config.dht.disjointPaths,
      kBucketSize: config.dht.k,
      peerInfoMapper: config.dht.privateAddresses ? passthroughMapper : removePrivateAddressesMapper,
      reprovide: {
        validity: config.dht.recordValidityMs,
        threshold: config.dht.reprovideThresholdMs,
        interval: config.dht.reprovideCheckMs
      }
    }),
    pubsub: gossipsub({
      allowPublishToZeroTopicPeers: true,
      // every message is a gpumesh signed envelope, checked by the topic validators: gossipsub signs nothing
      // more, and names a message by the SHA-256 of its topic and bytes (protocol/README.md §7.6). No
      // fastMsgIdFn: a cheaper id that collides would let a peer get an honest message dropped as a duplicate.
      globalSignaturePolicy: 'StrictNoSign',
      msgIdFn: (message) => gossipMessageId(message.topic, message.data),
      // RPCs are read whole before validation: refuse (and count) any over what gpumesh can send
      maxInboundDataLength: GOSSIP_MAX_RPC_BYTES,
      // bootstrap peers hand pruned peers to others, so late joiners still find a mesh
      doPX: role === 'bootstrap',
      // rejected messages cost their sender score; spammers are graylisted (node/peer-score.ts)
      scoreParams: gossipScoreParams([...providerTopics(config.provider.region), EVIDENCE_TOPIC], { allowColocation: config.gossip.allowColocation }),
      ...(options.metrics !== undefined && config.metrics.libp2p ? gossipsubMetrics(options.metrics.registry, [...providerTopics(config.provider.region), EVIDENCE_TOPIC]) : {}),
      scoreThresholds: GOSSIP_SCORE_THRESHOLDS
    }),
    capability: capabilityService({ metrics: options.metrics, now: options.now }),
    // the daemon sets services.blob.store once its blob store is open
    blob: blobService({ metrics: options.metrics }),
    exec: execService({ metrics: options.metrics }),
    // the daemon sets services.probe.signer to its identity
    probe: probeService({ now: options.now }),
    // the market sets services.history.source; a bootstrap peer holds no evidence and does not serve
    history: historyService({ serve: role !== 'bootstrap', metrics: options.metrics, now: options.now })
  }
  // NAT traversal (issue 12): AutoNAT verifies public addresses (and answers others' requests); a node found
  // behind NAT listens on /p2p-circuit (node/services/reachability.ts) and DCUtR upgrades relayed connections
  services.autoNAT = autoNAT()
  // a bootstrap peer is a relay, and seeks none for itself
  services.reachability = reachabilityService({
    mode: config.nat.reachability,
    seekRelay: role !== 'bootstrap',
    verifyGraceMs: config.nat.verifyGraceMs,
    releaseAfterMs: config.nat.relayReleaseAfterMs,
    ...(options.now !== undefined ? { now: options.now } : {})
  })
  if (config.nat.holePunch) services.dcutr = dcutr()
  if (role === 'bootstrap') services.relay = circuitRelayServer()

  const node = await createLibp2p({
    privateKey: options.privateKey,
    start: false,
    addresses: { listen: config.listen, announce: config.announce },
    transports: options.transports ?? [tcp(), webSockets(), circuitRelayTransport()],
    connectionEncrypters: options.connectionEncrypters ?? [noise()],
    streamMuxers: options.streamMuxers ?? [yamux()],
    peerDiscovery,
    connectionManager: {
      maxConnections: config.connections.max,
      inboundConnectionThreshold: config.connections.inboundPerSecond,
      maxIncomingPendingConnections: config.connections.maxPendingInbound,
      allow: config.connections.allow
    },
    ...(options.datastore !== undefined ? { datastore: options.datastore } : {}),
    ...(options.connectionGater !== undefined ? { connectionGater: options.connectionGater } : {}),
    ...libp2pMetrics(options.metrics, config.metrics.libp2p),
    // libp2p asks for a logger per connection and stream: without one from the daemon, a shared no-op (node/libp2p-logger.ts)
    logger: options.logger ?? SILENT_LIBP2P_LOGGER,
    services: services as any
  })
  const built = node as unknown as GpumeshLibp2p
  countDroppedRpcs(built.services.pubsub, options.metrics, options.log ?? silentLoggers.forComponent('gossip'))
  return built
}

/**
 * libp2p's metrics into this node's registry (one registry per daemon: /metrics shows both). Process
 * metrics are gpumesh's (collectDefaultMetrics with the gpumesh_ prefix), so the plugin's are off. The
 * plugin keeps a process-wide table of metric names and clears it when a node is built
 * (preserveExistingMetrics false, its default): the new node's metrics then land in its own registry —
 * the clear also empties prom-client's global registry, which gpumesh never uses. Nodes built
 * concurrently in one process could share metric objects, one more reason tests turn them off.
 */
function libp2pMetrics (metrics: NodeMetrics | undefined, on: boolean): { metrics?: ReturnType<typeof prometheusMetrics> } {
  if (metrics === undefined || !on) return {}
  return { metrics: prometheusMetrics({ registry: metrics.registry, collectDefaultMetrics: false }) }
}
