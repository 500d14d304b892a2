/**
 * The scenario harness (DESIGN §8, issue 9): market agents on a virtual clock and an in-memory bus,
 * no libp2p. A scenario adds providers and requesters, submits jobs with an execution model, runs
 * the clock, and reads the record. Deterministic: the same seed and the same calls give the same
 * record (ids from counters, latencies and losses from the seeded PRNG, ties in scheduling order).
 *
 * ```ts
 * const h = new Harness({ seed: 7 })
 * h.provider('p1', { region: 'eu-west', gpus: { h100: 2 }, floor: credits(2) })
 * const buyer = h.requester('buyer', { region: 'eu-west' })
 * const job = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 10 * 60_000 })
 * h.runUntilQuiet()
 * h.recorder.jobEnding(job)?.status // 'settled'
 * ```
 */
import { createMarketParams, type MarketParams, type MarketParamsInit } from '../../protocol/market/params.js'
import { VirtualScheduler } from '../../protocol/market/scheduler.js'
import { Bus, type Traffic } from './bus.js'
import type { Delivery } from './keyed-delivery.js'
import { IdFactory } from './ids.js'
import { regionNetwork, type NetworkModel } from './network.js'
import { Prng, type Seed } from './prng.js'
import { ProviderNode, type ProviderNodeSpec } from './provider-node.js'
import { Recorder, type LedgerMismatch } from './recorder.js'
import { RequesterNode, type RequesterNodeSpec } from './requester-node.js'
import { DEFAULT_EXECUTION, type Execution, type World } from './world.js'

/** 2024-01-01T00:00Z, a Monday: the default start of a run. */
export const DEFAULT_START = 1_704_067_200_000

export interface HarnessOptions {
  seed?: Seed
  /** The virtual clock's start, ms since the epoch (DEFAULT_START). */
  start?: number
  /** Market parameters for every node (createMarketParams of these). */
  params?: MarketParams | MarketParamsInit
  /** The network model (regionNetwork on the run's PRNG by default). */
  network?: (prng: Prng) => NetworkModel
  /** Blob bandwidth, bytes per second (default 100 MB/s). */
  bandwidthBytesPerSec?: number
  /** Default execution of every job (DEFAULT_EXECUTION's fields otherwise). */
  execution?: Partial<Execution>
  /** Keep the per-message trace (default true; benchmarks turn it off). */
  trace?: boolean
  /** Count messages and bytes per job (Recorder.jobTraffic; default false). */
  perJob?: boolean
  /** A second observer of the bus's traffic, told after the recorder (calibration counts gossip and streams apart). */
  tap?: Traffic
  /** How the bus delivers gossip (keyed-delivery.ts; default `sequential`). */
  delivery?: Delivery
}

export class Harness {
  readonly scheduler: VirtualScheduler
  readonly prng: Prng
  readonly bus: Bus
  readonly recorder: Recorder
  readonly ids = new IdFactory()
  readonly params: MarketParams
  readonly world: World
  readonly providers = new Map<string, ProviderNode>()
  readonly requesters = new Map<string, RequesterNode>()
  private readonly executions = new Map<string, Execution>()
  private readonly defaultExecution: Execution

  constructor (options: HarnessOptions = {}) {
    this.scheduler = new VirtualScheduler(options.start ?? DEFAULT_START)
    this.prng = new Prng(options.seed ?? 1)
    this.params = createMarketParams(options.params ?? {})
    this.recorder = new Recorder(() => this.scheduler.now(), options.trace !== false, options.perJob === true)
    const model = (options.network ?? ((p) => regionNetwork(p)))(this.prng.fork('network'))
    this.bus = new Bus(this.scheduler, model, this.prng.fork('bus'), options.tap === undefined ? this.recorder : teeTraffic(this.recorder, options.tap), options.delivery)
    this.defaultExecution = { ...DEFAULT_EXECUTION, ...options.execution }
    this.world = {
      scheduler: this.scheduler,
      bus: this.bus,
      recorder: this.recorder,
      ids: this.ids,
      params: this.params,
      jobs: new Map(),
      addresses: new Map(),
      bandwidthBytesPerSec: options.bandwidthBytesPerSec ?? 100_000_000,
      execution: (job, provider) => this.executions.get(`${job} ${provider}`) ?? this.executions.get(job) ?? this.defaultExecution,
      setExecution: (job, e, provider) => {
        const base = provider === undefined ? this.defaultExecution : this.executions.get(job) ?? this.defaultExecution
        this.executions.set(provider === undefined ? job : `${job} ${provider}`, { ...base, ...e })
      },
      keepsLedger: (node) => this.keepsLedger(node)
    }
  }

  /**
   * Add a provider named `name` (its peer id is `peer:<name>`). A name that is also a requester's is
   * one node with both roles: one peer id, one place on the bus.
   */
  provider (name: string, spec: ProviderNodeSpec): ProviderNode {
    if (this.providers.has(name)) throw new Error(`harness: provider ${name} exists`)
    const node = new ProviderNode(this.world, name, spec)
    this.providers.set(name, node)
    return node
  }

  /** Add a requester named `name` (with a provider of the same name: one node with both roles). */
  requester (name: string, spec: RequesterNodeSpec): RequesterNode {
    if (this.requesters.has(name)) throw new Error(`harness: requester ${name} exists`)
    const node = new RequesterNode(this.world, name, spec)
    this.requesters.set(name, node)
    return node
  }

  /** How `job` runs (on the provider named `provider` only, when given): overrides its submit-time model. */
  setExecution (job: string, execution: Partial<Execution>, provider?: string): void {
    this.world.setExecution(job, execution, provider)
  }

  /** Run `fn` at virtual time `t` (a scenario's scripted action: a cancel, a crash, a new job). */
  at (t: number, fn: () => void): void {
    this.scheduler.at(t, fn)
  }

  /** Run the clock for `ms`. */
  advance (ms: number): void {
    this.scheduler.advance(ms)
  }

  /** Run the clock until nothing is scheduled or `limitMs` of virtual time has passed. */
  runUntilQuiet (limitMs = 30 * 24 * 3_600_000): void {
    const end = this.scheduler.now() + limitMs
    for (let next = this.scheduler.next(); next !== undefined && next <= end; next = this.scheduler.next()) this.scheduler.step()
  }

  /** Whether `node` (a peer id) keeps an honest ledger: requesters that stop paying and no-show, stalling, undercutting or cheating providers do not. */
  keepsLedger (peerId: string): boolean {
    let known = false
    for (const p of this.providers.values()) {
      if (p.peerId !== peerId) continue
      if (p.behaviour.noShow === true || p.behaviour.stall === true || p.behaviour.undercut !== undefined || p.behaviour.tamperOutputs === true) return false
      known = true
    }
    for (const r of this.requesters.values()) {
      if (r.peerId !== peerId) continue
      if (r.behaviour.stopPayingAfter !== undefined) return false
      known = true
    }
    return known
  }

  /** Awards whose two honest ledgers disagree (recorder.ts, ledgerMismatches). */
  ledgerMismatches (): LedgerMismatch[] {
    return this.recorder.ledgerMismatches((node) => this.keepsLedger(node))
  }
}

/** Both observers, `first` then `second`, told of every message. */
function teeTraffic (first: Traffic, second: Traffic): Traffic {
  return {
    sent: (channel, from, m) => { first.sent(channel, from, m); second.sent(channel, from, m) },
    delivered: (channel, from, to, m) => { first.delivered(channel, from, to, m); second.delivered(channel, from, to, m) },
    lost: (from, to, m) => { first.lost(from, to, m); second.lost(from, to, m) }
  }
}
