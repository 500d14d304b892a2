/** The simulator's scenarios by name (`gpumesh sim --scenario NAME`). */
import { flashCrowdScenario } from './flash-crowd.js'
import { market } from './market.js'
import { scale } from './scale.js'
import { UnknownScenarioError, type Scenario } from './scenario.js'

export * from './scenario.js'
export { market, marketWorkload, MARKET_DEFAULTS } from './market.js'
export { scale, scaleSizes, SCALE_DEFAULTS, SCALE_LADDER } from './scale.js'
export { flashCrowdScenario, flashCrowdWorkload, burstBreakdown, FLASH_CROWD_DEFAULTS, FLASH_CROWD_BURST } from './flash-crowd.js'

export const SCENARIOS: readonly Scenario[] = [market, scale, flashCrowdScenario]

export function scenarioNamed (name: string): Scenario {
  const found = SCENARIOS.find((s) => s.name === name)
  if (found === undefined) throw new UnknownScenarioError(name, SCENARIOS.map((s) => s.name))
  return found
}
