/**
 * Where `gpumesh ledger` and `gpumesh job list` get their records: the running daemon's API, or,
 * when no daemon runs on the data dir, the data dir itself (node/market/stopped-node.ts), so a
 * stopped provider still sees its earnings. The output is the same either way; a note on stderr
 * says where it came from.
 */
import type { Command } from 'commander'
import { ApiClient, DaemonUnavailableError } from '../node/api/client.js'
import { readStoppedNode, type StoppedNodeRecords } from '../node/market/stopped-node.js'
import { StorageError } from '../node/storage.js'
import { dataDirOf } from './context.js'
import { NoMarketError } from './errors.js'

/** `client`, unless it is a bootstrap peer's: that API has no market routes, so say so first. */
export function marketClient (client: ApiClient, dataDir: string): ApiClient {
  if (client.role === 'bootstrap') {
    throw new NoMarketError(`the daemon for data dir ${dataDir} is a bootstrap peer: it runs no market (buy and sell through a node: \`gpumesh node start\`)`)
  }
  return client
}

export async function recordsOf<T> (command: Command, path: string, pick: (records: StoppedNodeRecords) => T): Promise<T> {
  const dataDir = dataDirOf(command)
  let client: ApiClient
  try {
    client = await ApiClient.fromDataDir(dataDir)
  } catch (err) {
    if (!(err instanceof DaemonUnavailableError)) throw err
    let records: StoppedNodeRecords
    try {
      records = await readStoppedNode(dataDir, Date.now())
    } catch (readErr) {
      if (readErr instanceof StorageError && readErr.code === 'STORE_LOCKED') {
        throw new DaemonUnavailableError(`a gpumesh process holds the database of ${dataDir} but serves no API yet (starting or stopping?); try again in a moment`)
      }
      throw readErr
    }
    process.stderr.write(records.database !== undefined
      ? `gpumesh: no daemon running; read from ${records.database}\n`
      : `gpumesh: no daemon running and no records yet in ${dataDir}\n`)
    return pick(records)
  }
  return await marketClient(client, dataDir).get<T>(path)
}
