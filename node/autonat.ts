/**
 * AutoNAT v1 (@libp2p/autonat) with its dial-back fixed. As shipped (3.0.28), the server dials the
 * requester back with `connectionManager.openConnection(addr)`, which returns the connection the
 * request arrived on (the requester is connected already); its remote address is the requester's
 * ephemeral port, not the address to verify, so the server answers "Unexpected remote address" and
 * then closes that connection in its `finally`. A public node is then disconnected from every js
 * AutoNAT server it meets, over and over (seen in the netns test: the buyer lost its bootstrap
 * connection once a second). Here the server's dials are forced (`force: true`): a new connection to
 * exactly the address asked about, which is the one the server then closes.
 */
import { autoNAT as libp2pAutoNAT, type AutoNATComponents, type AutoNATServiceInit } from '@libp2p/autonat'
import type { ConnectionManager } from '@libp2p/interface-internal'
import { isMultiaddr } from '@multiformats/multiaddr'

/**
 * A connection manager whose openConnection dials anew when given one multiaddr (AutoNAT's dial-back);
 * other dials (its random walk passes a peer's address list) are left as they are.
 */
export function forcingDials (connectionManager: ConnectionManager): ConnectionManager {
  return new Proxy(connectionManager, {
    get (target, property, receiver) {
      if (property === 'openConnection') {
        return async (peer: Parameters<ConnectionManager['openConnection']>[0], options: Parameters<ConnectionManager['openConnection']>[1] = {}) =>
          await target.openConnection(peer, isMultiaddr(peer) ? { ...options, force: true } : options)
      }
      const value = Reflect.get(target, property, receiver)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

export function autoNAT (init: AutoNATServiceInit = {}): (components: AutoNATComponents) => unknown {
  const create = libp2pAutoNAT(init)
  return (components) => create(new Proxy(components, {
    get (target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      return property === 'connectionManager' ? forcingDials(value as ConnectionManager) : value
    }
  }))
}
