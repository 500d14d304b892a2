/**
 * The output manifest a receipt points to (protocol/README §5.7): a DAG-CBOR document
 * `{ files: [{ path, size, cid }] }` listing the job's outputs that were produced, in the job's
 * declared order, each a raw blob. The provider builds it; the requester checks it against the job
 * before fetching anything it names.
 */
import { CID, RAW_CODEC, SHA2_256 } from '../../crypto/index.js'

export interface OutputManifest {
  files: Array<{ path: string, size: number, cid: CID }>
}

export class ManifestError extends Error {
  override readonly name = 'ManifestError'
}

/** The manifest for `files` (path, size and CID of each produced output). */
export function buildManifest (files: ReadonlyArray<{ path: string, size: number, cid: CID }>): OutputManifest {
  return { files: files.map((f) => ({ path: f.path, size: f.size, cid: f.cid })) }
}

/**
 * `value` (decoded DAG-CBOR) as a manifest in the one form every implementation builds (protocol/README.md
 * §7.8 "Output manifest"): closed maps, files among the `declared` outputs, once each and in their declared
 * order, with raw sha2-256 CIDs and safe sizes. Replicas and fraud proofs compare manifest CIDs, so a
 * manifest in another order or with extra keys names the same files under another CID: refused here, it
 * is the provider's fault (`output-mismatch`) rather than a replica disagreement. Throws ManifestError
 * naming the first problem.
 */
export function checkManifest (value: unknown, declared: readonly string[]): OutputManifest {
  const files = (value as { files?: unknown } | null)?.files
  if (value === null || typeof value !== 'object' || Object.keys(value).length !== 1 || !Array.isArray(files)) {
    throw new ManifestError('the output manifest is not { files: [...] }')
  }
  // each path's place in the job's outputs (its first, if the job lists it twice)
  const rank = new Map<string, number>()
  for (const path of declared) if (!rank.has(path)) rank.set(path, rank.size)
  const seen = new Set<string>()
  let last = -1
  return {
    files: files.map((f: unknown, i) => {
      if (f === null || typeof f !== 'object' || Array.isArray(f) || CID.asCID(f) != null) throw new ManifestError(`manifest file ${i} is not a map`)
      const extra = Object.keys(f).filter((k) => k !== 'path' && k !== 'size' && k !== 'cid')
      if (extra.length > 0) throw new ManifestError(`manifest file ${i} has unknown keys: ${extra.join(', ')}`)
      const { path, size, cid } = f as { path?: unknown, size?: unknown, cid?: unknown }
      const c = CID.asCID(cid)
      const place = typeof path === 'string' ? rank.get(path) : undefined
      if (typeof path !== 'string' || place === undefined) throw new ManifestError(`manifest file ${i}: ${String(path)} is not a declared output`)
      if (seen.has(path)) throw new ManifestError(`manifest lists ${path} twice`)
      if (place < last) throw new ManifestError(`manifest lists ${path} out of the job's declared order`)
      last = place
      seen.add(path)
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new ManifestError(`manifest file ${path}: bad size`)
      if (c == null || c.version !== 1 || c.code !== RAW_CODEC || c.multihash.code !== SHA2_256) throw new ManifestError(`manifest file ${path}: not a raw sha2-256 CID`)
      return { path, size, cid: c }
    })
  }
}
