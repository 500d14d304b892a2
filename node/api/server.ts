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

function jsonReplacer (_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64')
  if (value !== null && typeof value === 'object' && (value as { asCID?: unknown }).asCID === value) return String(value)
  return value
}

export async function startApiServer (options: ApiServerOptions): Promise<ApiServer> {
  const { metrics, log } = options
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    let route = url.pathname
    const done = (status: number): void => { metrics.apiRequests.inc({ route, status: String(status) }) }
    const auth = req.headers.authorization ?? ''
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : ''
    if (!tokensEqual(token, options.token)) {
      route = 'unauthorized'
      send(res, 401, JSON.stringify({ error: { code: 'UNAUTHORIZED', message: 'missing or wrong bearer token (see <dataDir>/api.token)' } }))
      done(401)
      return
    }
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
  const server: Server = createServer((req, res) => { void handle(req, res) })
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
