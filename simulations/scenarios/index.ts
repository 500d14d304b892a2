/** The simulator's scenarios by name (`gpumesh sim --scenario NAME`). */
import { market } from './market.js'
import { UnknownScenarioError, type Scenario } from './scenario.js'

export * from './scenario.js'
export { market, marketWorkload, MARKET_DEFAULTS } from './market.js'

export const SCENARIOS: readonly Scenario[] = [market]

export function scenarioNamed (name: string): Scenario {
  const found = SCENARIOS.find((s) => s.name === name)
  if (found === undefined) throw new UnknownScenarioError(name, SCENARIOS.map((s) => s.name))
  return found
}
