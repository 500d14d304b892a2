/**
 * The dependency rules of DESIGN §1, checked on source text: imports flow inward
 * (cli → bootstrap → node → protocol → crypto; simulations → protocol, crypto), and protocol/ and
 * simulations/ stay pure and deterministic (no I/O, no wall clock, no timers, no unseeded randomness).
 * cli/ is the outermost layer (it starts the bootstrap role, so it cannot live inside node/).
 */
export interface SourceFile { path: string, text: string }
export interface Violation { path: string, line: number, rule: string, found: string }

const PURE_DIRS = ['protocol/', 'simulations/']

/** Code with comments blanked out (strings kept), so documentation may mention Date.now(). */
export function stripComments (text: string): string {
  let out = ''
  let i = 0
  let quote: string | undefined
  while (i < text.length) {
    const c = text[i] as string
    const next = text[i + 1]
    if (quote !== undefined) {
      out += c
      if (c === '\\') { out += next ?? ''; i += 2; continue }
      if (c === quote) quote = undefined
      i++
    } else if (c === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2)
      const stop = end === -1 ? text.length : end + 2
      out += text.slice(i, stop).replace(/[^\n]/g, ' ')
      i = stop
    } else {
      if (c === '\'' || c === '"' || c === '`') quote = c
      out += c
      i++
    }
  }
  return out
}

const IMPORT = /\b(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\bimport\s+['"]([^'"]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]/g

const NODE_BUILTINS = new Set(['fs', 'fs/promises', 'net', 'http', 'https', 'http2', 'dgram', 'dns', 'os', 'child_process', 'cluster', 'worker_threads', 'tls', 'readline', 'process', 'perf_hooks', 'timers', 'timers/promises', 'vm'])

/** Calls that read the wall clock, schedule work or draw unseeded randomness. */
const IMPURE_CALLS: Array<[RegExp, string]> = [
  [/\bDate\.now\s*\(/, 'Date.now()'],
  [/\bnew\s+Date\s*\(\s*\)/, 'new Date()'],
  [/\bperformance\.now\s*\(/, 'performance.now()'],
  [/\bprocess\.(hrtime|env|argv|uptime)\b/, 'process state'],
  [/\bMath\.random\s*\(/, 'Math.random()'],
  [/\b(setTimeout|setInterval|setImmediate|queueMicrotask)\s*\(/, 'timer'],
  [/\b(getRandomValues|randomBytes|randomUUID|randomInt|randomNonce)\s*\(/, 'random source'],
  [/\bIdentity\.generate\s*\(/, 'random key generation']
]

function lineOf (text: string, index: number): number {
  return text.slice(0, index).split('\n').length
}

function importRule (path: string, specifier: string): string | undefined {
  const pure = PURE_DIRS.some((dir) => path.startsWith(dir))
  const target = specifier.replace(/^(\.\.\/)+/, '')
  const relativeUp = specifier.startsWith('../')
  if (path.startsWith('crypto/') && relativeUp && /^(protocol|node|bootstrap|simulations|cli)\//.test(target)) return 'crypto/ is a leaf'
  if (path.startsWith('node/') && relativeUp && /^(bootstrap|cli|simulations)\//.test(target)) return `node/ must not import ${target.split('/')[0]}/`
  if (path.startsWith('bootstrap/') && relativeUp && /^(cli|simulations)\//.test(target)) return `bootstrap/ must not import ${target.split('/')[0]}/`
  if (!pure) return undefined
  if (relativeUp && /^(node|bootstrap|cli)\//.test(target)) return `${path.split('/')[0]}/ must not import ${target.split('/')[0]}/`
  if (path.startsWith('protocol/') && relativeUp && target.startsWith('simulations/')) return 'protocol/ must not import simulations/'
  if (/^(libp2p|@libp2p\/|@chainsafe\/|level|classic-level)/.test(specifier)) return `${path.split('/')[0]}/ must not import libp2p or storage`
  const builtin = specifier.replace(/^node:/, '')
  if (specifier.startsWith('node:') || NODE_BUILTINS.has(builtin)) return `${path.split('/')[0]}/ must not import Node built-ins`
  return undefined
}

export function findViolations (files: SourceFile[]): Violation[] {
  const violations: Violation[] = []
  for (const file of files) {
    const code = stripComments(file.text)
    for (const match of code.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3] ?? match[4] ?? ''
      const rule = importRule(file.path, specifier)
      if (rule !== undefined) violations.push({ path: file.path, line: lineOf(code, match.index ?? 0), rule, found: specifier })
    }
    if (!PURE_DIRS.some((dir) => file.path.startsWith(dir))) continue
    code.split('\n').forEach((line, i) => {
      for (const [pattern, what] of IMPURE_CALLS) {
        if (pattern.test(line)) violations.push({ path: file.path, line: i + 1, rule: `${file.path.split('/')[0]}/ must be deterministic`, found: what })
      }
    })
  }
  return violations
}
