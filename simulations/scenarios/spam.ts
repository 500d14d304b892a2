/**
 * `spam`: bid spammers (issue 10, "Adversaries"). On the `market` workload, 5 % of the fleet's nodes run
 * their agent honestly (bid, deliver) and on top flood every job request and re-opened round they see:
 * 8 more bids under their own identity at the job's price cap, each claiming the GPUs the job asks
 * whatever they have; 16 replays of one of them; 32 bids under made-up peer ids. What the real network
 * does with each (harness/adversaries.ts): its own bids pass the topic validator and reach everyone,
 * and each requester keeps one per peer per round; replays and forgeries stop at the first hop (the
 * replay cache, the signature check), costing that hop's deliveries. Compared on the same workload:
 * gpumesh without spam, and the central matcher (which does not see bids: the bound).
 */
import { DEFAULT_GOSSIP_PARAMS } from '../overlay/gossip-params.js'
import { runAdversarial, type AdversarialSpec } from './adversarial.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'

export const SPAM_DEFAULTS = Object.freeze({ nodes: 250, jobs: 125 })
export const SPAMMER_SHARE = 0.05
export const SPAM = Object.freeze({ own: 8, replays: 16, forged: 32, firstHop: DEFAULT_GOSSIP_PARAMS.D })

export const SPAM_SPEC: AdversarialSpec = {
  name: 'spam',
  groups: [{
    name: 'spammer',
    share: SPAMMER_SHARE,
    behaviour: () => ({ spam: { ...SPAM } }),
    describe: `honest bidders that add, per job and round, ${SPAM.own} own bids at the cap claiming the job's GPUs, ${SPAM.replays} replays and ${SPAM.forged} forged bids`
  }],
  minRelativeCompletion: 0.95,
  claim: 'bid spam does not stop honest jobs (at least 95 % of the completion without it)',
  assumptions: [
    `Spammers: ${SPAMMER_SHARE * 100} % of the nodes; a replay or forgery reaches the spammer's ${SPAM.firstHop} gossip mesh peers (gossipsub's D) and stops there. A spammer's own bid claiming GPUs it lacks can win a job nobody else bids on; its agent then refuses the award. The central bound does not place jobs on spammers' nodes.`
  ]
}

export const spam: Scenario = {
  name: 'spam',
  summary: `${SPAMMER_SHARE * 100} % of nodes flood every job with bids (own, replayed, forged): gpumesh with and without them, and the central bound`,
  defaults: SPAM_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    return runAdversarial(SPAM_SPEC, data, { ...options, nodes: options.nodes ?? SPAM_DEFAULTS.nodes, jobs: options.jobs ?? SPAM_DEFAULTS.jobs })
  }
}
