/**
 * A delaying TCP proxy on loopback: every chunk, either way, is written on `delayMs` after it arrived,
 * chunks pipelined and in order (Node fires timers of equal delay in the order they were set), and an
 * end follows the data before it. So a connection through it has `2 × delayMs` more round-trip time
 * than a direct one — what `tc qdisc … netem delay` would do, for machines without netem.
 */
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net'

export interface DelayProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number
  close: () => Promise<void>
}

function pipeDelayed (from: Socket, to: Socket, delayMs: number): void {
  from.on('data', (chunk) => { setTimeout(() => { if (!to.destroyed) to.write(chunk) }, delayMs) })
  from.on('end', () => { setTimeout(() => { to.end() }, delayMs) })
  from.on('error', () => { to.destroy() })
  from.on('close', () => { setTimeout(() => { to.destroy() }, delayMs + 1) })
}

/** Listen on 127.0.0.1 (a free port) and forward each connection to 127.0.0.1:`targetPort`, `delayMs` late each way. */
export async function startDelayProxy (targetPort: number, delayMs: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1')
    for (const s of [client, upstream]) { sockets.add(s); s.on('close', () => sockets.delete(s)) }
    pipeDelayed(client, upstream, delayMs)
    pipeDelayed(upstream, client, delayMs)
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', resolve) })
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
    }
  }
}
