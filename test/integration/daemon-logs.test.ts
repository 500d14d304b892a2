/**
 * The daemon's one logger: gpumesh's and libp2p's lines through the same factory and sink, at the levels
 * of one spec (real daemons over the memory transport, node/daemon.ts → node/libp2p-logger.ts).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseLogLevelSpec } from '../../node/log-levels.js'
import { createLoggerFactory, type LoggerFactory } from '../../node/logger.js'
import { startDaemon } from '../helpers/network.js'

interface Line { time: string, level: string, component: string, msg: string }

describe('daemon logs (gpumesh and libp2p through one logger)', function () {
  this.timeout(60_000)
  let root: string
  before(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-logs-')) })
  after(async () => { await rm(root, { recursive: true, force: true }) })

  /** A bootstrap peer and a node dialling it, both logging at `spec` into `lines`; stopped again. */
  async function run (spec: string): Promise<Line[]> {
    const lines: Line[] = []
    const loggers: LoggerFactory = createLoggerFactory({ level: parseLogLevelSpec(spec), format: 'json', sink: { write: (l) => { lines.push(JSON.parse(l) as Line) } } })
    const bootstrap = await startDaemon(root, {}, { role: 'bootstrap', loggers })
    try {
      const node = await startDaemon(root, { sell: false }, { loggers, dial: [bootstrap.addresses()[0] as string] })
      await node.stop()
    } finally {
      await bootstrap.stop()
    }
    return lines
  }

  it('writes libp2p:kad-dht at debug beside gpumesh\'s own lines, and no other libp2p component', async () => {
    const lines = await run('info,libp2p:kad-dht=debug')
    const libp2p = lines.filter((l) => l.component.startsWith('libp2p'))
    assert.ok(libp2p.length > 0, 'no libp2p lines')
    assert.deepEqual(libp2p.filter((l) => !/^libp2p:kad-dht(:|$)/.test(l.component)), [])
    assert.ok(lines.some((l) => l.component.startsWith('gpumesh:') && l.level === 'info'), 'no gpumesh info lines')
    assert.ok(lines.every((l) => !Number.isNaN(Date.parse(l.time)) && l.time.endsWith('Z')))
  })

  it('writes no libp2p line at info', async () => {
    const lines = await run('info')
    assert.ok(lines.length > 0, 'no gpumesh lines either')
    assert.deepEqual(lines.filter((l) => !l.component.startsWith('gpumesh:')), [])
  })
})
