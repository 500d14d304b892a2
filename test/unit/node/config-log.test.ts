import assert from 'node:assert/strict'
import { Command } from 'commander'
import { addConfigFlags, flagLayers } from '../../../cli/config-flags.js'
import { loggersOf } from '../../../cli/context.js'
import { ConfigError, envLayers, resolveConfig } from '../../../node/config/load.js'
import { levelOf } from '../../../node/log-levels.js'

function configError (run: () => unknown): ConfigError {
  try {
    run()
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err))
    return err
  }
  assert.fail('no ConfigError')
}

/** The layer `gpumesh node start` makes of its flags. */
function flags (...argv: string[]): ReturnType<typeof flagLayers> {
  const command = addConfigFlags(new Command('start').exitOverride(), ['log.level'])
  command.parse(argv, { from: 'user' })
  return flagLayers(command)
}

const SPEC = 'info,libp2p:kad-dht=debug,gpumesh:market=trace'

describe('log.level in the configuration', () => {
  it('is info by default and takes a per-component spec from config.json, GPUMESH_LOG_LEVEL or --log-level, as written', () => {
    assert.equal(resolveConfig([]).log.level, 'info')
    assert.equal(resolveConfig([{ source: 'config.json', values: { log: { level: SPEC } } }]).log.level, SPEC)
    assert.equal(resolveConfig(envLayers({ GPUMESH_LOG_LEVEL: SPEC })).log.level, SPEC)
    assert.equal(resolveConfig([...envLayers({ GPUMESH_LOG_LEVEL: 'warn' }), ...flags('--log-level', SPEC)]).log.level, SPEC)
  })

  it('reads back the same when a resolved config is written out and loaded again (gpumesh init)', () => {
    const config = resolveConfig(flags('--log-level', SPEC))
    assert.deepEqual(resolveConfig([{ source: 'config.json', values: JSON.parse(JSON.stringify(config)) as Record<string, unknown> }]), config)
  })

  it('refuses a bad spec at load, naming the entry and where it came from', () => {
    const cases: Array<[ReturnType<typeof flags>, string, RegExp]> = [
      [flags('--log-level', 'info,libp2p:kad-dht=verbose'), 'flag --log-level', /unknown level "verbose" in "libp2p:kad-dht=verbose"/],
      [envLayers({ GPUMESH_LOG_LEVEL: 'info,market=trace' }), 'GPUMESH_LOG_LEVEL', /bad component "market"/],
      [[{ source: '/d/config.json', values: { log: { level: 'info,debug' } } }], '/d/config.json', /two default levels/],
      [[{ source: '/d/config.json', values: { log: { level: 7 } } }], '/d/config.json', /string/]
    ]
    for (const [layers, source, message] of cases) {
      const err = configError(() => resolveConfig(layers))
      assert.equal(err.issues.length, 1, err.message)
      assert.equal(err.issues[0]?.field, 'log.level')
      assert.equal(err.issues[0]?.source, source)
      assert.match(err.issues[0]?.message ?? '', message)
      assert.match(err.message, /^log\.level: /)
    }
  })

  it('explains the spec in the help of a command that takes --log-level, and only there', () => {
    const help = (only: string[]): string => {
      let out = ''
      const command = addConfigFlags(new Command('start').exitOverride().configureOutput({ writeOut: (s) => { out += s } }), only)
      command.outputHelp()
      return out
    }
    assert.match(help(['log.level']), /--log-level <spec>[\s\S]*Log levels[\s\S]*info,libp2p:kad-dht=debug,gpumesh:market=trace/)
    assert.doesNotMatch(help(['provider.region']), /Log levels/)
  })

  it('gives the daemon\'s loggers the spec, with libp2p\'s DEBUG read onto it (the spec wins)', () => {
    const config = resolveConfig(flags('--log-level', 'warn,libp2p:tcp=error'))
    const { spec } = loggersOf(config, { DEBUG: 'libp2p:*,libp2p:tcp' })
    assert.equal(spec.level, 'warn')
    assert.equal(levelOf(spec, 'libp2p:kad-dht', 'silent'), 'debug')
    assert.equal(levelOf(spec, 'libp2p:tcp:listener', 'silent'), 'error')
    assert.deepEqual(loggersOf(config, {}).spec.components, [{ component: 'libp2p:tcp', level: 'error' }])
  })
})
