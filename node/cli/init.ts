import { cpus, totalmem } from 'node:os'
import { identityPath, loadOrCreateIdentity } from '../../crypto/index.js'
import { capabilityKeyCid, capabilityKeys, openMessage, sealMessage } from '../../protocol/index.js'
import { buildCapabilityAd, parseDeclaredGpu } from '../capability-ad.js'
import { UsageError } from './main.js'
import { toJson } from './format.js'

export interface InitOptions {
  dataDir: string
  showAd?: boolean
  declareGpu?: string[]
  region: string
  priceFloor: string
  json?: boolean
}

const AD_TTL_MS = 24 * 3600_000

export async function initCommand (options: InitOptions): Promise<void> {
  const { identity, created } = await loadOrCreateIdentity(options.dataDir)
  const out: Record<string, unknown> = {
    peerId: identity.peerId,
    identityFile: identityPath(options.dataDir),
    created
  }
  if (options.showAd === true) {
    const priceFloor = Math.round(Number(options.priceFloor) * 1e6)
    if (!Number.isSafeInteger(priceFloor) || priceFloor < 0) throw new UsageError(`--price-floor must be a non-negative number of credits, got "${options.priceFloor}"`)
    const gpus = (options.declareGpu ?? []).map(parseDeclaredGpu)
    const now = Date.now()
    const ad = buildCapabilityAd({
      gpus,
      region: options.region,
      priceFloor,
      cpuCores: cpus().length,
      memoryMiB: Math.floor(totalmem() / 2 ** 20),
      diskGiB: 0,
      seq: now,
      ttlMs: AD_TTL_MS
    }, now)
    const sealed = sealMessage(identity, 'capability-ad', ad)
    // open it as any peer would: size, form, schema, freshness and signature
    const opened = openMessage(sealed.bytes, 'capability-ad', { now })
    const keys = capabilityKeys({ gpus, region: options.region })
    out.capabilityAd = {
      cid: sealed.cid.toString(),
      envelopeBytes: sealed.bytes.byteLength,
      envelope: Buffer.from(sealed.bytes).toString('base64'),
      verified: opened.signer === identity.peerId,
      signer: opened.signer,
      payload: opened.payload,
      dhtKeys: keys.map((key) => ({ key, cid: capabilityKeyCid(key).toString() }))
    }
  }
  if (options.json === true) {
    process.stdout.write(`${toJson(out)}\n`)
    return
  }
  process.stdout.write(`${created ? 'created' : 'loaded'} identity ${identity.peerId}\n  key file: ${String(out.identityFile)} (mode 0600)\n`)
  if (out.capabilityAd !== undefined) {
    const ad = out.capabilityAd as { cid: string, envelopeBytes: number, verified: boolean, payload: unknown, dhtKeys: Array<{ key: string, cid: string }> }
    process.stdout.write(`\nsigned capability ad ${ad.cid} (${ad.envelopeBytes}-byte envelope), opened and verified: ${ad.verified ? 'yes' : 'NO'}\n`)
    process.stdout.write(`${toJson(ad.payload)}\n`)
    process.stdout.write(`\nDHT capability keys (${ad.dhtKeys.length}):\n`)
    for (const { key, cid } of ad.dhtKeys) process.stdout.write(`  ${key.padEnd(28)} ${cid}\n`)
  }
}
