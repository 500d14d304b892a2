import assert from 'node:assert/strict'
import { parseLogLevelSpec } from '../../../node/log-levels.js'
import { createLoggerFactory } from '../../../node/logger.js'

const AT = Date.UTC(2026, 11, 4, 3, 0, 0, 0)

function recording (level: Parameters<typeof createLoggerFactory>[0]['level'], format: 'json' | 'pretty' = 'json'): { lines: string[], loggers: ReturnType<typeof createLoggerFactory> } {
  const lines: string[] = []
  return { lines, loggers: createLoggerFactory({ level, format, now: () => AT, sink: { write: (l) => { lines.push(l) } } }) }
}

describe('structured logger (node/logger.ts)', () => {
  it('writes JSON lines with an ISO 8601 UTC time, the level, the component and the fields', () => {
    const { lines, loggers } = recording('info')
    loggers.forComponent('market').info('job awarded', { job: 'bafy', micros: 5n, bytes: new Uint8Array(3), err: new RangeError('x') })
    assert.deepEqual(lines.map((l) => JSON.parse(l) as unknown), [{
      time: '2026-12-04T03:00:00.000Z', level: 'info', component: 'gpumesh:market', msg: 'job awarded', job: 'bafy', micros: '5', bytes: '<3 bytes>', err: { name: 'RangeError', message: 'x' }
    }])
    assert.ok(lines[0]?.endsWith('}\n'))
  })

  it('writes a compact line for a terminal, with the time of day', () => {
    const { lines, loggers } = recording('info', 'pretty')
    loggers.forComponent('gpumesh:api').warn('slow', { ms: 12 })
    assert.deepEqual(lines, ['03:00:00.000 WARN  gpumesh:api slow ms=12\n'])
  })

  it('gives each component its level from the spec, longest prefix first', () => {
    const { lines, loggers } = recording(parseLogLevelSpec('warn,gpumesh:market=debug,gpumesh:market:provider=error'))
    const market = loggers.forComponent('market')
    const provider = loggers.forComponent('market:provider')
    const api = loggers.forComponent('api')
    market.debug('m-debug')
    market.trace('m-trace')
    provider.warn('p-warn')
    provider.error('p-error')
    api.info('a-info')
    api.warn('a-warn')
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as { msg: string }).msg), ['m-debug', 'p-error', 'a-warn'])
    assert.equal(market.enabled('debug'), true)
    assert.equal(market.enabled('trace'), false)
    assert.equal(provider.enabled('warn'), false)
  })

  it('writes nothing at silent', () => {
    const { lines, loggers } = recording('silent')
    loggers.forComponent('node').error('x')
    assert.deepEqual(lines, [])
  })
})
