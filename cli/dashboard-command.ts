/**
 * `gpumesh dashboard`: print the running daemon's dashboard login link, `<api url>/dashboard#token=<token>`,
 * and open it in a browser. The token rides in the fragment, which a browser never sends to the server (so
 * it reaches no request line or log); the page keeps it for the tab and asks the API with it.
 */
import { spawn } from 'node:child_process'
import { constants } from 'node:fs'
import { access } from 'node:fs/promises'
import { delimiter, join } from 'node:path'
import type { Command } from 'commander'
import { ApiClient, DaemonUnavailableError } from '../node/api/client.js'
import { readApiToken } from '../node/api/credentials.js'
import { DASHBOARD_PATH } from '../node/api/dashboard-assets.js'
import { dataDirOf } from './context.js'
import { toJson } from './format.js'

const out = (text: string): void => { process.stdout.write(`${text}\n`) }

/** The program that opens a URL in the desktop's browser here: `open` on macOS, else `xdg-open`. */
export const OPENER = process.platform === 'darwin' ? 'open' : 'xdg-open'

/** The path of `name` on PATH when it is an executable there, else undefined. */
async function onPath (name: string, path = process.env.PATH ?? ''): Promise<string | undefined> {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue
    const file = join(dir, name)
    try {
      await access(file, constants.X_OK)
      return file
    } catch {}
  }
  return undefined
}

/** Hand `url` to the opener, without waiting for it; false when there is none (never throws). */
async function openInBrowser (url: string): Promise<boolean> {
  const opener = await onPath(OPENER)
  if (opener === undefined) return false
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' })
    child.on('error', () => {})
    child.unref()
    return true
  } catch {
    return false
  }
}

export async function dashboardCommand (command: Command): Promise<void> {
  const opts = command.opts<{ open?: boolean, json?: boolean }>()
  const dataDir = dataDirOf(command)
  const client = await ApiClient.fromDataDir(dataDir)
  const token = await readApiToken(dataDir)
  if (token === undefined) throw new DaemonUnavailableError(`no API token in ${dataDir}`)
  const page = `${client.url}${DASHBOARD_PATH}`
  // the page itself needs no token: this checks that the daemon answers and serves the dashboard
  let res: Response
  try {
    res = await fetch(page, { signal: AbortSignal.timeout(10_000) })
  } catch (err) {
    throw new DaemonUnavailableError(`the daemon at ${client.url} does not answer (${(err as Error).message}); is it running?`)
  }
  if (!res.ok) throw new DaemonUnavailableError(`the daemon at ${client.url} serves no dashboard (HTTP ${res.status}); it may run an older gpumesh: restart it`)
  await res.body?.cancel()
  const url = `${page}#token=${token}`
  // --json is for scripts: it prints and opens nothing
  const opened = opts.json !== true && opts.open !== false && await openInBrowser(url)
  if (opts.json === true) return out(toJson({ url, opened }))
  out(url)
  if (opts.open === false) return
  process.stderr.write(opened ? `opening it with ${OPENER}\n` : `no ${OPENER} here: open the link above in a browser\n`)
}
