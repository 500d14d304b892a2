/**
 * `no-shows`: providers that win and vanish (issue 10, "Adversaries"). On the `market` workload, 10 % of
 * the fleet's nodes are no-shows — they run their agent and bid like anyone at their owner's floor, then
 * take the award's stream and never answer — and 5 % are undercutters that bid 5 % of their model's list
 * price on every job their GPUs could take and vanish the same way. A silent winner is found out after
 * one lease (10 minutes here), the job re-auctions without it; a stranger's no-show does not use up the
 * job's attempts (issue 9, bug 10). Compared on the same workload: gpumesh without them, and the central
 * matcher that never awards to them (the bound).
 */
import { runAdversarial, type AdversarialSpec } from './adversarial.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'

export const NO_SHOWS_DEFAULTS = Object.freeze({ nodes: 300, jobs: 150 })
export const NO_SHOW_SHARE = 0.10
export const UNDERCUTTER_SHARE = 0.05
/** An undercutter's ask: this share of its model's list price. */
export const UNDERCUT_PRICE_SHARE = 0.05

export const NO_SHOWS_SPEC: AdversarialSpec = {
  name: 'no-shows',
  groups: [
    { name: 'no-show', share: NO_SHOW_SHARE, behaviour: () => ({ noShow: true }), describe: 'bid at their floor, win, never answer the award' },
    {
      name: 'undercutter',
      share: UNDERCUTTER_SHARE,
      behaviour: (node, prices) => ({ undercut: { price: Math.max(1, Math.round((prices.listPrice(node.model) ?? 0) * UNDERCUT_PRICE_SHARE)) }, noShow: true }),
      describe: `bid ${UNDERCUT_PRICE_SHARE * 100} % of list on every job they could take, never answer the award`
    }
  ],
  minRelativeCompletion: 0.9,
  claim: 'honest jobs complete despite no-shows and undercutters (at least 90 % of the completion without them)',
  assumptions: [
    `Adversaries: ${NO_SHOW_SHARE * 100} % of the nodes are no-shows, ${UNDERCUTTER_SHARE * 100} % undercutters asking ${UNDERCUT_PRICE_SHARE * 100} % of list; both keep their GPUs out of the market (the central bound does not use them).`
  ]
}

export const noShows: Scenario = {
  name: 'no-shows',
  summary: `${NO_SHOW_SHARE * 100} % no-shows and ${UNDERCUTTER_SHARE * 100} % undercutters who never deliver: gpumesh with and without them, and the central bound`,
  defaults: NO_SHOWS_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    return runAdversarial(NO_SHOWS_SPEC, data, { ...options, nodes: options.nodes ?? NO_SHOWS_DEFAULTS.nodes, jobs: options.jobs ?? NO_SHOWS_DEFAULTS.jobs })
  }
}
