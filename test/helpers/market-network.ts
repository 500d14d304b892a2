/**
 * What the market integration tests (test/integration/market*.test.ts) share: the GPU their sellers
 * declare, a short-lease market section, the final job statuses, and `useNetwork`, the fixture that
 * starts their network of real daemons (libp2p memory transport) before a suite's tests and stops it
 * after.
 */
import type { Daemon } from '../../node/daemon.js'
import { startNetwork, waitForAnnouncements, type NodeSpec, type TestNetwork } from './network.js'

/** One L40S (48 GB class), declared. */
export const TEST_GPU = 'NVIDIA L40S:46068x1'
/** A 3 s lease and 2 s billing intervals: failures show within seconds, payments during short runs. */
export const SHORT_LEASE_MARKET = { leaseMs: 3_000, billingIntervalSec: 2 }
/** A job in one of these has ended. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['settled', 'failed', 'cancelled', 'expired'])

/** One seller of one L4 (1 credit/GPU-h, region `eu`) and one buyer, both on `market`. */
export function sellerAndBuyer (market: NodeSpec['market']): NodeSpec[] {
  return [
    { region: 'eu', gpus: ['NVIDIA L4:23034'], priceFloor: 1, market },
    { sell: false, market }
  ]
}

export interface NetworkFixture {
  /** The running network (throws before the suite's `before` has run). */
  readonly net: TestNetwork
}

export interface UseNetworkOptions {
  bootstrapCount?: number
  /** The nodes whose DHT announcements to wait for (default: all). */
  announce?: (nodes: Daemon[]) => Daemon[]
  /** How long to wait for them (default 60 s). */
  announceTimeoutMs?: number
}

/**
 * In a mocha suite: start a network of `specs` before its tests, wait until the nodes have announced
 * what they sell, and stop it after the tests. Read the network from the fixture in a later `before`.
 */
export function useNetwork (specs: NodeSpec[], options: UseNetworkOptions = {}): NetworkFixture {
  let net: TestNetwork | undefined
  before(async () => {
    net = await startNetwork(specs, options.bootstrapCount !== undefined ? { bootstrapCount: options.bootstrapCount } : {})
    await waitForAnnouncements(options.announce?.(net.nodes) ?? net.nodes, options.announceTimeoutMs ?? 60_000)
  })
  after(async () => { await net?.stop() })
  return {
    get net (): TestNetwork {
      if (net === undefined) throw new Error('the network has not started: read it in a before hook or a test')
      return net
    }
  }
}
