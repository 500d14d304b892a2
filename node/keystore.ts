/**
 * The identity key file: `<dataDir>/identity.key`, libp2p's protobuf private-key bytes, mode 0600.
 * A missing file can be created; a corrupt or too-open one is an error, never silently replaced,
 * because replacing it would change the node's peer id and orphan its reputation and ledger.
 */
import { constants } from 'node:fs'
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { Identity, InvalidKeyError, type Ed25519 } from '../crypto/index.js'
import { generateIdentity } from './random.js'

export type KeyFileErrorCode =
  | 'KEY_FILE_MISSING'
  | 'KEY_FILE_CORRUPT'
  | 'KEY_FILE_PERMISSIONS'
  | 'KEY_FILE_EXISTS'

/** The identity key file cannot be used. gpumesh never replaces a bad key file silently. */
export class KeyFileError extends Error {
  override readonly name = 'KeyFileError'
  constructor (readonly code: KeyFileErrorCode, readonly path: string, message: string) {
    super(`${message} (${path})`)
  }
}

export const IDENTITY_FILE = 'identity.key'
const KEY_FILE_MODE = 0o600

export function identityPath (dataDir: string): string {
  return join(dataDir, IDENTITY_FILE)
}

/** Load the identity in `dataDir`. Throws KeyFileError (MISSING, PERMISSIONS or CORRUPT). */
export async function loadIdentity (dataDir: string, ed25519?: Ed25519): Promise<Identity> {
  const path = identityPath(dataDir)
  let info
  try {
    info = await stat(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new KeyFileError('KEY_FILE_MISSING', path, 'no identity key; run `gpumesh init`')
    throw err
  }
  if (!info.isFile()) throw new KeyFileError('KEY_FILE_CORRUPT', path, 'identity key path is not a regular file')
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
    throw new KeyFileError('KEY_FILE_PERMISSIONS', path,
      `identity key is readable by others (mode ${(info.mode & 0o777).toString(8)}); run \`chmod 600\` on it`)
  }
  const bytes = await readFile(path)
  try {
    return Identity.fromProtobuf(new Uint8Array(bytes), ed25519)
  } catch (err) {
    if (err instanceof InvalidKeyError) throw new KeyFileError('KEY_FILE_CORRUPT', path, `identity key is corrupt: ${err.message}`)
    throw err
  }
}

/**
 * Write `identity` to `dataDir` with mode 0600, atomically (temp file + fsync + link).
 * Refuses to overwrite an existing key file (KEY_FILE_EXISTS).
 */
export async function saveIdentity (dataDir: string, identity: Identity): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  const path = identityPath(dataDir)
  const tmp = `${path}.${process.pid}.tmp`
  const handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, KEY_FILE_MODE)
  try {
    await handle.writeFile(identity.toProtobuf())
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    // link() fails with EEXIST instead of replacing: an atomic no-clobber publish of the new key
    await link(tmp, path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new KeyFileError('KEY_FILE_EXISTS', path, 'an identity key already exists; refusing to replace it')
    }
    throw err
  } finally {
    await unlink(tmp)
  }
  return path
}

/** Load the identity, or create and save one when the data dir has none. */
export async function loadOrCreateIdentity (dataDir: string, ed25519?: Ed25519): Promise<{ identity: Identity, created: boolean }> {
  try {
    return { identity: await loadIdentity(dataDir, ed25519), created: false }
  } catch (err) {
    if (!(err instanceof KeyFileError) || err.code !== 'KEY_FILE_MISSING') throw err
  }
  const identity = generateIdentity(ed25519)
  await saveIdentity(dataDir, identity)
  return { identity, created: true }
}
