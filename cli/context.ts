import { resolve } from 'node:path'
import type { Command } from 'commander'
import { loadCommunityPeers, mergeBootstrapLists } from '../bootstrap/community.js'
import { loadConfig } from '../node/config/load.js'
import type { Config } from '../node/config/schema.js'
import { defaultDataDir } from '../node/data-dir.js'
import { createLoggerFactory, type LoggerFactory } from '../node/logger.js'
import { flagLayers } from './config-flags.js'

export function dataDirOf (command: Command): string {
  const dir = command.opts().dataDir as string | undefined
  return dir !== undefined ? resolve(dir) : defaultDataDir()
}

export async function configOf (command: Command): Promise<Config> {
  return await loadConfig(dataDirOf(command), { flags: flagLayers(command) })
}

export async function bootstrapPeersOf (config: Config): Promise<string[]> {
  return mergeBootstrapLists(config.bootstrap, config.communityBootstrap ? await loadCommunityPeers() : [], config.communityBootstrap)
}

export function loggersOf (config: Config): LoggerFactory {
  const format = config.log.format === 'auto' ? (process.stderr.isTTY ? 'pretty' : 'json') : config.log.format
  return createLoggerFactory({ level: config.log.level, format })
}
