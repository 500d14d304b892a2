/**
 * The wall-clock Scheduler (protocol/market/scheduler.ts) the daemon's market runs on. Timers are
 * unref'd (a pending wake never keeps the process alive) and re-armed when they fire before the clock
 * reaches `t` (timers and the wall clock drift apart), so `fn` never runs early; waits longer than
 * Node's timer limit (2^31 − 1 ms, ≈ 24.8 days) are chained.
 */
import type { Cancel, Scheduler } from '../../protocol/index.js'

const MAX_TIMER_MS = 2 ** 31 - 1

export function createRealScheduler (clock: () => number = Date.now): Scheduler {
  return {
    now: clock,
    at (t: number, fn: () => void): Cancel {
      let timer: NodeJS.Timeout | undefined
      let done = false
      const arm = (): void => {
        const left = t - clock()
        timer = setTimeout(() => {
          if (done) return
          if (t > clock()) return arm()
          done = true
          fn()
        }, Math.min(Math.max(0, left), MAX_TIMER_MS))
        timer.unref()
      }
      arm()
      return () => {
        done = true
        clearTimeout(timer)
      }
    }
  }
}
