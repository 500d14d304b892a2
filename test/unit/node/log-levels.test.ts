import assert from 'node:assert/strict'
import { LogLevelSpecError, debugEnvLevels, hasDescendantAt, levelOf, parseLogLevelSpec, withDebugEnv, type LogLevelSpecProblem } from '../../../node/log-levels.js'

function problem (text: string): LogLevelSpecError {
  try {
    parseLogLevelSpec(text)
  } catch (err) {
    assert.ok(err instanceof LogLevelSpecError, `expected a LogLevelSpecError for ${JSON.stringify(text)}, got ${String(err)}`)
    return err
  }
  assert.fail(`${JSON.stringify(text)} parsed`)
}

describe('log level spec (node/log-levels.ts)', () => {
  describe('parseLogLevelSpec', () => {
    it('reads a bare level as the default for every component', () => {
      assert.deepEqual(parseLogLevelSpec('debug'), { level: 'debug', components: [] })
      assert.deepEqual(parseLogLevelSpec(' warn '), { level: 'warn', components: [] })
    })

    it('reads per-component overrides, longest first, with info as the default when no bare level is given', () => {
      assert.deepEqual(parseLogLevelSpec('libp2p=error, libp2p:kad-dht=debug,gpumesh:market=trace'), {
        level: 'info',
        // equal lengths in name order: no two entries of one length can both cover a name
        components: [
          { component: 'gpumesh:market', level: 'trace' },
          { component: 'libp2p:kad-dht', level: 'debug' },
          { component: 'libp2p', level: 'error' }
        ]
      })
      // the default may come anywhere
      assert.equal(parseLogLevelSpec('libp2p=debug,warn').level, 'warn')
    })

    it('reads a trailing :* as the prefix itself', () => {
      assert.deepEqual(parseLogLevelSpec('libp2p:*=debug').components, [{ component: 'libp2p', level: 'debug' }])
    })

    const bad: Array<[string, LogLevelSpecProblem, string]> = [
      ['', 'EMPTY', ''],
      ['   ', 'EMPTY', '   '],
      ['info,', 'EMPTY_ENTRY', ''],
      ['info,,libp2p=debug', 'EMPTY_ENTRY', ''],
      ['loud', 'UNKNOWN_LEVEL', 'loud'],
      ['INFO', 'UNKNOWN_LEVEL', 'INFO'],
      ['info,libp2p:kad-dht=verbose', 'UNKNOWN_LEVEL', 'libp2p:kad-dht=verbose'],
      ['libp2p=', 'UNKNOWN_LEVEL', 'libp2p='],
      ['info,debug', 'DUPLICATE_DEFAULT', 'debug'],
      ['libp2p:tcp=debug,libp2p:tcp=trace', 'DUPLICATE_COMPONENT', 'libp2p:tcp=trace'],
      // the same prefix written two ways is still one component
      ['libp2p=debug,libp2p:*=trace', 'DUPLICATE_COMPONENT', 'libp2p:*=trace'],
      ['market=trace', 'BAD_COMPONENT', 'market=trace'],
      ['=debug', 'BAD_COMPONENT', '=debug'],
      ['libp2p::tcp=debug', 'BAD_COMPONENT', 'libp2p::tcp=debug'],
      ['libp2p:kad*=debug', 'BAD_COMPONENT', 'libp2p:kad*=debug'],
      ['libp2p:*:trace=debug', 'BAD_COMPONENT', 'libp2p:*:trace=debug'],
      ['gpumesh market=debug', 'BAD_COMPONENT', 'gpumesh market=debug']
    ]
    for (const [text, code, part] of bad) {
      it(`refuses ${JSON.stringify(text)}: ${code}, naming ${JSON.stringify(part)}`, () => {
        const err = problem(text)
        assert.equal(err.code, code)
        assert.equal(err.part, part)
        if (part.trim() !== '') assert.ok(err.message.includes(part.trim()) || err.message.includes(part.split('=')[0] as string), err.message)
      })
    }
  })

  describe('levelOf', () => {
    const spec = parseLogLevelSpec('warn,libp2p=error,libp2p:kad-dht=debug,libp2p:kad-dht:network=trace,gpumesh:market=trace')

    it('gives the longest entry that covers the name, at : boundaries', () => {
      assert.equal(levelOf(spec, 'libp2p:kad-dht:network'), 'trace')
      assert.equal(levelOf(spec, 'libp2p:kad-dht:network:query'), 'trace')
      assert.equal(levelOf(spec, 'libp2p:kad-dht:providers'), 'debug')
      assert.equal(levelOf(spec, 'libp2p:kad-dht'), 'debug')
      assert.equal(levelOf(spec, 'libp2p:tcp'), 'error')
      assert.equal(levelOf(spec, 'libp2p'), 'error')
      assert.equal(levelOf(spec, 'gpumesh:market'), 'trace')
    })

    it('does not take a prefix of a name part for a component: libp2p:kad-dht does not cover libp2p:kad-dhtx', () => {
      assert.equal(levelOf(spec, 'libp2p:kad-dhtx'), 'error')
      assert.equal(levelOf(spec, 'gpumesh:marketplace'), 'warn')
      assert.equal(levelOf(spec, 'libp2px'), 'warn')
    })

    it('falls back to the default, or to the given fallback', () => {
      assert.equal(levelOf(spec, 'gpumesh:api'), 'warn')
      assert.equal(levelOf(parseLogLevelSpec('debug'), 'libp2p:tcp', 'silent'), 'silent')
      assert.equal(levelOf(spec, 'libp2p:tcp', 'silent'), 'error')
    })

    it('knows when an entry below a component writes at a level', () => {
      assert.equal(hasDescendantAt(spec, 'libp2p:kad-dht', 'error'), true)
      assert.equal(hasDescendantAt(spec, 'libp2p:kad-dht:network', 'error'), false)
      assert.equal(hasDescendantAt(parseLogLevelSpec('libp2p:tcp:x=silent'), 'libp2p:tcp', 'error'), false)
      assert.equal(hasDescendantAt(parseLogLevelSpec('libp2p:tcpx=debug'), 'libp2p:tcp', 'error'), false)
    })
  })

  describe('DEBUG onto the spec', () => {
    it('reads libp2p\'s documented forms', () => {
      assert.deepEqual(debugEnvLevels('libp2p:*').components, [{ component: 'libp2p', level: 'debug' }])
      assert.deepEqual(debugEnvLevels('libp2p:kad-dht*').components, [{ component: 'libp2p:kad-dht', level: 'debug' }])
      assert.deepEqual(debugEnvLevels('libp2p:*,*:trace').components, [{ component: 'gpumesh', level: 'trace' }, { component: 'libp2p', level: 'trace' }])
      assert.deepEqual(debugEnvLevels('libp2p:*:error').components, [{ component: 'libp2p', level: 'error' }])
      assert.deepEqual(debugEnvLevels('libp2p:* -libp2p:tcp*').components, [{ component: 'libp2p:tcp', level: 'silent' }, { component: 'libp2p', level: 'debug' }])
      // other names are put under libp2p, as the bridge names them
      assert.deepEqual(debugEnvLevels('dns:*').components, [{ component: 'libp2p:dns', level: 'debug' }])
    })

    it('lets a skip win and otherwise the more verbose, in any order', () => {
      assert.deepEqual(debugEnvLevels('*:trace,libp2p:*').components.find((c) => c.component === 'libp2p'), { component: 'libp2p', level: 'trace' })
      assert.deepEqual(debugEnvLevels('-libp2p:tcp,libp2p:tcp').components, [{ component: 'libp2p:tcp', level: 'silent' }])
    })

    it('names what it cannot read as a prefix', () => {
      const { components, ignored } = debugEnvLevels('libp2p:*:dial,libp2p:tcp,-libp2p:*:trace')
      assert.deepEqual(components, [{ component: 'libp2p:tcp', level: 'debug' }])
      assert.deepEqual(ignored, ['libp2p:*:dial', '-libp2p:*:trace'])
    })

    it('adds DEBUG\'s entries where the spec does not name the component; the spec wins', () => {
      const { spec } = withDebugEnv(parseLogLevelSpec('warn,libp2p:tcp=error'), 'libp2p:*,libp2p:tcp')
      assert.deepEqual(spec, { level: 'warn', components: [{ component: 'libp2p:tcp', level: 'error' }, { component: 'libp2p', level: 'debug' }] })
      const same = parseLogLevelSpec('info')
      assert.equal(withDebugEnv(same, undefined).spec, same)
      assert.equal(withDebugEnv(same, ' ').spec, same)
    })
  })
})
