/**
 * Read-only taps on real daemons, for calibration: they count what each daemon sends (gossip
 * publishes and exec-stream messages, by kind), what its gossipsub hands it (one delivery per
 * accepted message, with the delay since the sender sealed it) and the DHT requests it answers (so a
 * run can show its market window was not shared with DHT traffic). They wrap this process's instances
 * of the daemon's services after start and change nothing the daemon does.
 */
import type { Message } from '@libp2p/gossipsub'
import { KINDS, PROTOCOLS, openMessage, type Kind } from '../protocol/index.js'
import type { Daemon } from '../node/daemon.js'
import type { ExecChannel } from '../node/services/exec.js'

const ALL_KINDS = Object.keys(KINDS) as Kind[]

export interface TrafficCounts {
  /** Gossip publishes by kind. */
  gossip: Map<string, number>
  /** Signed messages sent on exec streams by kind. */
  stream: Map<string, number>
  /** Gossip deliveries (accepted messages on a subscribed topic). */
  delivered: number
  /** Their delays, publish (the sender's issuedAt) to delivery, ms. */
  delays: number[]
  /** Inbound DHT request streams (kad-dht's protocol) the daemons answered. */
  dhtRequests: number
}

export function emptyCounts (): TrafficCounts {
  return { gossip: new Map(), stream: new Map(), delivered: 0, delays: [], dhtRequests: 0 }
}

/** The kind and issue time of a sealed message (signature checked, freshness not: it was just sent). */
function peek (bytes: Uint8Array): { kind: string, issuedAt: number } | undefined {
  try {
    const m = openMessage(bytes, ALL_KINDS, { now: Date.now(), historical: true })
    return { kind: m.kind, issuedAt: (m.payload as { issuedAt: number }).issuedAt }
  } catch {
    return undefined
  }
}

function bump (map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1)
}

/** Count `daemon`'s traffic into `counts` from now on. */
export function tapDaemon (daemon: Daemon, counts: TrafficCounts): void {
  const pubsub = daemon.node.services.pubsub
  const publish = pubsub.publish.bind(pubsub)
  pubsub.publish = async (topic: string, data?: Uint8Array) => {
    const m = data instanceof Uint8Array ? peek(data) : undefined
    if (m !== undefined) bump(counts.gossip, m.kind)
    return await publish(topic, data)
  }
  pubsub.addEventListener('message', (event: CustomEvent<Message>) => {
    const m = peek(event.detail.data)
    if (m === undefined) return
    counts.delivered++
    counts.delays.push(Date.now() - m.issuedAt)
  })
  const exec = daemon.node.services.exec
  const tap = (channel: ExecChannel): ExecChannel => {
    // every frame goes through send (sendMessage too): count the signed messages among them
    const send = channel.send.bind(channel)
    channel.send = async (frame) => {
      if (frame.type === 'message') {
        const m = peek(frame.bytes)
        if (m !== undefined) bump(counts.stream, m.kind)
      }
      await send(frame)
    }
    return channel
  }
  const open = exec.open.bind(exec)
  exec.open = async (peer, options) => tap(await open(peer, options))
  const handler = exec.onChannel
  if (handler !== undefined) exec.onChannel = (channel) => { handler(tap(channel)) }
  tapDht(daemon, counts)
}

/** The registrar's record for a protocol: libp2p looks its handler up for every inbound stream. */
interface HandlerRecord { handler: (...args: unknown[]) => unknown }

function tapDht (daemon: Daemon, counts: TrafficCounts): void {
  const registrar = (daemon.node as unknown as { components?: { registrar?: { getHandler: (protocol: string) => HandlerRecord } } }).components?.registrar
  if (registrar === undefined) throw new Error('this libp2p node has no registrar in its components: DHT requests cannot be counted')
  const record = registrar.getHandler(PROTOCOLS.kad)
  const inner = record.handler
  record.handler = (...args: unknown[]) => {
    counts.dhtRequests++
    return inner(...args)
  }
}
