/**
 * What CLI commands use to talk to a running daemon in the same data dir.
 */
import { readApiToken, readEndpoint } from './credentials.js'

/** True when a process with this pid exists (signal 0 checks without sending anything). */
function processAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export class DaemonUnavailableError extends Error {
  override readonly name = 'DaemonUnavailableError'
}

export class ApiRequestError extends Error {
  override readonly name = 'ApiRequestError'
  constructor (readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

export class ApiClient {
  /** `role`: what api.json says the daemon runs as (`node` or `bootstrap`), when known. */
  constructor (readonly url: string, private readonly token: string, readonly role?: string) {}

  static async fromDataDir (dataDir: string): Promise<ApiClient> {
    const endpoint = await readEndpoint(dataDir)
    const token = await readApiToken(dataDir)
    if (endpoint === undefined || token === undefined || !processAlive(endpoint.pid)) {
      // a daemon that died without cleaning up leaves api.json behind: never send the token to
      // whatever listens on its old port now
      throw new DaemonUnavailableError(`no running gpumesh daemon for data dir ${dataDir} (start one with \`gpumesh node start\` or \`gpumesh bootstrap\`)`)
    }
    return new ApiClient(endpoint.url, token, endpoint.role)
  }

  async get<T> (path: string, query: Record<string, string | number | undefined> = {}, timeoutMs = 30_000): Promise<T> {
    return await this.request<T>('GET', path, query, undefined, timeoutMs)
  }

  /** POST `body` as JSON (no body when undefined). */
  async post<T> (path: string, query: Record<string, string | number | undefined> = {}, body?: unknown, timeoutMs = 30_000): Promise<T> {
    return await this.request<T>('POST', path, query, body, timeoutMs)
  }

  private async request<T> (method: 'GET' | 'POST', path: string, query: Record<string, string | number | undefined>, body: unknown, timeoutMs: number): Promise<T> {
    const url = new URL(path, this.url)
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v))
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    let res: Response
    try {
      res = await fetch(url, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: AbortSignal.timeout(timeoutMs) })
    } catch (err) {
      throw new DaemonUnavailableError(`the daemon at ${this.url} does not answer (${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}); is it running?`)
    }
    const text = await res.text()
    if (!res.ok) {
      let code = 'HTTP_ERROR'
      let message = text
      try {
        const parsed = JSON.parse(text) as { error?: { code?: string, message?: string } }
        code = parsed.error?.code ?? code
        message = parsed.error?.message ?? message
      } catch {}
      throw new ApiRequestError(res.status, code, message)
    }
    return (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) as T : text as T
  }
}
