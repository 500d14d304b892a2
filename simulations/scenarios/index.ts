/** The simulator's scenarios by name (`gpumesh sim --scenario NAME`). */
import { flashCrowdScenario } from './flash-crowd.js'
import { market } from './market.js'
import { noShows } from './no-shows.js'
import { spam } from './spam.js'
import { churn } from './churn.js'
import { partition } from './partition.js'
import { scale } from './scale.js'
import { sybil } from './sybil.js'
import { cheaters } from './cheaters.js'
import { UnknownScenarioError, type Scenario } from './scenario.js'

export * from './scenario.js'
export { market, marketWorkload, MARKET_DEFAULTS } from './market.js'
export { noShows, NO_SHOWS_DEFAULTS, NO_SHOWS_SPEC } from './no-shows.js'
export { spam, SPAM_DEFAULTS, SPAM_SPEC } from './spam.js'
export { sybil, SYBIL_DEFAULTS, SYBIL_SPEC } from './sybil.js'
export { cheaters, CHEATERS_DEFAULTS, CHEATERS_SPEC } from './cheaters.js'

export { churn, churnOf, CHURN_DEFAULTS, CHURN_BURST, CHURN_FLOOR_RELATIVE_COMPLETION, CHURN_MIN_RELATIVE_COMPLETION } from './churn.js'
export { partition, partitionOf, PARTITION_DEFAULTS, PARTITION_CUT, PARTITION_MIN_RECOVERY } from './partition.js'

export { scale, scaleSizes, SCALE_DEFAULTS, SCALE_LADDER } from './scale.js'
export { flashCrowdScenario, flashCrowdWorkload, burstBreakdown, FLASH_CROWD_DEFAULTS, FLASH_CROWD_BURST } from './flash-crowd.js'

export const SCENARIOS: readonly Scenario[] = [market, scale, flashCrowdScenario, churn, partition, noShows, spam, sybil, cheaters]

export function scenarioNamed (name: string): Scenario {
  const found = SCENARIOS.find((s) => s.name === name)
  if (found === undefined) throw new UnknownScenarioError(name, SCENARIOS.map((s) => s.name))
  return found
}
