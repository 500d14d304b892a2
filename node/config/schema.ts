/**
 * The node's configuration: plain data (it survives structuredClone), validated with zod, with
 * embedded defaults so that `gpumesh node start` runs with no config at all — random ports on all
 * interfaces, no bootstrap peers (a local network of one), selling declared or detected GPUs at a
 * default floor, all week.
 */
import { z } from 'zod'
import { multiaddr } from '@multiformats/multiaddr'
import { region as regionSlug, country as countryCode, timeZone as timeZoneName } from '../../protocol/messages/common.js'
import { processSandbox } from '../../protocol/messages/capability-ad.js'
import { InvalidMarketParamsError, createMarketParams, defaultMarketParams, type MarketParams, type MarketParamsInit } from '../../protocol/market/params.js'
import { DEFAULT_MIN_REQUESTER_TRUST } from '../../protocol/market/requester-view.js'
import { HOUR_MS, MAX_JOB_GPUS, MINUTE_MS, SECOND_MS } from '../../protocol/limits.js'
import { isKnownTimeZone } from '../../protocol/time-zone.js'
import { DHT_K } from '../../protocol/discovery-completeness.js'
import { parseWindows, WindowSyntaxError } from './windows.js'
import { DEFAULT_INPUT_CACHE_MIB } from '../blobs/input-cache.js'
import { PROVIDE_CONCURRENCY } from '../announcer.js'
import { NAT_MODES, NAT_RELAY_RELEASE_AFTER_MS, NAT_VERIFY_GRACE_MS } from '../../protocol/nat/reachability.js'
import { PROBE_BURST, PROBE_INTERVAL_MIN_MS, PROBE_INTERVAL_MS, PROBE_JITTER, PROBE_PER_HOUR } from '../../protocol/trust/probe-schedule.js'
import { DEFAULT_LOG_LEVEL, LogLevelSpecError, parseLogLevelSpec } from '../log-levels.js'

const multiaddrString = z.string().refine((s) => {
  try {
    multiaddr(s)
    return s.startsWith('/')
  } catch {
    return false
  }
}, { message: 'expected a multiaddr such as /ip4/0.0.0.0/tcp/4001' })

/** A bootstrap address must name the peer: /ip4/…/tcp/…/p2p/12D3KooW… */
const peerMultiaddr = multiaddrString.refine((s) => /\/p2p\/[1-9A-HJ-NP-Za-km-z]+$/.test(s), {
  message: 'expected a multiaddr ending in /p2p/<peer id>'
})

const windowList = z.array(z.string()).superRefine((specs, ctx) => {
  try {
    parseWindows(specs)
  } catch (err) {
    if (!(err instanceof WindowSyntaxError)) throw err
    ctx.addIssue({ code: 'custom', message: err.message })
  }
})

/** Well formed (the wire schema's check) and known to this runtime's tz data (protocol/time-zone.ts). */
const timeZone = timeZoneName.refine(isKnownTimeZone, { message: 'expected an IANA time zone known to this system, e.g. Europe/Berlin or UTC' })

const credits = z.number().nonnegative().max(1_000_000).refine((n) => Number.isSafeInteger(Math.round(n * 1e6)), { message: 'too precise' })

/** The short form of a declared GPU, as `--declare-gpu` and GPUMESH_GPUS take it. */
export const DECLARED_GPU_FORM = 'NAME:VRAM_MIB[xCOUNT], e.g. "NVIDIA H100 80GB HBM3:81559x8"'
const DECLARED_GPU_OBJECT = '{"name": "NVIDIA H100 80GB HBM3", "vramMiB": 81559, "count": 8}'

/** `"NVIDIA H100 80GB HBM3:81559"` or `"…:81559x8"` → its fields, or undefined when it is not that form. */
export function parseDeclaredGpuSpec (spec: string): { name: string, vramMiB: number, count?: number } | undefined {
  const match = /^(.+):(\d+)(?:x(\d+))?$/.exec(spec.trim())
  if (match === null) return undefined
  return { name: (match[1] as string).trim(), vramMiB: Number(match[2]), ...(match[3] !== undefined ? { count: Number(match[3]) } : {}) }
}

const declaredGpuObject = z.strictObject({
  /** As the driver would name it: "NVIDIA H100 80GB HBM3". */
  name: z.string().min(1).max(96),
  vramMiB: z.int().min(1).max(4_194_304),
  count: z.int().min(1).max(MAX_JOB_GPUS).default(1)
}, { error: (issue) => issue.code === 'invalid_type' ? `expected an object ${DECLARED_GPU_OBJECT} or a string ${DECLARED_GPU_FORM}, got ${JSON.stringify(issue.input) ?? String(issue.input)}` : undefined })

/** A declared GPU: the object, or the same `NAME:VRAM_MIB[xCOUNT]` string `--declare-gpu` takes. */
export const declaredGpu = z.preprocess((value) => typeof value === 'string' ? parseDeclaredGpuSpec(value) ?? value : value, declaredGpuObject)

/** nvidia-smi index (`"0"`) or GPU UUID: the key of a detected GPU in `provider.gpuVramMiB`. */
const gpuKey = z.string().regex(/^(\d{1,2}|GPU-[A-Za-z0-9-]{1,60})$/, { message: 'expected an nvidia-smi index such as "0" or a GPU UUID such as "GPU-5b0e1a3c-…"' })

/**
 * The problems of `init` as overrides of a parameter object shaped like `defaults`: keys `defaults`
 * lacks (an unknown or misspelt key), and a nested section that is not an object. The values' types
 * and ranges are createMarketParams's to check, so that every bad field is named at once.
 */
function shapeIssues (init: Record<string, unknown>, defaults: object, path: string[]): z.core.$ZodRawIssue[] {
  const known = defaults as Record<string, unknown>
  const issues: z.core.$ZodRawIssue[] = []
  const unknown = Object.keys(init).filter((key) => !(key in known))
  if (unknown.length > 0) issues.push({ code: 'unrecognized_keys', keys: unknown, path, input: init })
  for (const [key, value] of Object.entries(init)) {
    const nested = known[key]
    if (typeof nested !== 'object' || nested === null || value === undefined) continue
    if (typeof value !== 'object' || value === null || Array.isArray(value)) issues.push({ code: 'custom', message: `expected an object, got ${JSON.stringify(value)}`, path: [...path, key], input: value })
    else issues.push(...shapeIssues(value as Record<string, unknown>, nested, [...path, key]))
  }
  return issues
}

/** `init` without the keys `defaults` lacks, at every level (what is left goes to createMarketParams). */
function knownOnly (init: Record<string, unknown>, defaults: object): Record<string, unknown> {
  const known = defaults as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(init)) {
    if (!(key in known)) continue
    const nested = known[key]
    out[key] = typeof nested === 'object' && nested !== null && typeof value === 'object' && value !== null ? knownOnly(value as Record<string, unknown>, nested) : value
  }
  return out
}

/**
 * The `market` section: overrides of defaultMarketParams (protocol/market/params.ts). Every problem
 * is reported at once: unknown keys, sections that are not objects, and every value createMarketParams
 * finds out of range or of the wrong type, each as an issue at `market.<field>`. Parsed, it is the
 * full MarketParams.
 */
const marketSection = z.record(z.string(), z.unknown()).transform((init, ctx) => {
  const issues = shapeIssues(init, defaultMarketParams, [])
  let params: MarketParams | undefined
  try {
    params = createMarketParams(knownOnly(init, defaultMarketParams) as MarketParamsInit)
  } catch (err) {
    if (!(err instanceof InvalidMarketParamsError)) throw err
    for (const p of err.problems) issues.push({ code: 'custom', message: p.message, path: p.field.split('.'), input: init })
  }
  for (const issue of issues) ctx.issues.push(issue)
  return issues.length > 0 || params === undefined ? z.NEVER : params
})

/**
 * `log.level`: a level, or per-component levels (node/log-levels.ts). Kept as the string the user wrote,
 * so a resolved config written back (gpumesh init) reads the same; a bad spec is an issue naming its entry.
 */
const logLevelSpec = z.string().superRefine((text, ctx) => {
  try {
    parseLogLevelSpec(text)
  } catch (err) {
    if (!(err instanceof LogLevelSpecError)) throw err
    ctx.addIssue({ code: 'custom', message: err.message, input: text })
  }
})

export const configSchema = z.strictObject({
  /** Multiaddrs to listen on. Port 0 picks a free port. */
  listen: z.array(multiaddrString).default(['/ip4/0.0.0.0/tcp/0', '/ip4/0.0.0.0/tcp/0/ws']),
  /** Addresses to tell peers instead of the listen addresses (public IP, DNS name). */
  announce: z.array(multiaddrString).default([]),
  /** Bootstrap peers, merged with the community list unless communityBootstrap is false. */
  bootstrap: z.array(peerMultiaddr).default([]),
  communityBootstrap: z.boolean().default(true),
  connections: z.strictObject({
    max: z.int().min(1).max(100_000).default(300),
    /** Inbound connections per second from one IP before refusing. */
    inboundPerSecond: z.int().min(1).max(100_000).default(5),
    maxPendingInbound: z.int().min(1).max(100_000).default(10),
    /** Multiaddr prefixes exempt from the limits (e.g. /ip4/127.0.0.1 for a local test network). */
    allow: z.array(multiaddrString).default([])
  }).prefault({}),
  dht: z.strictObject({
    /** server answers DHT queries (reachable nodes), client only asks. */
    mode: z.enum(['server', 'client']).default('server'),
    /** Concurrent requests per lookup (kad-dht's default of 10 floods small networks). */
    alpha: z.int().min(1).max(20).default(3),
    /** Disjoint lookup paths (S/Kademlia): more resist eclipse attacks, each costs a lookup. */
    disjointPaths: z.int().min(1).max(20).default(2),
    /**
     * Capability keys this node provides at once (each a DHT walk plus ADD_PROVIDER to k peers). A node
     * on its own machine can run several; many nodes sharing one CPU (an in-process test network) must
     * not, or every walk outlasts its timeout and the retries never finish (bench/dht.ts).
     */
    provideConcurrency: z.int().min(1).max(16).default(PROVIDE_CONCURRENCY),
    /**
     * Kademlia's k (kad-dht's kBucketSize, DHT_K): bucket size, how many closest peers get a provider
     * record, and where kad-dht's provider lookup stops (discovery continues past it, §7.4c). Leave it at
     * 20 on a real network; small test networks lower it to exercise lookups past k.
     */
    k: z.int().min(1).max(100).default(DHT_K),
    /** Keep private and loopback addresses in DHT records (local and LAN networks). */
    privateAddresses: z.boolean().default(true),
    /** How long provider records live on other peers. */
    recordValidityMs: z.int().min(MINUTE_MS).default(6 * HOUR_MS),
    /** Re-provide this long before records expire. */
    reprovideThresholdMs: z.int().min(10 * SECOND_MS).default(2 * HOUR_MS),
    reprovideCheckMs: z.int().min(SECOND_MS).default(10 * MINUTE_MS)
  }).prefault({}),
  /** NAT traversal (node/services/reachability.ts, protocol/nat/reachability.ts). */
  nat: z.strictObject({
    /**
     * auto: AutoNAT and the node's addresses decide; a node found behind NAT reserves a slot on a relay
     * (the bootstrap peers) and announces the relay address. public / private: the owner says so.
     */
    reachability: z.enum(NAT_MODES).default('auto'),
    /** Upgrade relayed connections to direct ones with DCUtR (hole punching). */
    holePunch: z.boolean().default(true),
    /** How long a public address may stay unverified by AutoNAT before the node counts as behind NAT. */
    verifyGraceMs: z.int().min(0).default(NAT_VERIFY_GRACE_MS),
    /** How long a node holding relay reservations must be public without a break before it releases them. */
    relayReleaseAfterMs: z.int().min(0).default(NAT_RELAY_RELEASE_AFTER_MS)
  }).prefault({}),
  gossip: z.strictObject({
    /**
     * Drop gossipsub's IP-colocation penalty. It is a Sybil defence, but it stops a mesh from forming
     * when more than a few peers share one IP (a local test network, a farm behind one NAT).
     */
    allowColocation: z.boolean().default(false)
  }).prefault({}),
  metrics: z.strictObject({
    /**
     * libp2p's own metrics (connections, streams, bytes per protocol, gossipsub mesh and scores, DHT
     * queries) in the same registry as gpumesh's, served at /metrics (@libp2p/prometheus-metrics).
     * They wrap every stream's send and message dispatch; in-process test networks turn them off.
     */
    libp2p: z.boolean().default(true)
  }).prefault({}),
  api: z.strictObject({
    /** The local API listens on loopback only. */
    host: z.enum(['127.0.0.1', '::1']).default('127.0.0.1'),
    port: z.int().min(0).max(65_535).default(0)
  }).prefault({}),
  log: z.strictObject({
    /** e.g. info, or info,libp2p:kad-dht=debug,gpumesh:market=trace (node/log-levels.ts) */
    level: logLevelSpec.default(DEFAULT_LOG_LEVEL),
    /** auto: pretty on a terminal, JSON lines otherwise. */
    format: z.enum(['auto', 'json', 'pretty']).default('auto')
  }).prefault({}),
  provider: z.strictObject({
    /** Announce and serve a capability ad. */
    sell: z.boolean().default(true),
    region: regionSlug.default('local'),
    country: countryCode.optional(),
    /** Run nvidia-smi at start. Detected and declared GPUs are both offered. */
    detectGpus: z.boolean().default(true),
    gpus: z.array(declaredGpu).max(MAX_JOB_GPUS).default([])
      .refine((gpus) => gpus.reduce((n, g) => n + g.count, 0) <= MAX_JOB_GPUS, { message: `at most ${MAX_JOB_GPUS} GPUs in all (a capability ad holds ${MAX_JOB_GPUS})` }),
    /**
     * VRAM in MiB of detected GPUs whose driver reports none (unified-memory parts: GB10, Jetson), by nvidia-smi
     * index or UUID, e.g. {"0": 122880}. Without it such a GPU sells with unknown VRAM: no VRAM bucket.
     */
    gpuVramMiB: z.record(gpuKey, z.int().min(1).max(4_194_304)).default({}),
    /** Credits per GPU-hour (1 credit ≈ 1 USD of compute). */
    priceFloor: credits.default(2),
    peak: z.strictObject({ price: credits, windows: windowList.min(1) }).optional(),
    availability: z.strictObject({
      timeZone: timeZone.default('UTC'),
      /** e.g. ["Mon-Fri 18:00-08:00", "Sat-Sun 00:00-24:00"] */
      windows: windowList.default(['Mon-Sun 00:00-24:00'])
    }).prefault({}),
    workloads: z.array(z.enum(['process', 'docker', 'wasm'])).min(1).default(['process', 'wasm']),
    limits: z.strictObject({ maxPowerW: z.int().positive().optional(), maxTempC: z.int().positive().optional() }).prefault({}),
    /** Lifetime of each signed capability ad; it is re-signed before it expires. */
    adTtlMs: z.int().min(MINUTE_MS).max(48 * HOUR_MS).default(6 * HOUR_MS),
    /**
     * 0..1: job requests from a requester scoring below this in this node's view of requesters get no
     * bid (protocol/market/requester-view.ts). Default 0.45, below a stranger's 0.5: a new requester is
     * served; one that stopped paying this node once (0.33), or was reported by a trusted peer (0.4), is not.
     * 0 serves everyone.
     */
    minRequesterTrust: z.number().min(0).max(1).default(DEFAULT_MIN_REQUESTER_TRUST),
    /**
     * MiB of job inputs fetched from requesters kept after their jobs (by CID, least recently used
     * evicted first; node/blobs/input-cache.ts), so a later job with the same input is not fetched again
     * and the bid says so (protocol/README §5.4 `cached`). 0 keeps none once its job is done.
     */
    inputCacheMiB: z.int().min(0).max(16 * 1024 * 1024).default(DEFAULT_INPUT_CACHE_MIB)
  }).prefault({}),
  /** The market's parameters (lease, billing interval, damping, scoring…): any subset of MarketParams. */
  market: marketSection.prefault({}),
  /**
   * The daemon's own probes of the providers it hears of (node/trust/prober.ts, protocol/trust/probe-schedule.ts):
   * a known provider at most once per intervalMs (plus up to jitter × intervalMs), all of them together at most
   * perHour an hour in bursts of burst.
   */
  probes: z.strictObject({
    enabled: z.boolean().default(true),
    intervalMs: z.int().min(PROBE_INTERVAL_MIN_MS).max(30 * 24 * HOUR_MS).default(PROBE_INTERVAL_MS),
    jitter: z.number().min(0).max(1).default(PROBE_JITTER),
    perHour: z.int().min(1).max(3600).default(PROBE_PER_HOUR),
    burst: z.int().min(1).max(100).default(PROBE_BURST)
  }).prefault({}),
  verification: z.strictObject({
    /**
     * What makes the replicas of a `replicate k` job independent (protocol/README.md §5.9): subnet (default) —
     * no two share an IPv4 /16 or IPv6 /48 (or a trust cluster); peer — distinct peer ids are enough. peer is
     * the owner's explicit opt-out for providers that share one address range (one host, one NAT): it gives up
     * the defence against one operator running many identities, and the daemon warns at start.
     */
    replicaIndependence: z.enum(['subnet', 'peer']).default('subnet'),
    /**
     * The proof audit (protocol/README.md §5.9): re-execute an agreement of deterministic replicas none of whose
     * providers is proven to this node. false is the owner's opt-out: strangers that agree are paid on it.
     */
    auditUnproven: z.boolean().default(true),
    /** The agreement audit: re-execute this share (per mille) of deterministic replicated jobs whose replicas agree. */
    agreementAuditPerMille: z.int().min(0).max(1000).default(0)
  }).prefault({}),
  executors: z.strictObject({
    process: z.strictObject({
      /**
       * bwrap (default): buyers' process jobs run in a bubblewrap sandbox, and are refused when bubblewrap
       * cannot run. none: the owner's explicit opt-out — jobs run unsandboxed, and the ad says so.
       */
      sandbox: processSandbox.default('bwrap')
    }).prefault({})
  }).prefault({})
})

export type Config = z.infer<typeof configSchema>
export type ConfigInput = z.input<typeof configSchema>
export type DeclaredGpu = z.infer<typeof declaredGpuObject>
