import assert from 'node:assert/strict'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import type { ComponentLogger } from '@libp2p/interface'
import { memory } from '@libp2p/memory'
import { ping } from '@libp2p/ping'
import { plaintext } from '@libp2p/plaintext'
import { createLibp2p } from 'libp2p'
import { NOOP_LIBP2P_LOGGER, SILENT_LIBP2P_LOGGER, libp2pLogger } from '../../../node/libp2p-logger.js'
import { parseLogLevelSpec } from '../../../node/log-levels.js'
import { createLoggerFactory, type LoggerFactory } from '../../../node/logger.js'

interface Line { time: string, level: string, component: string, msg: string, err?: { name: string, message: string } }

function recording (spec: string, now?: () => number): { loggers: LoggerFactory, lines: Line[] } {
  const lines: Line[] = []
  const loggers = createLoggerFactory({ level: parseLogLevelSpec(spec), format: 'json', sink: { write: (l) => { lines.push(JSON.parse(l) as Line) } }, ...(now !== undefined ? { now } : {}) })
  return { loggers, lines }
}

let counter = 0

/** Two in-process libp2p nodes (memory transport) with `logger`: start, dial, ping, stop. */
async function exercise (logger: ComponentLogger): Promise<void> {
  const make = async (): Promise<Awaited<ReturnType<typeof createLibp2p<{ ping: ReturnType<ReturnType<typeof ping>>, identify: ReturnType<ReturnType<typeof identify>> }>>>> => await createLibp2p({
    addresses: { listen: [`/memory/gpumesh-log-${process.pid}-${counter++}`] },
    transports: [memory()],
    connectionEncrypters: [plaintext()],
    streamMuxers: [yamux()],
    services: { ping: ping(), identify: identify() },
    logger
  })
  const [a, b] = await Promise.all([make(), make()])
  try {
    await a.services.ping.ping(b.getMultiaddrs()[0]!)
  } finally {
    await Promise.all([a.stop(), b.stop()])
  }
}

describe('libp2p component logger (node/libp2p-logger.ts)', function () {
  this.timeout(30_000)

  it('writes a libp2p node\'s lines through gpumesh\'s sink, under libp2p:… names, at debug, with ISO times', async () => {
    const { loggers, lines } = recording('warn,libp2p=debug')
    await exercise(libp2pLogger(loggers))
    assert.ok(lines.length > 0, 'no lines')
    for (const line of lines) {
      assert.match(line.component, /^libp2p(:|$)/)
      assert.ok(line.level === 'debug' || line.level === 'error', JSON.stringify(line))
      assert.match(line.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.equal(typeof line.msg, 'string')
    }
    const components = new Set(lines.map((l) => l.component))
    for (const expected of ['libp2p:memory', 'libp2p:connection-manager']) {
      assert.ok([...components].some((c) => c === expected || c.startsWith(`${expected}:`)), `no ${expected} in ${[...components].join(', ')}`)
    }
    // scopes are components of their own: a connection's log is below its transport's
    assert.ok([...components].some((c) => /^libp2p:memory:.+/.test(c)), `no scoped component in ${[...components].join(', ')}`)
    // libp2p's printf arguments are rendered (no directive left, peer ids spelled out)
    assert.ok(!lines.some((l) => /%[pac]\b/.test(l.msg)), lines.find((l) => /%[pac]\b/.test(l.msg))?.msg)
  })

  it('writes only the components the spec names', async () => {
    const { loggers, lines } = recording('warn,libp2p:memory=debug')
    await exercise(libp2pLogger(loggers))
    assert.ok(lines.length > 0, 'no lines')
    assert.deepEqual(lines.filter((l) => !/^libp2p:memory(:|$)/.test(l.component)), [])
  })

  it('writes nothing of libp2p\'s at info (libp2p is silent unless named), nor at trace for gpumesh', async () => {
    for (const spec of ['info', 'trace', 'debug,gpumesh=trace']) {
      const { loggers, lines } = recording(spec)
      await exercise(libp2pLogger(loggers))
      assert.deepEqual(lines, [], spec)
    }
  })

  it('hands out one shared no-op logger for every disabled component and scope', () => {
    const { loggers, lines } = recording('trace,libp2p:kad-dht=debug,libp2p:tcp=warn')
    const logger = libp2pLogger(loggers)
    const a = logger.forComponent('libp2p:yamux')
    const b = logger.forComponent('libp2p:connection-manager:dial-queue')
    assert.equal(a, NOOP_LIBP2P_LOGGER)
    assert.equal(b, NOOP_LIBP2P_LOGGER)
    assert.equal(logger.forComponent('dns:dns-json-over-https'), NOOP_LIBP2P_LOGGER)
    assert.equal(a.newScope('outbound:1'), NOOP_LIBP2P_LOGGER)
    assert.equal(a.enabled, false)
    assert.equal((a.trace as unknown as { enabled: boolean }).enabled, false)
    a('x %s', 1)
    a.error(new Error('x'))
    a.trace('x')
    assert.deepEqual(lines, [])
    // every component of the silent component logger gets the same one
    assert.equal(SILENT_LIBP2P_LOGGER.forComponent('libp2p:tcp'), NOOP_LIBP2P_LOGGER)
    assert.equal(libp2pLogger(createLoggerFactory({ level: 'silent', format: 'json' })).forComponent('gpumesh:blob'), NOOP_LIBP2P_LOGGER)
  })

  it('maps log() to debug, .trace to trace, .error to error, at each component\'s level', () => {
    const { loggers, lines } = recording('info,libp2p:kad-dht=debug,libp2p:tcp=warn,libp2p:noise=trace', () => Date.UTC(2026, 11, 4, 3, 0, 0, 0))
    const logger = libp2pLogger(loggers)
    const dht = logger.forComponent('libp2p:kad-dht')
    assert.equal(dht.enabled, true)
    assert.equal((dht.trace as unknown as { enabled: boolean }).enabled, false)
    dht('query %s', 'q1')
    dht.trace('not written')
    dht.error('failed: %e', new TypeError('bad'))
    const tcp = logger.forComponent('libp2p:tcp')
    assert.notEqual(tcp, NOOP_LIBP2P_LOGGER, 'errors are written at warn')
    assert.equal(tcp.enabled, false)
    tcp('not written')
    tcp.error('listen failed')
    logger.forComponent('libp2p:noise').newScope('handshake').trace('step %d', 2)
    assert.deepEqual(lines, [
      { time: '2026-12-04T03:00:00.000Z', level: 'debug', component: 'libp2p:kad-dht', msg: 'query q1' },
      { time: '2026-12-04T03:00:00.000Z', level: 'error', component: 'libp2p:kad-dht', msg: 'failed: TypeError: bad', err: { name: 'TypeError', message: 'bad' } },
      { time: '2026-12-04T03:00:00.000Z', level: 'error', component: 'libp2p:tcp', msg: 'listen failed' },
      { time: '2026-12-04T03:00:00.000Z', level: 'trace', component: 'libp2p:noise:handshake', msg: 'step 2' }
    ])
  })

  it('gives gpumesh\'s services, which log through libp2p\'s components, the spec\'s default; other names go under libp2p', () => {
    const { loggers, lines } = recording('debug,gpumesh:probe=warn,libp2p:dns=debug')
    const logger = libp2pLogger(loggers)
    logger.forComponent('gpumesh:blob')('served %s', 'x')
    assert.equal(logger.forComponent('gpumesh:probe').enabled, false)
    logger.forComponent('dns:dns-json-over-https')('resolved')
    assert.deepEqual(lines.map((l) => [l.component, l.msg]), [['gpumesh:blob', 'served x'], ['libp2p:dns:dns-json-over-https', 'resolved']])
  })

  it('keeps a disabled component\'s scopes live when the spec names one below it', () => {
    const { loggers, lines } = recording('info,libp2p:memory:connection=debug')
    const logger = libp2pLogger(loggers)
    const transport = logger.forComponent('libp2p:memory')
    assert.notEqual(transport, NOOP_LIBP2P_LOGGER)
    assert.equal(transport.enabled, false)
    transport('not written')
    transport.newScope('connection')('opened')
    assert.equal(transport.newScope('listener'), NOOP_LIBP2P_LOGGER)
    assert.deepEqual(lines.map((l) => [l.component, l.msg]), [['libp2p:memory:connection', 'opened']])
  })
})
