/**
 * Unsigned LEB128 varints as used by protobuf and multiformats, restricted to safe integers.
 * Decoding is strict: a non-minimal encoding (e.g. 0x80 0x00 for zero) is refused, so every value
 * has exactly one encoding.
 */

export function encodeVarint (value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError('varint value must be a non-negative safe integer')
  const out: number[] = []
  let rest = value
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80)
    rest = Math.floor(rest / 0x80)
  }
  out.push(rest)
  return Uint8Array.from(out)
}

/** Returns [value, bytesRead], or undefined when `bytes` at `offset` is not a minimal varint. */
export function decodeVarint (bytes: Uint8Array, offset: number): [number, number] | undefined {
  let value = 0
  let scale = 1
  for (let i = 0; i < 8; i++) {
    const byte = bytes[offset + i]
    if (byte === undefined) return undefined
    value += (byte & 0x7f) * scale
    if ((byte & 0x80) === 0) {
      if (byte === 0 && i > 0) return undefined // non-minimal
      if (!Number.isSafeInteger(value)) return undefined
      return [value, i + 1]
    }
    scale *= 0x80
  }
  return undefined
}
