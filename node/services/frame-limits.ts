/**
 * Length-prefixed framing limits shared by gpumesh's stream protocols (blob, capability, exec).
 *
 * lpStream's own guard against an over-long length prefix (`maxLengthLength`) runs only once the
 * varint is complete, so a peer that sends 0x80 0x80 … (or random bytes with the top bit set) would be
 * read until the protocol's deadline. `frameLimits(max)` refuses such a prefix as soon as it is longer
 * than any prefix of a frame of at most `max` bytes, refuses non-minimal prefixes, and leaves the
 * "frame over max" check to lpStream (InvalidDataLengthError) — both from the prefix alone, before any
 * of the frame is read.
 */
import { decodeVarint, encodeVarint } from '../../crypto/index.js'

/** A length prefix that no frame of the protocol can have (too long, or not minimal). */
export class BadFrameLengthError extends Error {
  override readonly name = 'BadFrameLengthError'
}

/** Error names lpStream (and frameLimits) use for a length prefix or frame over the limit. */
export const FRAME_LENGTH_ERRORS: ReadonlySet<string> = new Set(['BadFrameLengthError', 'InvalidDataLengthError', 'InvalidDataLengthLengthError', 'InvalidMessageLengthError'])

/** True when `err` is lpStream's (or frameLimits') refusal of a frame's length. */
export function isFrameLengthError (err: unknown): boolean {
  return err instanceof Error && FRAME_LENGTH_ERRORS.has(err.name)
}

export interface FrameLimits {
  maxDataLength: number
  lengthDecoder: (data: { subarray: () => Uint8Array }) => number
}

/** Options for lpStream that refuse, from the prefix alone, any frame over `maxDataLength` bytes. */
export function frameLimits (maxDataLength: number): FrameLimits {
  const maxPrefix = encodeVarint(maxDataLength).byteLength
  return {
    maxDataLength,
    lengthDecoder: (data) => {
      const bytes = data.subarray()
      const decoded = decodeVarint(bytes, 0)
      if (decoded !== undefined) return decoded[0]
      const complete = ((bytes[bytes.byteLength - 1] ?? 0) & 0x80) === 0
      if (complete || bytes.byteLength >= maxPrefix) throw new BadFrameLengthError(`bad frame length prefix (frames are at most ${maxDataLength} bytes)`)
      throw new RangeError('incomplete varint') // lpStream reads another byte
    }
  }
}
