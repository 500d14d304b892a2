/** Times the market tests share (all UTC). */
export const M = 60_000
export const H = 60 * M
export const D = 24 * H
/** 2024-01-01T00:00Z, a Monday. */
export const MON = Date.UTC(2024, 0, 1)
/** Monday 2024-01-01 10:00Z. */
export const MON_10H = Date.UTC(2024, 0, 1, 10)
/** Berlin springs forward on 2024-03-31 at 01:00Z (02:00 CET → 03:00 CEST). */
export const SPRING = Date.UTC(2024, 2, 31)
/** Berlin falls back on 2024-10-27 at 01:00Z (03:00 CEST → 02:00 CET). */
export const FALL = Date.UTC(2024, 9, 27)
/** Free all week. */
export const ALWAYS = [1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 }))
