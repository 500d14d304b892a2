/**
 * The layer rules of DESIGN §1, as data. Imports flow inward: cli → bootstrap → node → protocol → crypto;
 * simulations → protocol, crypto; calibration → bootstrap, node, simulations (real daemons against the model); cli →
 * calibration. crypto/, protocol/ and simulations/ are pure: ECMAScript only (their
 * tsconfig.json: no Node types, no DOM), no wall clock, no randomness, no host globals.
 */

/** The pure folders, each with a tsconfig.json extending tsconfig.pure.json. */
export const PURE_LAYERS = ['crypto', 'protocol', 'simulations'] as const

/** What each layer may import (besides packages). A layer not listed here may import any layer not below it. */
export const ALLOWED_LAYERS: Record<string, readonly string[]> = {
  crypto: ['crypto'],
  protocol: ['protocol', 'crypto'],
  simulations: ['simulations', 'protocol', 'crypto'],
  node: ['node', 'protocol', 'crypto'],
  bootstrap: ['bootstrap', 'node', 'protocol', 'crypto'],
  calibration: ['calibration', 'bootstrap', 'node', 'simulations', 'protocol', 'crypto']
}

/**
 * Packages the pure folders may import: each checked to do no I/O and to need no Node types. Add one
 * only after checking the same (its .d.ts must not reference Node; the check below enforces that part).
 */
export const PURE_PACKAGES: readonly string[] = [
  '@ipld/dag-cbor', '@noble/ed25519', '@noble/hashes', 'cborg', 'multiformats', 'uint8arrays', 'zod'
]

/** The rule codes a violation carries (stable: tests and scripts match on them). */
export type PurityRule =
  | 'COMPILE' // the pure tsconfig does not compile it (a Node global, a DOM name, a node: module…)
  | 'LAYER' // an import against the dependency direction
  | 'BUILTIN' // a Node built-in module
  | 'PACKAGE' // a package not on PURE_PACKAGES
  | 'NODE_TYPES' // a package (or file) that pulls in Node or DOM types
  | 'COMPUTED_IMPORT' // import(expr): the target cannot be checked
  | 'WALL_CLOCK' // Date.now, Date['now'], new Date(), Date(), DateTimeFormat#format()
  | 'RANDOM' // Math.random
  | 'HOST_ESCAPE' // globalThis, eval, Function, import.meta: ways around the compiler's view of globals
  | 'NONDETERMINISM' // WeakRef, FinalizationRegistry: results depend on the garbage collector
  | 'HOST_LOCALE' // local-time Date methods, toLocale*(), localeCompare, Intl without a locale or time zone
  | 'AMBIENT' // declare …: a pure file re-declaring host globals or modules

/** Hints printed with each rule, so a failure says what to do. */
export const HINTS: Record<PurityRule, string> = {
  COMPILE: 'pure code sees ECMAScript only: pass time, randomness and I/O in as arguments (node/ is the shell)',
  LAYER: 'imports flow inward only (DESIGN §1): move the code, or pass the value in from the outer layer',
  BUILTIN: 'Node built-ins belong in node/',
  PACKAGE: 'vet the package (no I/O, no Node types) and add it to PURE_PACKAGES in scripts/purity/rules.ts',
  NODE_TYPES: 'a package whose types need Node (or the DOM) cannot be used in pure code',
  COMPUTED_IMPORT: 'import only string-literal specifiers, so the target can be checked',
  WALL_CLOCK: 'take the time as an argument (`now`) or from the injected Scheduler',
  RANDOM: 'take randomness as an argument (a nonce, a seed, a seeded PRNG)',
  HOST_ESCAPE: 'reach no host global around the type checker',
  NONDETERMINISM: 'garbage-collector-dependent behaviour breaks deterministic replay',
  HOST_LOCALE: 'the host\'s time zone and locale differ between machines: use UTC methods and name the locale and timeZone',
  AMBIENT: 'pure files declare no ambient globals or modules; scripts/purity/pure-globals.d.ts is the one list'
}
