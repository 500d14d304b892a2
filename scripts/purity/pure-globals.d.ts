/**
 * The only host globals the pure folders may use beyond ECMAScript: UTF-8 text encoding (WHATWG
 * Encoding, present in every JavaScript runtime, deterministic). Nothing that reads a clock, draws
 * randomness, schedules work or does I/O belongs here.
 */
interface TextEncoder {
  encode (input?: string): Uint8Array
}
declare var TextEncoder: { prototype: TextEncoder, new (): TextEncoder }

interface TextDecoder {
  decode (input?: Uint8Array, options?: { stream?: boolean }): string
}
declare var TextDecoder: { prototype: TextDecoder, new (label?: string, options?: { fatal?: boolean, ignoreBOM?: boolean }): TextDecoder }
