/**
 * Weekly availability windows written the way people write them: `Mon-Fri 09:00-17:30`,
 * `Sat,Sun 00:00-24:00`, `Mon-Fri 22:00-06:00` (crosses midnight: split into two windows per day).
 * Days are ISO (1 = Monday … 7 = Sunday); minutes from midnight in the owner's time zone. The windows are
 * the calendar's one WeeklyWindow type (the capability ad's schema), so what this parses is what the ad
 * carries and the decisions read.
 */
import type { WeeklyWindow } from '../../protocol/market/calendar.js'

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']

export class WindowSyntaxError extends Error {
  override readonly name = 'WindowSyntaxError'
}

function parseDay (text: string, spec: string): number {
  const index = DAYS.indexOf(text.toLowerCase().slice(0, 3))
  if (index === -1 || !/^[a-z]{3,9}$/i.test(text)) throw new WindowSyntaxError(`unknown day "${text}" in "${spec}" (use Mon … Sun)`)
  return index + 1
}

function parseDays (text: string, spec: string): number[] {
  const days = new Set<number>()
  for (const part of text.split(',')) {
    const [from, to] = part.split('-')
    if (from === undefined || from === '') throw new WindowSyntaxError(`no day in "${spec}"`)
    const first = parseDay(from, spec)
    const last = to === undefined ? first : parseDay(to, spec)
    // Fri-Mon wraps around the week
    for (let d = first, n = 0; n < 7; d = d % 7 + 1, n++) {
      days.add(d)
      if (d === last) break
    }
  }
  return [...days].sort((a, b) => a - b)
}

function parseTime (text: string, spec: string): number {
  const match = /^(\d{1,2}):(\d{2})$/.exec(text)
  const hours = Number(match?.[1])
  const minutes = Number(match?.[2])
  if (match === null || minutes > 59 || hours > 24 || (hours === 24 && minutes !== 0)) {
    throw new WindowSyntaxError(`bad time "${text}" in "${spec}" (use HH:MM, 00:00–24:00)`)
  }
  return hours * 60 + minutes
}

/** Parse one window spec into one or more weekly windows. Throws WindowSyntaxError. */
export function parseWindow (spec: string): WeeklyWindow[] {
  const match = /^\s*(\S+)\s+(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*$/.exec(spec)
  if (match === null) throw new WindowSyntaxError(`expected "DAYS HH:MM-HH:MM" (e.g. "Mon-Fri 18:00-08:00"), got "${spec}"`)
  const days = parseDays(match[1] as string, spec)
  const start = parseTime(match[2] as string, spec)
  const end = parseTime(match[3] as string, spec)
  if (start === end) throw new WindowSyntaxError(`empty window "${spec}"`)
  const out: WeeklyWindow[] = []
  for (const day of days) {
    if (end > start) {
      out.push({ day, start, end })
    } else {
      // crosses midnight: the evening part today, the morning part tomorrow
      if (start < 1440) out.push({ day, start, end: 1440 })
      if (end > 0) out.push({ day: day % 7 + 1, start: 0, end })
    }
  }
  return out
}

/** Parse many specs and merge overlapping or touching windows per day. */
export function parseWindows (specs: readonly string[]): WeeklyWindow[] {
  const byDay = new Map<number, WeeklyWindow[]>()
  for (const w of specs.flatMap(parseWindow)) byDay.set(w.day, [...(byDay.get(w.day) ?? []), w])
  const out: WeeklyWindow[] = []
  for (const day of [...byDay.keys()].sort((a, b) => a - b)) {
    const windows = (byDay.get(day) ?? []).sort((a, b) => a.start - b.start)
    let current: WeeklyWindow | undefined
    for (const w of windows) {
      if (current !== undefined && w.start <= current.end) {
        current.end = Math.max(current.end, w.end)
      } else {
        if (current !== undefined) out.push(current)
        current = { ...w }
      }
    }
    if (current !== undefined) out.push(current)
  }
  return out
}
