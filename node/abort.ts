/**
 * Deadlines that really fire. On Node 20, `AbortSignal.any([parent, AbortSignal.timeout(ms)])` can
 * lose its timeout when the inner signal is garbage-collected before it fires (nodejs/node#57736),
 * so gpumesh builds deadlines from an AbortController and a timer it owns, and clears them when done.
 */
import { setMaxListeners } from 'node:events'

export class DeadlineError extends Error {
  override readonly name = 'TimeoutError'
  constructor (ms: number) {
    super(`timed out after ${ms} ms`)
  }
}

export interface Deadline {
  readonly signal: AbortSignal
  /** Release the timer and the parent listener; call when the guarded work is over. */
  clear (): void
}

/** A signal that aborts after `ms`, or when `parent` aborts, whichever comes first. */
export function deadline (ms: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController()
  // a deadline is handed to every step of the work it bounds (dials, streams, parallel fetches), each
  // adding an abort listener: more than Node's warning threshold of 10 is expected, not a leak
  setMaxListeners(Infinity, controller.signal)
  const timer = setTimeout(() => { controller.abort(new DeadlineError(ms)) }, ms)
  timer.unref()
  const onParent = (): void => { controller.abort(parent?.reason) }
  if (parent?.aborted === true) controller.abort(parent.reason)
  else parent?.addEventListener('abort', onParent, { once: true })
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer)
      parent?.removeEventListener('abort', onParent)
    }
  }
}

/** Run `work` under a deadline and release it afterwards. */
export async function withDeadline<T> (ms: number, parent: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const d = deadline(ms, parent)
  try {
    return await work(d.signal)
  } finally {
    d.clear()
  }
}
