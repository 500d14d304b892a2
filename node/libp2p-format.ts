/**
 * libp2p's printf-style log calls (`log('dialing %p on %a', peer, addr)`) rendered as one line of text,
 * the way @libp2p/logger (weald, a port of `debug`) renders them: its own conversions %p (peer id),
 * %a (multiaddr), %c (CID), %k (datastore key), %b / %t / %m (bytes as base58btc / base32 / base64),
 * %e (error), and Node's %s %d %i %f %j %o %O %%. Unlike `debug`, the result is always one line and
 * capped, and the first Error among the arguments is returned apart, so the structured record can
 * carry it as a field. A peer's data reaches these calls, so nothing here may throw.
 */
import { inspect } from 'node:util'
import { base32 } from 'multiformats/bases/base32'
import { base58btc } from 'multiformats/bases/base58'
import { base64 } from 'multiformats/bases/base64'

/** The longest message kept; the rest becomes `…`. */
export const MAX_LOG_MESSAGE_CHARS = 4096

const INSPECT = { depth: 2, breakLength: Infinity, compact: true, maxArrayLength: 16, maxStringLength: 256, colors: false } as const

function guard (render: (value: unknown) => string): (value: unknown) => string {
  return (value) => {
    try {
      return render(value)
    } catch (err) {
      return `<unprintable: ${(err as Error)?.message ?? 'error'}>`
    }
  }
}

function errorText (err: Error): string {
  const text = err.message === '' ? err.name : `${err.name}: ${err.message}`
  if (err instanceof AggregateError && Array.isArray(err.errors) && err.errors.length > 0) {
    return `${text} (${err.errors.map((e: unknown) => e instanceof Error ? errorText(e) : display(e)).join('; ')})`
  }
  return text
}

function ownToString (value: object): boolean {
  const toString = (value as { toString?: unknown }).toString
  return typeof toString === 'function' && toString !== Object.prototype.toString && !Array.isArray(value)
}

/** A value as text: strings as they are, peer ids, multiaddrs and CIDs by their toString, bytes by size, the rest inspected on one line. */
const display = guard((value: unknown): string => {
  if (typeof value === 'string') return value
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? inspect(value, INSPECT) : String(value)
  if (value instanceof Error) return errorText(value)
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`
  if (ownToString(value)) return String(value)
  return inspect(value, INSPECT)
})

const orUndefined = (render: (value: any) => string) => guard((value) => value == null ? 'undefined' : render(value))
const bytes = (encode: (b: Uint8Array) => string) => orUndefined((v: unknown) => v instanceof Uint8Array ? encode(v) : display(v))
const numeric = (toNumber: (v: any) => number) => guard((v) => typeof v === 'bigint' ? `${v}n` : typeof v === 'object' && v !== null ? 'NaN' : String(toNumber(v)))

const CONVERSIONS: Record<string, (value: unknown) => string> = {
  s: display,
  d: numeric(Number),
  i: numeric((v) => Number.parseInt(String(v), 10)),
  f: numeric((v) => Number.parseFloat(String(v))),
  j: guard((v) => JSON.stringify(v, (_k, x: unknown) => typeof x === 'bigint' ? x.toString() : x) ?? 'undefined'),
  o: guard((v) => inspect(v, INSPECT)),
  O: guard((v) => inspect(v, INSPECT)),
  p: orUndefined(String),
  a: orUndefined(String),
  c: orUndefined(String),
  k: orUndefined(String),
  b: bytes((b) => base58btc.baseEncode(b)),
  t: bytes((b) => base32.baseEncode(b)),
  m: bytes((b) => base64.baseEncode(b)),
  e: orUndefined((v: unknown) => v instanceof Error ? errorText(v) : display(v))
}

const DIRECTIVE = /%([a-zA-Z%])/g

/**
 * Render `formatter` and `args` as libp2p's logger would, on one line. A formatter that is not a string
 * is shown as the first argument (an Error by its name and message). Directives without an argument,
 * and unknown ones, stay as written; arguments left over are appended, separated by spaces.
 */
export function formatLibp2pArgs (formatter: unknown, args: readonly unknown[]): { msg: string, error?: Error } {
  let error: Error | undefined
  const take = (value: unknown): unknown => {
    if (error === undefined && value instanceof Error) error = value
    return value
  }
  let template: string
  if (typeof formatter === 'string') {
    template = formatter
  } else {
    template = display(take(formatter)).replaceAll('%', '%%')
  }
  const values = args
  let next = 0
  let msg = template.replace(DIRECTIVE, (directive, code: string) => {
    if (code === '%') return '%'
    const convert = CONVERSIONS[code]
    if (convert === undefined || next >= values.length) return directive
    return convert(take(values[next++]))
  })
  for (; next < values.length; next++) msg += ` ${display(take(values[next]))}`
  // one line per record, on a terminal too: a peer's string cannot start a line of its own
  msg = msg.replace(/\r?\n|\r/g, '\\n')
  if (msg.length > MAX_LOG_MESSAGE_CHARS) msg = `${msg.slice(0, MAX_LOG_MESSAGE_CHARS)}…`
  return error === undefined ? { msg } : { msg, error }
}
