/**
 * `POST /v1/probe?peer=<peer id>[&model=<slug>]`, what `gpumesh probe` calls: probe one provider now
 * against what its ad claims (its first GPU; `model` overrides it) and return the summary — measured vs
 * expected, the device label, `flagged`. The signed result enters this node's reputation view and goes out
 * on the evidence topic (node/trust/prober.ts). 429 RATE_LIMITED when the provider refuses.
 */
import { peerIdFromString } from '@libp2p/peer-id'
import type { PeerId } from '@libp2p/interface'
import { ProbeError } from '../../protocol/trust/probe.js'
import { CapabilityFetchError, type CapabilityService } from '../services/capability.js'
import type { Prober } from '../trust/prober.js'
import { ApiError, type Route } from './server.js'

export function probeRoute (prober: Prober, capability: Pick<CapabilityService, 'fetch'>): Record<string, Route> {
  return {
    'POST /v1/probe': async (query, signal) => {
      const raw = query.get('peer') ?? ''
      let peer: PeerId
      try {
        peer = peerIdFromString(raw)
      } catch {
        throw new ApiError(400, 'BAD_QUERY', `peer must be a peer id (12D3KooW…), got "${raw}"`)
      }
      let model = query.get('model') ?? undefined
      if (model === '') model = undefined
      if (model !== undefined && !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(model)) throw new ApiError(400, 'BAD_QUERY', 'model must be a lower-case slug such as nvidia-h100-80gb-hbm3')
      // without a model the ad says what is claimed; an ad that cannot be fetched leaves the CPU claim (and the ping says whether it answers)
      let fetched = false
      if (model === undefined) {
        try {
          model = (await capability.fetch(peer, { signal })).payload.gpus[0]?.model
          fetched = true
        } catch (err) {
          if (!(err instanceof CapabilityFetchError)) throw err
        }
      }
      try {
        return { ...(await prober.probeNow(peer.toString(), model)), adFetched: fetched }
      } catch (err) {
        if (err instanceof ProbeError && err.code === 'RATE_LIMITED') throw new ApiError(429, 'RATE_LIMITED', err.message)
        throw err
      }
    }
  }
}
