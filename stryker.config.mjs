// StrykerJS over protocol/ and crypto/envelope.ts: `npm run test:mutation` (outside CI's default path).
// Stryker mutates the TypeScript sources in its sandbox, compiles them once (buildCommand, every mutant
// behind a switch), then runs only the unit tests that cover each mutant (perTest coverage).
// MUTATE narrows a run, e.g. MUTATE=protocol/market/pricing.ts npm run test:mutation.
// Static mutants (module-level constants, frozen tables) need a fresh worker and the whole spec each: on
// two cores they cost over an hour, so they are left out unless MUTATION_STATIC=1. Results are kept in
// the report folder (incremental), so a re-run tests only the mutants and tests that changed.
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
  // mutated schemas change the inferred message types the tests compile against: no type checks there
  disableTypeChecks: '{protocol,crypto,test}/**/*.ts',
  mochaOptions: { config: 'stryker.mocharc.json' },
  testRunnerNodeArgs: ['--import', './dist/node/polyfill.js'],
  coverageAnalysis: 'perTest',
  ignoreStatic: process.env.MUTATION_STATIC !== '1',
  incremental: true,
  incrementalFile: `${reports}/stryker-incremental.json`,
  concurrency: 1,
  timeoutMS: 20000,
  ignorePatterns: ['dist', 'coverage', 'reports', '.gpumesh*', 'docker', 'bench'],
  reporters: ['clear-text', 'progress-append-only', 'html', 'json', 'survivors'],
  clearTextReporter: { reportScoreTable: true, reportMutants: false, reportTests: false, allowEmojis: false },
  htmlReporter: { fileName: `${reports}/index.html` },
  jsonReporter: { fileName: `${reports}/mutation.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true
}
