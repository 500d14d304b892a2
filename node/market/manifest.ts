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
 * `value` (decoded DAG-CBOR) as a manifest whose files are among `declared` outputs, once each, with
 * raw sha2-256 CIDs and safe sizes. Throws ManifestError naming the first problem.
 */
export function checkManifest (value: unknown, declared: readonly string[]): OutputManifest {
  const files = (value as { files?: unknown } | null)?.files
  if (value === null || typeof value !== 'object' || Object.keys(value).length !== 1 || !Array.isArray(files)) {
    throw new ManifestError('the output manifest is not { files: [...] }')
  }
  const allowed = new Set(declared)
  const seen = new Set<string>()
  return {
    files: files.map((f: unknown, i) => {
      const { path, size, cid } = (f ?? {}) as { path?: unknown, size?: unknown, cid?: unknown }
      const c = CID.asCID(cid)
      if (typeof path !== 'string' || !allowed.has(path)) throw new ManifestError(`manifest file ${i}: ${String(path)} is not a declared output`)
      if (seen.has(path)) throw new ManifestError(`manifest lists ${path} twice`)
      seen.add(path)
      if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new ManifestError(`manifest file ${path}: bad size`)
      if (c == null || c.version !== 1 || c.code !== RAW_CODEC || c.multihash.code !== SHA2_256) throw new ManifestError(`manifest file ${path}: not a raw sha2-256 CID`)
      return { path, size, cid: c }
    })
  }
}
