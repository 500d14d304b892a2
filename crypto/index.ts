/**
 * gpumesh/crypto — keys, signatures, signed envelopes, canonical encoding and content ids.
 * A leaf: imports no other gpumesh folder. Pure and portable (checked by the build: crypto/tsconfig.json
 * and scripts/purity): no Node built-ins, no I/O, no clock, no randomness. The file key store, the
 * entropy source and the native (node:crypto) fast paths are in node/.
 */
export * from './errors.js'
export * from './ed25519.js'
export { NobleEd25519, isStrictPublicKey } from './ed25519-noble.js'
export { defaultEd25519, setDefaultEd25519 } from './ed25519-default.js'
export { Identity, PRIVATE_KEY_PROTOBUF_BYTES, type Signer } from './identity.js'
export * from './envelope.js'
export { peerIdFromPublicKey, publicKeyFromPeerId, publicKeyToProtobuf, isPeerId } from './peer-id.js'
export * from './hash.js'
export { CborError, type CborErrorCode, encodeCanonical, decodeCanonical, bytesEqual } from './cbor.js'
export { encodeVarint, decodeVarint } from './varint.js'
export { BoundedCache } from './bounded-cache.js'
