/**
 * Command-line flags that override the configuration (the highest-priority layer). Only flags the
 * user actually typed become part of the layer, so defaults never mask config.json or GPUMESH_*.
 */
import type { Command } from 'commander'
import { declaredGpuFromSpec, parseSetting, treeAt, type Layer } from '../node/config/load.js'

interface FlagSpec { flag: string, path: string, description: string, parse?: (value: any) => unknown }

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

const FLAGS: FlagSpec[] = [
  { flag: '--listen <multiaddr...>', path: 'listen', description: 'listen addresses (env GPUMESH_LISTEN)' },
  { flag: '--announce <multiaddr...>', path: 'announce', description: 'addresses to announce instead (env GPUMESH_ANNOUNCE)' },
  { flag: '--bootstrap <multiaddr...>', path: 'bootstrap', description: 'bootstrap peers, /…/p2p/<id> (env GPUMESH_BOOTSTRAP)' },
  { flag: '--no-community-bootstrap', path: 'communityBootstrap', description: 'do not use bootstrap/peers.json' },
  { flag: '--allow <multiaddr...>', path: 'connections.allow', description: 'address prefixes exempt from connection limits, e.g. /ip4/127.0.0.1 for a local network' },
  { flag: '--allow-colocation', path: 'gossip.allowColocation', description: 'no gossipsub penalty for many peers on one IP (local networks)' },
  { flag: '--reachability <mode>', path: 'nat.reachability', description: 'auto (AutoNAT decides; relay when behind NAT), public or private' },
  { flag: '--dht-mode <mode>', path: 'dht.mode', description: 'server or client' },
  { flag: '--api-port <port>', path: 'api.port', description: 'local API port (0 = any free port)', parse: Number },
  { flag: '--log-level <spec>', path: 'log.level', description: 'LEVEL[,COMPONENT=LEVEL…]: trace, debug, info (default), warn, error or silent, per component (env GPUMESH_LOG_LEVEL; see below)' },
  { flag: '--log-format <format>', path: 'log.format', description: 'auto, json or pretty' },
  { flag: '--region <region>', path: 'provider.region', description: 'region slug, e.g. eu-west (env GPUMESH_REGION)' },
  { flag: '--country <code>', path: 'provider.country', description: 'ISO 3166-1 alpha-2 country code' },
  { flag: '--price-floor <credits>', path: 'provider.priceFloor', description: 'credits per GPU-hour', parse: Number },
  { flag: '--declare-gpu <spec...>', path: 'provider.gpus', description: 'declare GPUs, e.g. "NVIDIA H100 80GB HBM3:81559x8"', parse: (specs: string[]) => specs.map(declaredGpuFromSpec) },
  { flag: '--no-detect-gpus', path: 'provider.detectGpus', description: 'do not run nvidia-smi' },
  { flag: '--no-sell', path: 'provider.sell', description: 'do not announce or serve a capability ad' },
  { flag: '--windows <spec...>', path: 'provider.availability.windows', description: 'availability, e.g. "Mon-Fri 18:00-08:00"' },
  { flag: '--time-zone <tz>', path: 'provider.availability.timeZone', description: 'IANA time zone of the windows' }
]

/** The option's attribute name as commander stores it. */
function attributeOf (flag: string): string {
  const long = (flag.split(' ')[0] as string).replace(/^--(no-)?/, '')
  return long.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
}

/** Shown after the options of a command that takes --log-level (node/log-levels.ts, node/libp2p-logger.ts). */
export const LOG_LEVEL_HELP = `
Log levels (--log-level, GPUMESH_LOG_LEVEL, log.level in config.json):
  a default level, then COMPONENT=LEVEL overrides; the longest name prefix wins, at ':' boundaries
  (libp2p:kad-dht covers libp2p:kad-dht:network, not libp2p:kad-dhtx); a trailing :* is the same prefix.
    --log-level debug                                    gpumesh's components at debug
    --log-level info,libp2p:kad-dht=debug,gpumesh:market=trace
    --log-level warn,libp2p=error                        libp2p's errors beside gpumesh's warnings
  libp2p's components (libp2p:…) write nothing unless named. DEBUG=libp2p:* (libp2p's switch) is read
  onto the same levels: x:trace → trace, x:error → error, -x → silent, else debug; --log-level wins.
  JSON lines carry time (ISO 8601, UTC), level, component, msg and fields.`

/** Add the config flags whose setting path is in `only` (a list, or a test); all of them without it. */
export function addConfigFlags (command: Command, only?: readonly string[] | ((path: string) => boolean)): Command {
  for (const spec of FLAGS) {
    if (only !== undefined && !(typeof only === 'function' ? only(spec.path) : only.includes(spec.path))) continue
    command.option(spec.flag, spec.description)
    if (spec.path === 'log.level') command.addHelpText('after', LOG_LEVEL_HELP)
  }
  return command
}

/** One layer per flag the user typed, named after the flag so errors point at it. */
export function flagLayers (command: Command): Layer[] {
  const layers: Layer[] = []
  const values = command.opts()
  for (const spec of FLAGS) {
    const name = attributeOf(spec.flag)
    if (command.getOptionValueSource(name) !== 'cli') continue
    const raw = values[name]
    const source = `flag ${spec.flag.split(' ')[0] as string}`
    layers.push({ source, values: treeAt(spec.path, spec.parse !== undefined ? parseSetting(spec.parse, raw, spec.path, source) : raw) })
  }
  return layers
}

export { collect }
