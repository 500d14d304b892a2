/**
 * The daemon's fast crypto paths: OpenSSL's Ed25519 and SHA-256 through node:crypto, installed as the
 * defaults of the portable crypto/ layer. crypto/ itself only holds @noble's pure-JS code (so protocol/
 * and the simulator stay free of Node); node/polyfill.ts, which every entry point and the test runner
 * load first, calls `useNativeCrypto()`, so the daemon, the CLI, the benches and the tests run native.
 */
import { createHash } from 'node:crypto'
import { setDefaultEd25519, setSha256 } from '../crypto/index.js'
import { NativeEd25519, nativeEd25519Available } from './ed25519-native.js'

/** Use node:crypto for Ed25519 (where this runtime's OpenSSL offers it) and SHA-256. Idempotent. */
export function useNativeCrypto (): void {
  if (nativeEd25519Available()) setDefaultEd25519(new NativeEd25519())
  setSha256((bytes) => new Uint8Array(createHash('sha256').update(bytes).digest()))
}
