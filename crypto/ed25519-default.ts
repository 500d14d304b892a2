import type { Ed25519 } from './ed25519.js'
import { NativeEd25519, nativeEd25519Available } from './ed25519-native.js'
import { NobleEd25519 } from './ed25519-noble.js'

let chosen: Ed25519 | undefined

/** The native implementation where OpenSSL has Ed25519 (all supported Node versions), else @noble. */
export function defaultEd25519 (): Ed25519 {
  chosen ??= nativeEd25519Available() ? new NativeEd25519() : new NobleEd25519()
  return chosen
}
