/**
 * The community list of bootstrap peers, shipped with the package in bootstrap/peers.json: a JSON
 * array of multiaddrs that end in /p2p/<peer id>. Nodes merge it with their config unless
 * `communityBootstrap` is false.
 */
import { readFile } from 'node:fs/promises'

const PEERS_FILE = new URL('../../bootstrap/peers.json', import.meta.url)

export class CommunityPeersError extends Error {
  override readonly name = 'CommunityPeersError'
}

export function parseCommunityPeers (text: string, source = 'bootstrap/peers.json'): string[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new CommunityPeersError(`${source} is not valid JSON: ${(err as Error).message}`)
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && /^\/.+\/p2p\/[1-9A-HJ-NP-Za-km-z]+$/.test(v))) {
    throw new CommunityPeersError(`${source} must be a JSON array of multiaddrs ending in /p2p/<peer id>`)
  }
  return value
}

export async function loadCommunityPeers (): Promise<string[]> {
  return parseCommunityPeers(await readFile(PEERS_FILE, 'utf8'))
}

/** The bootstrap list a node uses: its own first, then the community's, without duplicates. */
export function mergeBootstrapLists (own: readonly string[], community: readonly string[], useCommunity: boolean): string[] {
  return [...new Set([...own, ...(useCommunity ? community : [])])]
}
