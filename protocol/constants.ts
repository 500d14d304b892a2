/**
 * Every name on the wire in one place (DESIGN §3–§5): envelope domain, protocol ids, gossip topics,
 * capability keys for the DHT, and the defaults that bound message freshness. Change a value here and
 * the protocol version changes with it.
 */
import { cidOfRaw, encodeVarint, sha256, type CID } from '../crypto/index.js'

/** Version of every payload schema (`v` field). */
export const PROTOCOL_VERSION = 1

/** Signature domain of every gpumesh envelope (libp2p RFC 0002). */
export const ENVELOPE_DOMAIN = 'gpumesh'

export const PROTOCOLS = {
  /** Private Kademlia DHT, so the network never mixes with IPFS. */
  kad: '/gpumesh/kad/1.0.0',
  /** Request → the provider's signed capability ad. */
  capability: '/gpumesh/capability/1.0.0',
  /** Award → accept → inputs → heartbeats/status → outputs + receipt. */
  exec: '/gpumesh/exec/1.0.0',
  /** Blobs by CID, chunked, size-capped, hash-checked. */
  blob: '/gpumesh/blob/1.0.0',
  /** Ping, then a timed matrix product checked with Freivalds' algorithm (protocol/README.md "Attestations and probes"). */
  probe: '/gpumesh/probe/1.0.0',
  /** A subject's evidence, or the fraud proofs of the providers a node convicted (protocol/README.md §7.11). */
  history: '/gpumesh/history/1.0.0'
} as const

export const TOPIC_PREFIX = 'gpumesh/2'
/** Jobs without a region go here. */
export const GLOBAL_MARKET = 'global'
/** Receipts, attestations, probe results, failure reports and fraud proofs. */
export const EVIDENCE_TOPIC = `${TOPIC_PREFIX}/evidence`

/** Gossip topic carrying jobs, bids and awards for `region` (top-level region, or `global`). */
export function marketTopic (region: string = GLOBAL_MARKET): string {
  return `${TOPIC_PREFIX}/market/${region}`
}

/**
 * The gossipsub message id of a message gossiped on `topic` (protocol/README.md §7.6): the SHA-256 digest
 * (32 bytes) of varint(byte length of the UTF-8 topic) ‖ topic ‖ data, where data is the signed envelope's
 * bytes. Gossip runs with gossipsub's `StrictNoSign` policy (no `from`, `seqno`, `signature` or `key` in a
 * message), because every message is already a signed envelope: gossipsub's own signature was a second
 * Ed25519 signature made and checked on every copy. The id is content addressed, so one envelope relayed by
 * many peers has one id everywhere; the topic is in it because the same envelope goes out on several topics
 * (a job on its region's topic and on `global`), and gossipsub's seen cache, which ignores topics, would
 * otherwise refuse the second publish as a duplicate.
 */
export function gossipMessageId (topic: string, data: Uint8Array): Uint8Array {
  const name = new TextEncoder().encode(topic)
  const prefix = encodeVarint(name.byteLength)
  const bytes = new Uint8Array(prefix.byteLength + name.byteLength + data.byteLength)
  bytes.set(prefix, 0)
  bytes.set(name, prefix.byteLength)
  bytes.set(data, prefix.byteLength + name.byteLength)
  return sha256(bytes)
}

/** Clock skew tolerated between peers before a message counts as future-dated. */
export const DEFAULT_CLOCK_SKEW_MS = 30_000

/** Hard upper bound on any envelope, checked before parsing. Each kind has a smaller limit. */
export const MAX_ENVELOPE_BYTES = 256 * 1024

// ---------------------------------------------------------------------------------------------
// Capability keys (DESIGN §4)
// ---------------------------------------------------------------------------------------------

/** Prefix hashed with every capability key: cid = CIDv1(raw, sha2-256(prefix + key)). */
export const CAPABILITY_KEY_PREFIX = 'gpumesh/cap/1/'

/** Per-GPU VRAM buckets in GB. A provider announces every bucket its GPUs meet. */
export const VRAM_BUCKETS_GB = [8, 12, 16, 24, 32, 40, 48, 80, 96, 141, 192] as const

/**
 * Drivers report usable memory in MiB, below the marketed size (ECC and firmware reservations): an
 * "L40S 48GB" reports 46,068 MiB, an "H100 80GB" 81,559 MiB. A GPU reporting at least
 * floor(G × 1024 × 0.92) MiB counts as a G GB card for every bucket G (see nominalVramGB).
 */
export const VRAM_NOMINAL_RATIO = 0.92

/**
 * The nominal (marketed) per-GPU VRAM of a GPU reporting `vramMiB`, in whole GB: the larger of the largest
 * bucket it meets by the 0.92 rule and its reported size rounded to whole GiB. H100 (81,559 MiB) → 80,
 * L40S (46,068) → 48, a 20 GB card (20,475) → 20. 0 MiB — the driver reports no size (unified-memory
 * parts) — is 0: unknown VRAM meets no requirement and claims no bucket.
 */
export function nominalVramGB (vramMiB: number): number {
  if (!(vramMiB > 0)) return 0
  let bucket = 0
  for (const gb of VRAM_BUCKETS_GB) if (vramMiB >= Math.floor(gb * 1024 * VRAM_NOMINAL_RATIO)) bucket = gb
  return Math.max(bucket, Math.round(vramMiB / 1024))
}

/** True when a GPU reporting `vramMiB` counts as having `gb` GB: its nominal size is at least `gb`. */
export function vramMeetsGB (vramMiB: number, gb: number): boolean {
  return nominalVramGB(vramMiB) >= gb
}

/** `80 GB (79.6 GiB reported)`, or `VRAM unknown` for 0 MiB: the nominal size the filters use, then the driver's. */
export function formatVram (vramMiB: number): string {
  if (!(vramMiB > 0)) return 'VRAM unknown'
  return `${nominalVramGB(vramMiB)} GB (${(vramMiB / 1024).toFixed(1)} GiB reported)`
}

/** Every VRAM bucket met by a GPU reporting `vramMiB`, smallest first. */
export function vramBuckets (vramMiB: number): number[] {
  return VRAM_BUCKETS_GB.filter((gb) => vramMeetsGB(vramMiB, gb))
}

/**
 * The VRAM bucket to look up on the DHT for "at least `gb` GB": the largest bucket at or below `gb`.
 * Its providers are a superset of the answer (a 64 GB card announces 48, and meets "≥ 50"), so the
 * caller filters the fetched ads by their real VRAM. Undefined below the smallest bucket: any GPU fits.
 */
export function vramLookupBucket (gb: number): number | undefined {
  let found: number | undefined
  for (const bucket of VRAM_BUCKETS_GB) if (bucket <= gb) found = bucket
  return found
}

/** `NVIDIA H100 80GB HBM3` → `nvidia-h100-80gb-hbm3`. */
export function modelSlug (name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')
}

/**
 * The rule for a job's `resources.models` (protocol/README.md §7.4a): a GPU whose model slug is `model`
 * is one of the wanted `family` (a slug) when every `-`-separated word of `family` is a whole word of
 * `model`, in any order. The exact slug always matches; `h100` matches `nvidia-h100-80gb-hbm3` and
 * `nvidia-h100-nvl`; `a100-80gb` matches `nvidia-a100-sxm4-80gb` but not `nvidia-a100-sxm4-40gb`. A word
 * never matches part of a word: `a10` is not `a100`, `l4` is not `l40s`. An empty slug matches nothing.
 */
export function modelInFamily (model: string, family: string): boolean {
  if (family === '') return false
  if (model === family) return true
  // every bid decision and screening runs this: word by word on the strings, with no split or Set
  for (let from = 0; ;) {
    const dash = family.indexOf('-', from)
    const to = dash < 0 ? family.length : dash
    if (!hasWord(model, family, from, to)) return false
    if (dash < 0) return true
    from = dash + 1
  }
}

/** True when `family.slice(from, to)` is one of `model`'s `-`-separated words (an empty word included). */
function hasWord (model: string, family: string, from: number, to: number): boolean {
  const length = to - from
  for (let start = 0; ;) {
    const dash = model.indexOf('-', start)
    const end = dash < 0 ? model.length : dash
    if (end - start === length && sameChars(model, start, family, from, length)) return true
    if (dash < 0) return false
    start = dash + 1
  }
}

function sameChars (a: string, at: number, b: string, bt: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (a.charCodeAt(at + i) !== b.charCodeAt(bt + i)) return false
  return true
}

/**
 * Regions are hierarchical slugs: `eu-west` lies inside `eu`. `regionAncestry('eu-west-2')` →
 * [`eu-west-2`, `eu-west`, `eu`].
 */
export function regionAncestry (region: string): string[] {
  const parts = region.split('-')
  return parts.map((_, i) => parts.slice(0, parts.length - i).join('-'))
}

/** True when `region` equals `wanted` or lies inside it (`eu-west` is in `eu`). */
export function regionWithin (region: string, wanted: string): boolean {
  // no `${wanted}-` string built: this runs for every provider a job or bid is checked against
  return region === wanted || (region.length > wanted.length && region.charCodeAt(wanted.length) === 45 && region.startsWith(wanted))
}

export interface CapabilitySummary {
  gpus: ReadonlyArray<{ model: string, vramMiB: number }>
  region: string
}

/**
 * The capability keys a provider announces (DESIGN §4): `gpu/<model>`, `vram/<GB>` for every bucket
 * met, `region/<r>` for its region and each enclosing region, and `market/<top>/<GB>` for its top-level
 * region and every bucket met, so "≥ 40 GB in eu" is one lookup of `market/eu/40` (sub-regions are
 * filtered from the ads; announcing every level would double the keys). Sorted, de-duplicated.
 */
export function capabilityKeys (summary: CapabilitySummary): string[] {
  const keys = new Set<string>()
  const regions = regionAncestry(summary.region)
  const top = regions.at(-1) as string
  for (const gpu of summary.gpus) {
    keys.add(`gpu/${gpu.model}`)
    for (const gb of vramBuckets(gpu.vramMiB)) {
      keys.add(`vram/${gb}`)
      keys.add(`market/${top}/${gb}`)
    }
  }
  for (const region of regions) keys.add(`region/${region}`)
  return [...keys].sort()
}

/** The top-level region of `region` (`eu-west-2` → `eu`). */
export function topRegion (region: string): string {
  return region.split('-')[0] as string
}

/** The DHT key (a CID to `provide`) for one capability key. */
export function capabilityKeyCid (key: string): CID {
  return cidOfRaw(new TextEncoder().encode(CAPABILITY_KEY_PREFIX + key))
}
