/**
 * The bootstrap role (DESIGN §4, §9): a DHT server and circuit-relay server that relays gossip and
 * hands out peers, with a stable identity and no job execution. It is the ordinary daemon with the
 * selling side switched off, so a community bootstrap peer runs exactly the code every node runs.
 */
import { Daemon, type DaemonOptions } from '../node/daemon.js'

export async function startBootstrap (options: Omit<DaemonOptions, 'role'>): Promise<Daemon> {
  const config = {
    ...options.config,
    dht: { ...options.config.dht, mode: 'server' as const },
    provider: { ...options.config.provider, sell: false }
  }
  return await Daemon.start({ ...options, config, role: 'bootstrap' })
}

/** The addresses to publish for this bootstrap peer: each listen address with /p2p/<peer id>. */
export function publishableAddrs (daemon: Daemon): string[] {
  const id = daemon.identity.peerId
  return daemon.addresses().map((a) => a.includes('/p2p/') ? a : `${a}/p2p/${id}`)
}
