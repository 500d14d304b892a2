/**
 * `node dist/scripts/purity/main.js [root]`: run by `npm run build` and `npm run typecheck`. Prints each
 * violation as file:line:column RULE message (with a hint) and exits 1 when there is any.
 */
import { checkLayering, checkPurity, formatViolation } from './check.js'

const root = process.argv[2] ?? process.cwd()
const started = performance.now()
const report = checkPurity(root)
const violations = [...report.violations, ...checkLayering(root)]
const ms = Math.round(performance.now() - started)
if (violations.length > 0) {
  process.stderr.write(`purity: ${violations.length} violation(s) in the pure layers (crypto/, protocol/, simulations/) or the layer rules:\n\n`)
  for (const v of violations) process.stderr.write(`${formatViolation(v)}\n`)
  process.exitCode = 1
} else {
  process.stdout.write(`purity: ${report.checked.length} files in crypto/, protocol/, simulations/ are pure; layer rules hold (${ms} ms)\n`)
}
