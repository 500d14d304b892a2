import type { Ed25519 } from './ed25519.js'
import { NobleEd25519 } from './ed25519-noble.js'

/**
 * The Ed25519 implementation used where a caller passes none. crypto/ holds only the portable one
 * (@noble/ed25519), so its import closure stays free of Node: the daemon's fast path (node:crypto,
 * ≈10× faster verification, DESIGN §2) lives in node/ and is installed here at start-up by
 * `useNativeCrypto()` (node/native-crypto.ts), which every entry point runs.
 */
let chosen: Ed25519 | undefined

export function defaultEd25519 (): Ed25519 {
  chosen ??= new NobleEd25519()
  return chosen
}

/**
 * Make `impl` the default. Both implementations give identical signatures and verdicts (the compliance
 * suite checks each against the other), so swapping changes speed, never results.
 */
export function setDefaultEd25519 (impl: Ed25519): void {
  chosen = impl
}
