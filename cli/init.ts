/**
 * `gpumesh init`: create the data dir, the identity and a config.json holding the defaults, or show
 * what is there. With --show-ad, also sign the capability ad this node would serve and open it the
 * way any peer would.
 */
import { cpus, totalmem } from 'node:os'
import { access, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Command } from 'commander'
import { identityPath } from '../crypto/index.js'
import { capabilityKeyCid, capabilityKeys, openMessage, sealMessage } from '../protocol/index.js'
import { buildCapabilityAd, declaredGpuInfos } from '../node/capability-ad.js'
import { CONFIG_FILE, resolveConfig } from '../node/config/load.js'
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

export async function initCommand (command: Command): Promise<void> {
  const dataDir = dataDirOf(command)
  // never a new identity in a data dir that holds another one's records (node/data-dir.ts)
  const { identity, created } = await dataDirIdentity(dataDir)
  const configPath = join(dataDir, CONFIG_FILE)
  const configCreated = !(await exists(configPath))
  // the defaults, with whatever the init flags set (--region, --declare-gpu, …)
  if (configCreated) await writeFile(configPath, `${JSON.stringify(resolveConfig(flagLayers(command)), null, 2)}\n`, { mode: 0o644 })
  const config = await configOf(command)
  const out: Record<string, unknown> = { peerId: identity.peerId, identityFile: identityPath(dataDir), created, configFile: configPath, configCreated }

  if (command.opts().showAd === true) {
    let detected: ReturnType<typeof toGpuInfo>[] = []
    let detection = 'off'
    if (config.provider.detectGpus) {
      try {
        detected = (await detectGpus()).map(toGpuInfo)
        detection = `nvidia-smi: ${detected.length} GPU(s)`
      } catch (err) {
        if (!(err instanceof GpuDetectionError)) throw err
        detection = err.message
      }
    }
    const gpus = [...detected, ...declaredGpuInfos(config.provider.gpus, detected.length)]
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
  const lines = [
    `${created ? 'created' : 'loaded'} identity ${identity.peerId}`,
    `  key file: ${String(out.identityFile)} (mode 0600)`,
    `  config:   ${configPath}${configCreated ? ' (written with the defaults; edit it to sell your GPUs)' : ''}`
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
