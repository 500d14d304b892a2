/**
 * What the CLI does when the reader of its output goes away (`gpumesh job status <id> | head -1`):
 * a write then fails with EPIPE, which Node reports as an 'error' event on process.stdout; without a
 * listener that is an uncaught exception and a stack trace. A command stops quietly (exit 0, as a
 * reader that has read enough is no failure); a long-running command (a daemon, the demo) registers
 * its graceful shutdown with `onOutputClosed` instead, so it never dies without cleaning up.
 */

let onClosed: (() => void) | undefined
let handled = false
const closedStreams = new Set<NodeJS.WriteStream>()

/** Run `handler` (once) instead of exiting when stdout or stderr is closed by its reader. */
export function onOutputClosed (handler: () => void): void {
  onClosed = handler
}

/** True once `stream` was closed by its reader: write nothing more to it. */
export function outputClosed (stream: NodeJS.WriteStream): boolean {
  return closedStreams.has(stream)
}

function isClosedPipe (err: NodeJS.ErrnoException): boolean {
  return err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED'
}

/** Install the listeners on process.stdout and process.stderr (bin.ts, before anything is written). */
export function exitQuietlyWhenOutputCloses (): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (!isClosedPipe(err)) throw err
      closedStreams.add(stream)
      if (handled) return
      handled = true
      if (onClosed !== undefined) onClosed()
      else process.exit(0)
    })
  }
}
