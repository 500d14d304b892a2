// StrykerJS over protocol/ and crypto/envelope.ts: `npm run test:mutation` (outside CI's default path).
// Stryker mutates the TypeScript sources in its sandbox, compiles them once (buildCommand, every mutant
// behind a switch), then runs only the unit tests that cover each mutant (perTest coverage).
// MUTATE narrows a run, e.g. MUTATE=protocol/market/pricing.ts npm run test:mutation.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

// mocha 12 under Stryker's mocha runner 9.5: see stryker.mocha12.cjs (this process, then the workers).
const shim = fileURLToPath(new URL('./stryker.mocha12.cjs', import.meta.url))
createRequire(import.meta.url)(shim)
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${shim}`.trim()

const reports = process.env.MUTATION_REPORTS ?? 'reports/mutation'
const mutate = process.env.MUTATE
  ? process.env.MUTATE.split(',')
  : ['protocol/**/*.ts', '!protocol/**/index.ts', '!protocol/market/types.ts', 'crypto/envelope.ts']

export default {
  packageManager: 'npm',
  testRunner: 'mocha',
  plugins: ['@stryker-mutator/mocha-runner', './stryker.survivors.mjs'],
  mutate,
  buildCommand: 'npx tsc -p tsconfig.stryker.json',
  disableTypeChecks: '{protocol,crypto}/**/*.ts',
  mochaOptions: { config: 'stryker.mocharc.json' },
  testRunnerNodeArgs: ['--import', './dist/node/polyfill.js'],
  coverageAnalysis: 'perTest',
  concurrency: 1,
  timeoutMS: 20000,
  ignorePatterns: ['dist', 'coverage', 'reports', '.gpumesh*', 'docker', 'simulations', 'bench'],
  reporters: ['clear-text', 'progress-append-only', 'html', 'json', 'survivors'],
  clearTextReporter: { reportScoreTable: true, reportMutants: false, reportTests: false, allowEmojis: false },
  htmlReporter: { fileName: `${reports}/index.html` },
  jsonReporter: { fileName: `${reports}/mutation.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true
}
