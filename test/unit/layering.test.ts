import assert from 'node:assert/strict'
import { readFile, readdir } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findViolations, stripComments, type SourceFile } from '../helpers/layering.js'

// dist/test/unit → repository root
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

async function sources (dir: string): Promise<SourceFile[]> {
  const out: SourceFile[] = []
  let entries
  try {
    entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })
  } catch {
    return out
  }
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue
    const full = join(entry.parentPath, entry.name)
    out.push({ path: relative(ROOT, full), text: await readFile(full, 'utf8') })
  }
  return out
}

describe('layering (DESIGN §1)', () => {
  it('the source tree follows the dependency rules', async () => {
    const files = (await Promise.all(['crypto', 'protocol', 'simulations', 'node', 'bootstrap', 'cli'].map(sources))).flat()
    assert.ok(files.some((f) => f.path.startsWith('protocol/')), 'protocol/ sources found')
    assert.deepEqual(findViolations(files), [])
  })

  it('catches an I/O import, a libp2p import or a node/ import in protocol/', () => {
    const bad = [
      "import { readFile } from 'node:fs/promises'",
      "import { createLibp2p } from 'libp2p'",
      "import { tcp } from '@libp2p/tcp'",
      "import { startDaemon } from '../node/daemon.js'",
      "const fs = await import('fs')",
      "export { x } from '../../node/x.js'"
    ]
    for (const text of bad) {
      assert.equal(findViolations([{ path: 'protocol/auction.ts', text }]).length, 1, text)
      assert.equal(findViolations([{ path: 'simulations/engine.ts', text }]).length, 1, text)
    }
  })

  it('catches the wall clock, timers and unseeded randomness in protocol/', () => {
    const bad = ['const t = Date.now()', 'const d = new Date()', 'Math.random() < 0.5', 'setTimeout(f, 10)',
      'crypto.getRandomValues(buf)', 'randomBytes(16)', 'performance.now()', 'process.env.X']
    for (const text of bad) assert.equal(findViolations([{ path: 'protocol/x.ts', text }]).length, 1, text)
  })

  it('allows the same things outside the pure layers, and in comments', () => {
    assert.deepEqual(findViolations([{ path: 'node/daemon.ts', text: "import fs from 'node:fs'\nconst t = Date.now()" }]), [])
    assert.deepEqual(findViolations([{ path: 'protocol/x.ts', text: '// never call Date.now() here\n/* or Math.random() */\nconst a = new Date(now)' }]), [])
    assert.equal(stripComments("const url = 'http://x' // note"), "const url = 'http://x' ")
  })

  it('keeps node/ below bootstrap/ and cli/', () => {
    assert.equal(findViolations([{ path: 'node/daemon.ts', text: "import { startBootstrap } from '../bootstrap/role.js'" }]).length, 1)
    assert.equal(findViolations([{ path: 'node/api/server.ts', text: "import { main } from '../../cli/main.js'" }]).length, 1)
    assert.equal(findViolations([{ path: 'bootstrap/role.ts', text: "import { main } from '../cli/main.js'" }]).length, 1)
    assert.deepEqual(findViolations([{ path: 'cli/main.ts', text: "import { startBootstrap } from '../bootstrap/role.js'" }]), [])
  })

  it('keeps crypto/ a leaf', () => {
    assert.equal(findViolations([{ path: 'crypto/x.ts', text: "import { KINDS } from '../protocol/kinds.js'" }]).length, 1)
  })
})
