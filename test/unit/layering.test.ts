import assert from 'node:assert/strict'
import { checkLayering, checkPurity, formatViolation, type PurityReport, type PurityViolation } from '../../scripts/purity/check.js'
import type { PurityRule } from '../../scripts/purity/rules.js'
import { ROOT, pureTree, type PureTree } from '../helpers/layering.js'

/** [file, line, rule, text the message must contain] */
type Expected = [string, number, PurityRule, string]

// Every violation the check must catch, each in its own file of a throw-away pure tree: all checked by
// one compiler program, so the suite stays fast.
const CASES: Array<{ files: Record<string, string>, expect: Expected[] }> = [
  { files: { 'protocol/builtin.ts': "import { readFileSync } from 'node:fs'\nexport const r = readFileSync\n" }, expect: [['protocol/builtin.ts', 1, 'BUILTIN', "'node:fs'"]] },
  { files: { 'protocol/bare-builtin.ts': "import { join } from 'path'\nexport const j = join\n" }, expect: [['protocol/bare-builtin.ts', 1, 'BUILTIN', "'path'"]] },
  { files: { 'protocol/reexport.ts': "export { readFile } from 'node:fs/promises'\n" }, expect: [['protocol/reexport.ts', 1, 'BUILTIN', "'node:fs/promises'"]] },
  {
    // protocol/ → a crypto/ barrel → node/: the barrel's re-export is named
    files: {
      'node/leak.ts': "import { readFileSync } from 'node:fs'\nexport const leak = readFileSync\n",
      'crypto/barrel.ts': "export * from './fine.js'\nexport * from '../node/leak.js'\n",
      'crypto/fine.ts': 'export const fine = 1\n',
      'protocol/through-barrel.ts': "import { leak, fine } from '../crypto/barrel.js'\nexport const x = [leak, fine]\n"
    },
    expect: [['crypto/barrel.ts', 2, 'LAYER', 'crypto/ must not import node/']]
  },
  { files: { 'crypto/builtin-barrel.ts': "export * from 'node:crypto'\n" }, expect: [['crypto/builtin-barrel.ts', 1, 'BUILTIN', "'node:crypto'"]] },
  {
    files: {
      'protocol/dynamic.ts': "export async function load (): Promise<unknown> {\n  return await import('node:fs')\n}\n",
      'protocol/dynamic-layer.ts': "export async function load (): Promise<unknown> {\n  return await import('../node/leak.js')\n}\n",
      'protocol/dynamic-computed.ts': "export async function load (name: string): Promise<unknown> {\n  return await import(name)\n}\n"
    },
    expect: [
      ['protocol/dynamic.ts', 2, 'BUILTIN', "'node:fs'"],
      ['protocol/dynamic-layer.ts', 2, 'LAYER', 'protocol/ must not import node/'],
      ['protocol/dynamic-computed.ts', 2, 'COMPUTED_IMPORT', 'not a string literal']
    ]
  },
  { files: { 'protocol/process.ts': 'export const home = process.env.HOME\n' }, expect: [['protocol/process.ts', 1, 'COMPILE', "'process'"]] },
  { files: { 'protocol/console.ts': "export function say (): void {\n  console.log('hi')\n}\n" }, expect: [['protocol/console.ts', 2, 'COMPILE', "'console'"]] },
  { files: { 'protocol/timer.ts': 'export function later (f: () => void): void {\n  setTimeout(f, 10)\n}\n' }, expect: [['protocol/timer.ts', 2, 'COMPILE', "'setTimeout'"]] },
  { files: { 'protocol/buffer.ts': "export const b = Buffer.from('x')\n" }, expect: [['protocol/buffer.ts', 1, 'COMPILE', "'Buffer'"]] },
  { files: { 'protocol/performance.ts': 'export const t = performance.now()\n' }, expect: [['protocol/performance.ts', 1, 'COMPILE', "'performance'"]] },
  { files: { 'protocol/webcrypto.ts': 'export const r = crypto.getRandomValues(new Uint8Array(4))\n' }, expect: [['protocol/webcrypto.ts', 1, 'COMPILE', "'crypto'"]] },
  { files: { 'protocol/date-now.ts': 'export const t = Date.now()\n' }, expect: [['protocol/date-now.ts', 1, 'WALL_CLOCK', 'Date.now']] },
  { files: { 'protocol/date-index.ts': "export const t = Date['now']()\n" }, expect: [['protocol/date-index.ts', 1, 'WALL_CLOCK', 'Date.now']] },
  { files: { 'protocol/date-computed.ts': "const key = 'now' as const\nexport const t = Date[key]()\n" }, expect: [['protocol/date-computed.ts', 2, 'WALL_CLOCK', 'computed member of Date']] },
  { files: { 'simulations/new-date.ts': 'export const d = new Date()\n' }, expect: [['simulations/new-date.ts', 1, 'WALL_CLOCK', 'new Date()']] },
  { files: { 'protocol/date-call.ts': 'export const s = Date()\n' }, expect: [['protocol/date-call.ts', 1, 'WALL_CLOCK', 'Date()']] },
  { files: { 'protocol/date-alias.ts': 'const D = Date\nexport const t = D.now()\n' }, expect: [['protocol/date-alias.ts', 1, 'WALL_CLOCK', 'Date used as a value']] },
  { files: { 'protocol/intl.ts': "export const s = new Intl.DateTimeFormat('en-GB').format()\n" }, expect: [['protocol/intl.ts', 1, 'WALL_CLOCK', 'DateTimeFormat#format()']] },
  {
    files: {
      'protocol/local-hours.ts': 'export const h = (d: Date): number => d.getHours()\n',
      'protocol/local-string.ts': 'export const s = (d: Date): string => d.toString() + d.toLocaleString(\'en-GB\')\n',
      'protocol/number-locale.ts': 'export const s = (n: number): string => n.toLocaleString()\n',
      'protocol/locale-compare.ts': "export const c = (a: string, b: string): number => a.localeCompare(b)\n",
      'protocol/intl-no-locale.ts': 'export const f = new Intl.NumberFormat()\n',
      'protocol/intl-no-zone.ts': "export const f = new Intl.DateTimeFormat('en-US', { hour: 'numeric' })\n"
    },
    expect: [
      ['protocol/local-hours.ts', 1, 'HOST_LOCALE', 'Date#getHours()'],
      ['protocol/local-string.ts', 1, 'HOST_LOCALE', 'Date#toString()'],
      ['protocol/local-string.ts', 1, 'HOST_LOCALE', 'toLocaleString() without a locale and a timeZone'],
      ['protocol/number-locale.ts', 1, 'HOST_LOCALE', 'toLocaleString() without a locale'],
      ['protocol/locale-compare.ts', 1, 'HOST_LOCALE', 'localeCompare()'],
      ['protocol/intl-no-locale.ts', 1, 'HOST_LOCALE', 'Intl.NumberFormat without a locale'],
      ['protocol/intl-no-zone.ts', 1, 'HOST_LOCALE', 'Intl.DateTimeFormat without a timeZone']
    ]
  },
  { files: { 'protocol/random.ts': 'export const r = Math.random()\n' }, expect: [['protocol/random.ts', 1, 'RANDOM', 'Math.random']] },
  { files: { 'crypto/random-index.ts': "export const r = Math['random']()\n" }, expect: [['crypto/random-index.ts', 1, 'RANDOM', 'Math.random']] },
  { files: { 'protocol/math-alias.ts': 'const M = Math\nexport const r = M.random()\n' }, expect: [['protocol/math-alias.ts', 1, 'RANDOM', 'Math used as a value']] },
  {
    files: {
      'protocol/global-this.ts': 'export const p: unknown = (globalThis as any).process\n',
      'protocol/global-date.ts': 'const g = globalThis as unknown as { Date: { now (): number } }\nexport const t = g.Date.now()\n',
      'protocol/eval.ts': "export const t: unknown = eval('Date.now()')\n",
      'protocol/function.ts': "export const t: unknown = new Function('return Date.now()')()\n",
      'protocol/import-meta.ts': 'export const u = import.meta.url\n'
    },
    expect: [
      ['protocol/global-this.ts', 1, 'HOST_ESCAPE', 'globalThis'],
      ['protocol/global-date.ts', 1, 'HOST_ESCAPE', 'globalThis'],
      ['protocol/eval.ts', 1, 'HOST_ESCAPE', 'eval'],
      ['protocol/function.ts', 1, 'HOST_ESCAPE', 'Function'],
      ['protocol/import-meta.ts', 1, 'HOST_ESCAPE', 'import.meta']
    ]
  },
  { files: { 'protocol/weak-ref.ts': 'export const w = new WeakRef({})\n' }, expect: [['protocol/weak-ref.ts', 1, 'NONDETERMINISM', 'WeakRef']] },
  {
    files: { 'protocol/ambient.ts': 'declare const process: { env: Record<string, string> }\nexport const e = process.env\n' },
    expect: [['protocol/ambient.ts', 1, 'AMBIENT', 'declare']]
  },
  {
    files: {
      'simulations/engine.ts': "import { leak } from '../node/leak.js'\nexport const e = leak\n",
      'protocol/up.ts': "import { e } from '../simulations/engine.js'\nexport const u = e\n",
      'crypto/up.ts': "import { u } from '../protocol/up.js'\nexport const c = u\n"
    },
    expect: [
      ['simulations/engine.ts', 1, 'LAYER', 'simulations/ must not import node/'],
      ['protocol/up.ts', 1, 'LAYER', 'protocol/ must not import simulations/'],
      ['crypto/up.ts', 1, 'LAYER', 'crypto/ must not import protocol/']
    ]
  }
]

// Allowed: a local named Date or Math, Date with an argument, Date.UTC/parse, instanceof, types, a
// vetted package, protocol → crypto, TextEncoder, DateTimeFormat#format(date), and all of it in comments.
const CLEAN = `import { CID } from 'multiformats/cid'
import { fine } from '../crypto/fine.js'
// Date.now() and Math.random() in a comment; /* new Date() */
export function at (now: number, zone: Intl.DateTimeFormat): string {
  const Date = { now: (): number => now }
  return zone.format(Date.now())
}
export const t = (d: Date): number => d.getTime() + Date.UTC(2026, 0, 1) + Date.parse('2026-01-01T00:00:00Z') + Math.max(1, fine)
export const isDate = (x: unknown): boolean => x instanceof Date
export const bytes = new TextEncoder().encode('x')
export const day = new Date(0)
export const utc = (d: Date): string => String(d.getUTCHours()) + d.toISOString() + d.toLocaleString('en-GB', { timeZone: 'UTC' })
export const zoned = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Berlin', hour: 'numeric' })
export const sorted = ['b', 'a'].sort((a, b) => a.localeCompare(b, 'en'))
export type Id = CID
`

describe('layering and purity (DESIGN §1, scripts/purity)', function () {
  this.timeout(120_000)
  let tree: PureTree
  let report: PurityReport

  before(() => {
    tree = pureTree()
    for (const c of CASES) for (const [path, text] of Object.entries(c.files)) tree.write(path, text)
    tree.write('protocol/clean.ts', CLEAN)
    report = checkPurity(tree.root)
  })

  after(() => tree.remove())

  for (const c of CASES) {
    for (const [file, line, rule, text] of c.expect) {
      it(`catches ${rule} in ${file}:${line} (${text})`, () => {
        const found = report.violations.filter((v) => v.file === file && v.line === line && v.rule === rule)
        assert.ok(found.some((v) => v.message.includes(text)),
          `expected ${rule} at ${file}:${line} mentioning ${text}; got:\n${report.violations.filter((v) => v.file === file).map(formatViolation).join('\n')}`)
      })
    }
  }

  it('reports nothing in the clean file, and nothing outside the planted violations', () => {
    const planted = new Set(CASES.flatMap((c) => c.expect.map(([file]) => file)))
    // a LAYER violation can make a file's imports unresolvable in turn (e.g. through-barrel.ts): allowed
    const stray = report.violations.filter((v) => !planted.has(v.file) && v.file !== 'protocol/through-barrel.ts')
    assert.deepEqual(stray.map(formatViolation), [])
    assert.ok(report.checked.includes('protocol/clean.ts'))
  })

  it('names the file, line, column, rule and a hint in its message', () => {
    const v = report.violations.find((x) => x.file === 'protocol/date-now.ts') as PurityViolation
    assert.equal(formatViolation(v).split('\n')[0], 'protocol/date-now.ts:1:18 WALL_CLOCK Date.now reads the wall clock')
    assert.match(formatViolation(v), /→ take the time as an argument/)
  })

  it('catches a package whose types need Node (in a tree of its own, as the Node types would declare process for every other case)', () => {
    const t = pureTree()
    try {
      t.write('protocol/needs-node.ts', "import { readIt } from 'needs-node'\nexport const r = readIt\n")
      t.write('protocol/process.ts', 'export const home = process.env.HOME\n')
      const found = checkPurity(t.root).violations.map((v) => `${v.file}:${v.line} ${v.rule} ${v.message}`)
      assert.deepEqual(found.sort(), [
        'node_modules/needs-node/index.d.ts:1 NODE_TYPES package needs-node references the Node types (/// <reference types="node" />)',
        "protocol/needs-node.ts:1 PACKAGE imports 'needs-node', not a vetted pure package"
      ])
    } finally {
      t.remove()
    }
  })

  it('fails a pure folder whose tsconfig.json is broken', () => {
    const bare = pureTree()
    try {
      bare.write('simulations/tsconfig.json', '{ not json')
      const r = checkPurity(bare.root)
      assert.ok(r.violations.some((v) => v.file === 'simulations/tsconfig.json' && v.rule === 'COMPILE'))
    } finally {
      bare.remove()
    }
  })

  it('keeps node/ below bootstrap/ and cli/, and bootstrap/ below cli/ (including dynamic imports)', () => {
    const t = pureTree()
    try {
      t.write('node/daemon.ts', "import { startBootstrap } from '../bootstrap/role.js'\nexport const s = startBootstrap\n")
      t.write('node/api/server.ts', "export const m = async (): Promise<unknown> => await import('../../cli/main.js')\n")
      t.write('node/ok.ts', "import { KINDS } from '../protocol/kinds.js'\nimport { readFile } from 'node:fs'\nexport const k = [KINDS, readFile]\n")
      t.write('bootstrap/role.ts', "export { main } from '../cli/main.js'\nexport const startBootstrap = 1\n")
      t.write('cli/main.ts', "import { startBootstrap } from '../bootstrap/role.js'\nexport const main = startBootstrap\n")
      const found = checkLayering(t.root).map((v) => `${v.file}:${v.line} ${v.rule} ${v.message}`)
      assert.deepEqual(found.sort(), [
        "bootstrap/role.ts:1 LAYER bootstrap/ must not import cli/ ('../cli/main.js')",
        "node/api/server.ts:1 LAYER node/ must not import cli/ ('../../cli/main.js')",
        "node/daemon.ts:1 LAYER node/ must not import bootstrap/ ('../bootstrap/role.js')"
      ])
    } finally {
      t.remove()
    }
  })

  it('passes the source tree as it is', () => {
    const real = checkPurity(ROOT)
    assert.ok(real.checked.some((f) => f.startsWith('protocol/')) && real.checked.some((f) => f.startsWith('crypto/')))
    assert.deepEqual([...real.violations, ...checkLayering(ROOT)].map(formatViolation), [])
  })
})
