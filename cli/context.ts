import { resolve } from 'node:path'
import type { Command } from 'commander'
import { loadCommunityPeers, mergeBootstrapLists } from '../bootstrap/community.js'
import { loadConfig } from '../node/config/load.js'
import type { Config } from '../node/config/schema.js'
import { defaultDataDir } from '../node/data-dir.js'
import { parseLogLevelSpec, withDebugEnv } from '../node/log-levels.js'
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

/**
 * The daemon's loggers: config.log.level (already validated) with libp2p's DEBUG variable read onto it
 * (node/log-levels.ts withDebugEnv; the spec wins where both name a component). DEBUG entries that are
 * not prefixes are named in a warning, not an error: DEBUG also belongs to other tools.
 */
export function loggersOf (config: Config, env: NodeJS.ProcessEnv = process.env): LoggerFactory {
  const format = config.log.format === 'auto' ? (process.stderr.isTTY ? 'pretty' : 'json') : config.log.format
  const { spec, ignored } = withDebugEnv(parseLogLevelSpec(config.log.level), env.DEBUG)
  const loggers = createLoggerFactory({ level: spec, format })
  if (ignored.length > 0) loggers.forComponent('log').warn('DEBUG entries not used: only name prefixes (libp2p:kad-dht*, libp2p:*, *:trace) map onto log levels', { ignored })
  return loggers
}
