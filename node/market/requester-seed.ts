/**
 * The spotcheck seed (protocol/README.md §5.9): 32 secret bytes from the OS CSPRNG, kept at
 * `<dataDir>/spotcheck.seed` (mode 0600) so the draw stays the same across restarts; revealing the file
 * lets anyone recompute which jobs this node checked.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { SPOTCHECK_SEED_BYTES } from '../../protocol/trust/spotcheck.js'
import { randomNonce } from '../random.js'

export const SPOTCHECK_SEED_FILE = 'spotcheck.seed'

/** Read the seed, or create it when absent. Throws when the file exists with another length. */
export async function loadSpotcheckSeed (dataDir: string): Promise<Uint8Array> {
  const path = join(dataDir, SPOTCHECK_SEED_FILE)
  const existing = await readFile(path).catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return undefined; throw err })
  if (existing !== undefined) {
    if (existing.byteLength !== SPOTCHECK_SEED_BYTES) throw new Error(`${path}: expected ${SPOTCHECK_SEED_BYTES} bytes, found ${existing.byteLength}`)
    return new Uint8Array(existing)
  }
  const seed = randomNonce(SPOTCHECK_SEED_BYTES)
  await writeFile(path, seed, { mode: 0o600, flag: 'wx' })
  return seed
}
