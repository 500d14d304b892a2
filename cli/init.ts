/**
 * `gpumesh init`: create the data dir, the identity and a config.json holding the defaults, or show
 * what is there. With --show-ad, also sign the capability ad this node would serve and open it the
 * way any peer would.
 */
import { cpus, totalmem } from 'node:os'
import { access, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Command } from 'commander'
import { identityPath } from '../node/keystore.js'
import { capabilityKeyCid, capabilityKeys, openMessage, sealMessage } from '../protocol/index.js'
import { buildCapabilityAd, declaredGpuInfos } from '../node/capability-ad.js'
import { CONFIG_FILE, mergeLayers, readConfigFile, resolveConfig, type Layer } from '../node/config/load.js'
import { dataDirIdentity } from '../node/data-dir.js'
import { flagLayers } from './config-flags.js'
import { GpuDetectionError, detectGpus, toGpuInfo } from '../node/gpu/nvidia-smi.js'
import { configOf, dataDirOf } from './context.js'
import { toJson } from './format.js'

async function exists (path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}

/** One setting an init flag changed in an existing config.json. */
export interface ConfigChange { field: string, from: unknown, to: unknown, flag: string }

const valueAt = (tree: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((node, key) => node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined, tree)

const leaves = (tree: unknown, prefix = ''): string[] => tree !== null && typeof tree === 'object' && !Array.isArray(tree)
  ? Object.entries(tree as Record<string, unknown>).flatMap(([k, v]) => leaves(v, prefix === '' ? k : `${prefix}.${k}`))
  : [prefix]

/**
 * Apply the init flags (--region, --price-floor, --declare-gpu, …) to config.json: a new file holds
 * the defaults with them; an existing one keeps what it has and gets each flag's setting (validated
 * first, so a bad flag changes nothing). Returns what changed.
 */
async function writeConfig (dataDir: string, flags: Layer[], created: boolean): Promise<ConfigChange[]> {
  const path = join(dataDir, CONFIG_FILE)
  if (created) {
    await writeFile(path, `${JSON.stringify(resolveConfig(flags), null, 2)}\n`, { mode: 0o644 })
    return []
  }
  if (flags.length === 0) return []
  const file = await readConfigFile(dataDir)
  const before = resolveConfig([file])
  const after = resolveConfig([file, ...flags])
  const changes = flags.flatMap((layer) => leaves(layer.values).map((field) => ({ field, from: valueAt(before, field), to: valueAt(after, field), flag: layer.source.replace(/^flag /, '') })))
    .filter((c) => JSON.stringify(c.from) !== JSON.stringify(c.to))
  if (changes.length > 0) await writeFile(path, `${JSON.stringify(mergeLayers([file, ...flags]).values, null, 2)}\n`)
  return changes
}

const shown = (value: unknown): string => JSON.stringify(value)

export async function initCommand (command: Command): Promise<void> {
  const dataDir = dataDirOf(command)
  // never a new identity in a data dir that holds another one's records (node/data-dir.ts)
  const { identity, created } = await dataDirIdentity(dataDir)
  const configPath = join(dataDir, CONFIG_FILE)
  const configCreated = !(await exists(configPath))
  const flags = flagLayers(command)
  const configChanges = await writeConfig(dataDir, flags, configCreated)
  const config = await configOf(command)
  const out: Record<string, unknown> = { peerId: identity.peerId, identityFile: identityPath(dataDir), created, configFile: configPath, configCreated, configChanges }

  if (command.opts().showAd === true) {
    let detected: ReturnType<typeof toGpuInfo>[] = []
    let detection = 'off'
    if (config.provider.detectGpus) {
      try {
        detected = (await detectGpus()).gpus.map((gpu) => toGpuInfo(gpu, config.provider.gpuVramMiB))
        detection = `nvidia-smi: ${detected.length} GPU(s)`
      } catch (err) {
        if (!(err instanceof GpuDetectionError)) throw err
        detection = err.message
      }
    }
    const gpus = [...detected, ...declaredGpuInfos(config.provider.gpus, identity.peerId, detected.length)]
    const now = Date.now()
    const ad = buildCapabilityAd({
      provider: config.provider,
      gpus,
      host: { cpuCores: cpus().length, memoryMiB: Math.floor(totalmem() / 2 ** 20), diskGiB: 0 },
      seq: now,
      addrs: [],
      now
    })
    const sealed = sealMessage(identity, 'capability-ad', ad)
    const opened = openMessage(sealed.bytes, 'capability-ad', { now })
    out.capabilityAd = {
      cid: sealed.cid.toString(),
      envelopeBytes: sealed.bytes.byteLength,
      envelope: Buffer.from(sealed.bytes).toString('base64'),
      verified: opened.signer === identity.peerId,
      signer: opened.signer,
      gpuDetection: detection,
      payload: opened.payload,
      dhtKeys: capabilityKeys({ gpus, region: config.provider.region }).map((key) => ({ key, cid: capabilityKeyCid(key).toString() }))
    }
  }

  if (command.opts().json === true) {
    process.stdout.write(`${toJson(out)}\n`)
    return
  }
  const flagNames = [...new Set(flags.map((l) => l.source.replace(/^flag /, '')))]
  const lines = [
    `${created ? 'created' : 'loaded'} identity ${identity.peerId}`,
    `  key file: ${String(out.identityFile)} (mode 0600)`,
    `  config:   ${configPath}${configCreated
      ? ` (written with the defaults${flagNames.length > 0 ? ` and ${flagNames.join(', ')}` : ''}; edit it, or run init again with flags, to change it)`
      : flags.length === 0 ? '' : configChanges.length === 0 ? ` (unchanged: it already has ${flagNames.join(', ')})` : ' (updated)'}`,
    ...configChanges.map((c) => `    ${c.field}: ${shown(c.from)} → ${shown(c.to)} (${c.flag})`)
  ]
  const ad = out.capabilityAd as { cid: string, envelopeBytes: number, verified: boolean, gpuDetection: string, payload: { gpus: Array<{ name: string, vramMiB: number, provenance: string }>, region: string, price: { floor: number } }, dhtKeys: Array<{ key: string, cid: string }> } | undefined
  if (ad !== undefined) {
    lines.push('', `signed capability ad ${ad.cid} (${ad.envelopeBytes}-byte envelope), opened and verified: ${ad.verified ? 'yes' : 'NO'}`,
      `  GPU detection: ${ad.gpuDetection}`,
      ...ad.payload.gpus.map((g) => `  GPU: ${g.name}, ${g.vramMiB} MiB (${g.provenance})`),
      `  region ${ad.payload.region}, floor ${(ad.payload.price.floor / 1e6).toFixed(2)} credits per GPU-hour`,
      '', `DHT capability keys (${ad.dhtKeys.length}):`, ...ad.dhtKeys.map(({ key, cid }) => `  ${key.padEnd(28)} ${cid}`))
  }
  process.stdout.write(`${lines.join('\n')}\n`)
}
