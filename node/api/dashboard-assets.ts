/**
 * The browser dashboard's static files (node/api/dashboard/, which the build copies beside this module into
 * dist). They are served without the bearer token because they hold no data: the page reads the token from
 * its login link's fragment (`/dashboard#token=…`, never sent to the server) and asks the API with it.
 */
import { readdir, readFile } from 'node:fs/promises'
import { extname } from 'node:path'

/** The login page's path; its files lie under `/dashboard/`. */
export const DASHBOARD_PATH = '/dashboard'

/** Sent with every API answer: the page loads only its own files and talks only to this API. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer'
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml'
}

export interface DashboardAsset { body: Buffer, type: string }

/**
 * The dashboard's files by URL path (`/dashboard` and `/dashboard/` are index.html), read once. Only files
 * of the types above are served, so nothing else that lands in the folder is; a missing folder gives none.
 */
export async function loadDashboard (dir: URL = new URL('./dashboard/', import.meta.url)): Promise<Map<string, DashboardAsset>> {
  const assets = new Map<string, DashboardAsset>()
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return assets
    throw err
  }
  for (const name of names.sort()) {
    const type = TYPES[extname(name)]
    if (type === undefined || !/^[a-z0-9-]+\.[a-z]+$/.test(name)) continue
    const asset = { body: await readFile(new URL(name, dir)), type }
    assets.set(`${DASHBOARD_PATH}/${name}`, asset)
    if (name === 'index.html') {
      assets.set(DASHBOARD_PATH, asset)
      assets.set(`${DASHBOARD_PATH}/`, asset)
    }
  }
  return assets
}
