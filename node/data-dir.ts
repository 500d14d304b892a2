import { homedir } from 'node:os'
import { join, resolve } from 'node:path'

/** Where a node keeps its identity, database and config, unless told otherwise. */
export function defaultDataDir (env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.GPUMESH_DATA_DIR
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv)
  return join(homedir(), '.gpumesh')
}
