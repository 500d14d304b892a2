/**
 * Awarded jobs read back after the provider's daemon restarted (protocol/README.md §7.7 "Resuming"):
 * each offer's signed messages and evidence rebuilt from the store, a completed job's outputs granted
 * to its requester again (grants live in memory; the blobs are on disk), and the offer handed to the
 * agent, which decides whether it goes on (provider-lifecycle.ts restartProviderJob). The run itself
 * was lost with the process: it starts again when the requester re-opens the stream.
 */
import { CID, decodeCanonical } from '../../crypto/index.js'
import { RESTART_SEQ_GAP, type EvidenceRef } from '../../protocol/index.js'
import type { BlobStore } from '../blobs/store.js'
import type { Logger } from '../logger.js'
import { checkManifest } from './manifest.js'
import { newOffer, type Offer, type ProviderRecord } from './provider-offer.js'
import type { MarketStore } from './store.js'

/** The statuses an offer is taken up in. */
const IN_FLIGHT = new Set(['accepted', 'running', 'completed'])
const EVIDENCE: readonly EvidenceRef[] = ['award', 'award-response', 'last-status', 'last-payment', 'receipt']

/**
 * The shell's offer of a record worth taking up, or undefined: not awarded or already final, its
 * requester's lease run out since the last status (it has given the award up), or an envelope missing.
 */
export async function restoreOffer (record: ProviderRecord, store: MarketStore, blobs: BlobStore, now: number, log: Logger): Promise<Offer | undefined> {
  const m = record.machine
  if (m?.award === undefined || !IN_FLIGHT.has(m.status)) return undefined
  if (m.status !== 'completed' && m.lastStatusAt !== undefined && now >= m.lastStatusAt + m.award.leaseMs) return undefined
  const bad = (err: unknown): void => { log.warn('a stored envelope does not open: the job cannot go on', { job: record.job, error: err }) }
  const request = await store.openEnvelope(record.envelopes.request, 'job-request', now, bad)
  const bid = await store.openEnvelope(record.envelopes.bid, 'bid', now, bad)
  const award = await store.openEnvelope(record.envelopes.award, 'award', now, bad)
  if (request === undefined || bid === undefined || award === undefined || award.cid.toString() !== m.award.award) return undefined
  const offer = newOffer(request, record.round, bid)
  offer.award = award
  offer.gpus = [...record.gpus]
  // seq jumps past what may have gone out unrecorded (the agent's own count jumps the same way)
  offer.statusSeq = m.statusSeq + RESTART_SEQ_GAP
  // the run starts again, and its log after the old run's that the requester holds
  offer.logRestarted = m.status !== 'completed'
  for (const ref of EVIDENCE) {
    const cid = record.envelopes[ref]
    const bytes = cid === undefined ? undefined : await store.getEnvelope(cid)
    if (cid === undefined || bytes === undefined) continue
    offer.evidence[ref] = bytes
    offer.envelopes[ref] = cid
  }
  if (m.status === 'completed' && !(await regrantOutputs(offer, record, blobs))) return undefined
  return offer
}

/** A completed job's manifest, outputs and log, granted to its requester again; false when one is gone. */
async function regrantOutputs (offer: Offer, record: ProviderRecord, blobs: BlobStore): Promise<boolean> {
  if (record.manifest === undefined || offer.evidence.receipt === undefined) return false
  const manifest = CID.parse(record.manifest)
  const bytes = await blobs.get(manifest).catch(() => undefined)
  if (bytes === undefined) return false
  const files = checkManifest(decodeCanonical(bytes), offer.request.payload.workload.outputs).files
  const logs = record.logs === undefined ? undefined : CID.parse(record.logs)
  for (const cid of [manifest, ...(logs !== undefined ? [logs] : []), ...files.map((f) => f.cid)]) {
    if (!(await blobs.has(cid))) return false
    blobs.grant(cid, offer.request.signer)
  }
  offer.result = { manifest, ...(logs !== undefined ? { logs } : {}), files }
  return true
}
