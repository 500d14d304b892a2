/**
 * The local HTTP API (DESIGN §9): bound to loopback, every request needs `Authorization: Bearer
 * <token>`. Routes return JSON; /metrics returns Prometheus text. A route's key is `METHOD /path`
 * (`POST /v1/jobs`) or a plain `/path`, which means GET; a request may carry a JSON body of at most
 * 1 MiB (`content-type: application/json`). The dashboard's static files (dashboard-assets.ts) are the
 * one exception to the token: they hold no data. Every answer carries a strict Content-Security-Policy.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import { tokensEqual } from './credentials.js'
import { SECURITY_HEADERS, loadDashboard } from './dashboard-assets.js'

export class ApiError extends Error {
  override readonly name = 'ApiError'
  constructor (readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

/** `body` is the parsed JSON body, undefined when the request has none. */
export type Route = (query: URLSearchParams, signal: AbortSignal, body?: unknown) => Promise<unknown>

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 1024 * 1024

export interface ApiServerOptions {
  host: string
  port: number
  token: string
  routes: Record<string, Route>
  metrics: NodeMetrics
  log: Logger
}

export interface ApiServer {
  readonly url: string
  close (): Promise<void>
}

function send (res: ServerResponse, status: number, body: string | Buffer, type = 'application/json', headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...SECURITY_HEADERS, ...headers })
  res.end(body)
}

/** The methods `path` is served with (`/metrics`: GET). */
function methodsOf (routes: Record<string, Route>, path: string): string[] {
  const methods = Object.keys(routes).flatMap((key) => key === path ? ['GET'] : key.endsWith(` ${path}`) ? [key.slice(0, -path.length - 1)] : [])
  return path === '/metrics' ? [...methods, 'GET'] : methods
}

/** The request's JSON body, undefined when it has none; throws ApiError (413, 415, 400) otherwise. */
async function readJsonBody (req: IncomingMessage): Promise<unknown> {
  const length = req.headers['content-length']
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return undefined
  if (Number(length) > MAX_BODY_BYTES) throw new ApiError(413, 'BODY_TOO_LARGE', `the body may have at most ${MAX_BODY_BYTES} bytes`)
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/json') throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'the body must be application/json')
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength
      if (size <= MAX_BODY_BYTES) { chunks.push(chunk); return }
      // stop keeping the bytes but let the rest drain: the 413 closes the connection
      req.off('data', onData)
      req.resume()
      reject(new ApiError(413, 'BODY_TOO_LARGE', `the body may have at most ${MAX_BODY_BYTES} bytes`))
    }
    req.on('data', onData)
    req.once('end', () => { resolve(Buffer.concat(chunks)) })
    req.once('error', reject)
  })
  if (bytes.byteLength === 0) return undefined
  try {
    return JSON.parse(bytes.toString('utf8'))
  } catch (err) {
    throw new ApiError(400, 'BAD_JSON', `the body is not valid JSON: ${(err as Error).message}`)
  }
}

/** Bytes as base64, CIDs as strings (read from the holder: JSON.stringify calls CID.toJSON first). */
function jsonReplacer (this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key]
  if (raw instanceof Uint8Array) return Buffer.from(raw).toString('base64')
  if (raw !== null && typeof raw === 'object' && (raw as { asCID?: unknown }).asCID === raw) return String(raw)
  return value
}

export async function startApiServer (options: ApiServerOptions): Promise<ApiServer> {
  const { metrics, log } = options
  const dashboard = await loadDashboard()
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let route = 'unauthorized'
    const done = (status: number): void => { metrics.apiRequests.inc({ route, status: String(status) }) }
    const asset = req.method === 'GET' ? dashboard.get((req.url ?? '').split(/[?#]/)[0] ?? '') : undefined
    if (asset !== undefined) {
      route = '/dashboard'
      send(res, 200, asset.body, asset.type)
      done(200)
      return
    }
    const auth = req.headers.authorization ?? ''
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : ''
    if (!tokensEqual(token, options.token)) {
      send(res, 401, JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'missing or wrong bearer token (see <dataDir>/api.token)' } }))
      done(401)
      return
    }
    let url: URL
    try {
      url = new URL(req.url ?? '/', 'http://localhost')
    } catch {
      route = 'unknown'
      send(res, 400, JSON.stringify({ error: { code: 'BAD_REQUEST', message: 'unreadable request path' } }))
      done(400)
      return
    }
    route = url.pathname
    const method = req.method ?? 'GET'
    const methods = methodsOf(options.routes, route)
    if (methods.length === 0) {
      route = 'unknown'
      send(res, 404, JSON.stringify({ error: { code: 'NOT_FOUND', message: `no route ${url.pathname}` } }))
      done(404)
      return
    }
    if (!methods.includes(method)) {
      send(res, 405, JSON.stringify({ error: { code: 'METHOD_NOT_ALLOWED', message: `${url.pathname} takes ${methods.join(', ')}` } }), 'application/json', { allow: methods.join(', ') })
      done(405)
      return
    }
    if (route === '/metrics') {
      send(res, 200, await metrics.registry.metrics(), metrics.registry.contentType)
      done(200)
      return
    }
    const key = Object.hasOwn(options.routes, `${method} ${route}`) ? `${method} ${route}` : route
    const handler = options.routes[key] as Route
    const controller = new AbortController()
    res.on('close', () => { controller.abort() })
    try {
      const result = await handler(url.searchParams, controller.signal, await readJsonBody(req))
      send(res, 200, JSON.stringify(result, jsonReplacer))
      done(200)
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500
      const code = err instanceof ApiError ? err.code : 'INTERNAL'
      if (status === 500) log.error('API request failed', { route, error: err })
      // an oversized body is left unread: close the connection rather than read the rest
      send(res, status, JSON.stringify({ error: { code, message: (err as Error).message } }), 'application/json', status === 413 ? { connection: 'close' } : {})
      done(status)
    }
  }
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error('API request failed', { error: err })
      if (!res.headersSent) send(res, 500, JSON.stringify({ error: { code: 'INTERNAL', message: 'internal error' } }))
      else res.destroy()
    })
  })
  server.headersTimeout = 10_000
  server.requestTimeout = 60_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => { server.off('error', reject); resolve() })
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
    }
  }
}
