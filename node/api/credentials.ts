/**
 * How CLI commands find and authenticate to a running daemon: `<dataDir>/api.token` (a random bearer
 * token, mode 0600, kept across restarts) and `<dataDir>/api.json` (the daemon's URL and pid, written
 * at start and removed at stop).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { chmod, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export const TOKEN_FILE = 'api.token'
export const ENDPOINT_FILE = 'api.json'

export interface Endpoint { url: string, pid: number, peerId: string, role: string }

/** Read the API token, creating it on first use. */
export async function ensureApiToken (dataDir: string): Promise<string> {
  const path = join(dataDir, TOKEN_FILE)
  try {
    const token = (await readFile(path, 'utf8')).trim()
    if (/^[0-9a-f]{64}$/.test(token)) {
      // readable by others means usable by others: tighten it (the token is only ever ours)
      if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) await chmod(path, 0o600)
      return token
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const token = randomBytes(32).toString('hex')
  await writeFile(path, `${token}\n`, { mode: 0o600 })
  return token
}

export async function readApiToken (dataDir: string): Promise<string | undefined> {
  try {
    return (await readFile(join(dataDir, TOKEN_FILE), 'utf8')).trim()
  } catch {
    return undefined
  }
}

export function tokensEqual (a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.byteLength === y.byteLength && timingSafeEqual(x, y)
}

export async function writeEndpoint (dataDir: string, endpoint: Endpoint): Promise<void> {
  await writeFile(join(dataDir, ENDPOINT_FILE), `${JSON.stringify(endpoint)}\n`, { mode: 0o600 })
}

export async function readEndpoint (dataDir: string): Promise<Endpoint | undefined> {
  try {
    return JSON.parse(await readFile(join(dataDir, ENDPOINT_FILE), 'utf8')) as Endpoint
  } catch {
    return undefined
  }
}

export async function removeEndpoint (dataDir: string): Promise<void> {
  await rm(join(dataDir, ENDPOINT_FILE), { force: true })
}
