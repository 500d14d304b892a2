/**
 * The one time-zone check (issue 9): what a time-zone name looks like, and whether this runtime's tz data
 * knows it. The wire schema (messages/common.ts) checks the name's form only, so a message's validity does
 * not depend on the receiver's tz data version; the node's config and the market's decisions (calendar.ts,
 * bid-policy.ts, explain.ts) also require the zone to be known here, because they compute with it. Pure:
 * `Intl` is deterministic given its inputs.
 */

/** Longest time-zone name accepted (the IANA names are at most 32 characters). */
export const TIME_ZONE_MAX_LENGTH = 64

/** An IANA-style name: `Europe/Berlin`, `UTC`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`. */
export const TIME_ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/

/** True when `name` has the form of an IANA time-zone name (known or not). */
export function isTimeZoneName (name: string): boolean {
  return name.length <= TIME_ZONE_MAX_LENGTH && TIME_ZONE_NAME.test(name)
}

/** One formatter per known zone (at most the few hundred zones tz data has; unknown names are not kept here). */
const formatters = new Map<string, Intl.DateTimeFormat>()
/** Names found unknown, so that a repeated one costs no thrown RangeError; bounded, cleared when full. */
const unknown = new Set<string>()
const UNKNOWN_LIMIT = 1024

function create (timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric'
  })
}

/**
 * The zone's wall-clock formatter (numeric fields, 24-hour clock), made once per zone. Throws RangeError
 * for a zone that is not a well-formed name known to this runtime.
 */
export function zoneFormatter (timeZone: string): Intl.DateTimeFormat {
  const cached = formatters.get(timeZone)
  if (cached !== undefined) return cached
  if (!isTimeZoneName(timeZone) || unknown.has(timeZone)) throw new RangeError(`unknown time zone "${timeZone}"`)
  let f: Intl.DateTimeFormat
  try {
    f = create(timeZone)
  } catch (err) {
    if (unknown.size >= UNKNOWN_LIMIT) unknown.clear()
    unknown.add(timeZone)
    throw err
  }
  formatters.set(timeZone, f)
  return f
}

/** True when `timeZone` is a well-formed name that this runtime's tz data knows. */
export function isKnownTimeZone (timeZone: string): boolean {
  if (formatters.has(timeZone)) return true
  try {
    zoneFormatter(timeZone)
    return true
  } catch {
    return false
  }
}
