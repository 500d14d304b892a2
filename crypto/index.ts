/**
 * gpumesh/crypto — keys, signatures, signed envelopes, canonical encoding and content ids.
 * A leaf: imports no other gpumesh folder.
 */
export * from './errors.js'
export * from './ed25519.js'
export { NativeEd25519, nativeEd25519Available } from './ed25519-native.js'
export { NobleEd25519, isStrictPublicKey } from './ed25519-noble.js'
export { defaultEd25519 } from './ed25519-default.js'
export { Identity, PRIVATE_KEY_PROTOBUF_BYTES, type Signer } from './identity.js'
export { IDENTITY_FILE, identityPath, loadIdentity, saveIdentity, loadOrCreateIdentity } from './keystore.js'
export * from './envelope.js'
export { peerIdFromPublicKey, publicKeyFromPeerId, publicKeyToProtobuf, isPeerId } from './peer-id.js'
export * from './hash.js'
export { CborError, type CborErrorCode, encodeCanonical, decodeCanonical, bytesEqual } from './cbor.js'
export { encodeVarint, decodeVarint } from './varint.js'
export { BoundedCache } from './bounded-cache.js'
export { randomNonce } from './random.js'
