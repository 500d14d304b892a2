/**
 * A throw-away copy of the pure-folder set-up (tsconfig.pure.json, each folder's tsconfig.json,
 * scripts/purity/pure-globals.d.ts) with the source files a test writes, for scripts/purity to check.
 * Its node_modules links the project's packages and adds `needs-node`, a package whose types
 * reference Node, as a pure folder must not import.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

// dist/test/helpers → repository root
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

export interface PureTree {
  readonly root: string
  write (path: string, text: string): void
  remove (): void
}

export function pureTree (): PureTree {
  const root = mkdtempSync(join(tmpdir(), 'gpumesh-purity-'))
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  write('package.json', JSON.stringify({ name: 'purity-fixture', private: true, type: 'module' }))
  cpSync(join(ROOT, 'tsconfig.pure.json'), join(root, 'tsconfig.pure.json'))
  cpSync(join(ROOT, 'scripts', 'purity', 'pure-globals.d.ts'), join(root, 'scripts', 'purity', 'pure-globals.d.ts'))
  for (const layer of ['crypto', 'protocol', 'simulations']) cpSync(join(ROOT, layer, 'tsconfig.json'), join(root, layer, 'tsconfig.json'))
  mkdirSync(join(root, 'node_modules'))
  for (const name of ['multiformats', '@types']) {
    mkdirSync(dirname(join(root, 'node_modules', name)), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules', name), join(root, 'node_modules', name))
  }
  write('node_modules/needs-node/package.json', JSON.stringify({ name: 'needs-node', version: '1.0.0', type: 'module', types: 'index.d.ts', main: 'index.js' }))
  write('node_modules/needs-node/index.d.ts', '/// <reference types="node" />\nexport declare function readIt (): Buffer\n')
  write('node_modules/needs-node/index.js', "export function readIt () { return Buffer.from('') }\n")
  return { root, write, remove: () => rmSync(root, { recursive: true, force: true }) }
}
