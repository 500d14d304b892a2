/**
 * Start-up for every entry point: each imports this module first, and the test runner loads it with
 * --import. (1) libp2p 3 calls Promise.withResolvers (Node ≥ 22), which Node 20 lacks. (2) crypto/ is
 * portable and defaults to pure-JS Ed25519 and SHA-256; the node uses OpenSSL's (native-crypto.ts).
 */
import { useNativeCrypto } from './native-crypto.js'

useNativeCrypto()

if (typeof Promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T> () {
      let resolve!: (value: T | PromiseLike<T>) => void
      let reject!: (reason?: unknown) => void
      const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
      return { promise, resolve, reject }
    }
  })
}
