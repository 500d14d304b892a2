/** The RTT table as the tests read it (the simulator's code takes text; reading a file is the caller's). */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { LatencyMatrix } from '../../../../simulations/network/latency.js'
import { type RttTable, parseRttTable } from '../../../../simulations/network/rtt-table.js'

export const RTT_CSV = fileURLToPath(new URL('../../../../../simulations/data/latency/ripe_atlas_country_rtt_stat.csv', import.meta.url))

let table: RttTable | undefined
let matrix: LatencyMatrix | undefined

export function rttText (): string {
  return readFileSync(RTT_CSV, 'utf8')
}

export function rttTable (): RttTable {
  table ??= parseRttTable(rttText())
  return table
}

export function rttMatrix (): LatencyMatrix {
  matrix ??= new LatencyMatrix(rttTable())
  return matrix
}
