/**
 * The local HTTP API (DESIGN §9): bound to loopback, every request needs `Authorization: Bearer
 * <token>`. Routes return JSON; /metrics returns Prometheus text.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import { tokensEqual } from './credentials.js'

export class ApiError extends Error {
  override readonly name = 'ApiError'
  constructor (readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

export type Route = (query: URLSearchParams, signal: AbortSignal) => Promise<unknown>

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

function send (res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' })
  res.end(body)
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
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let route = 'unauthorized'
    const done = (status: number): void => { metrics.apiRequests.inc({ route, status: String(status) }) }
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
    if (req.method !== 'GET') {
      send(res, 405, JSON.stringify({ error: { code: 'METHOD_NOT_ALLOWED', message: 'only GET' } }))
      done(405)
      return
    }
    if (route === '/metrics') {
      send(res, 200, await metrics.registry.metrics(), metrics.registry.contentType)
      done(200)
      return
    }
    const handler = options.routes[route]
    if (handler === undefined) {
      route = 'unknown'
      send(res, 404, JSON.stringify({ error: { code: 'NOT_FOUND', message: `no route ${url.pathname}` } }))
      done(404)
      return
    }
    const controller = new AbortController()
    res.on('close', () => { controller.abort() })
    try {
      const body = await handler(url.searchParams, controller.signal)
      send(res, 200, JSON.stringify(body, jsonReplacer))
      done(200)
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500
      const code = err instanceof ApiError ? err.code : 'INTERNAL'
      if (status === 500) log.error('API request failed', { route, error: err })
      send(res, status, JSON.stringify({ error: { code, message: (err as Error).message } }))
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
