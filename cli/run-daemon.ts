/**
 * `gpumesh node start` and `gpumesh bootstrap`: start the daemon, print where it is, and run until
 * SIGINT or SIGTERM, then shut down gracefully (a second signal exits at once).
 */
import type { Command } from 'commander'
import { publishableAddrs, startBootstrap } from '../bootstrap/role.js'
import { Daemon } from '../node/daemon.js'
import { bootstrapPeersOf, configOf, dataDirOf, loggersOf } from './context.js'
import { onOutputClosed, outputClosed } from './output.js'
import { packageVersion } from './version.js'

export async function runDaemon (command: Command, role: 'node' | 'bootstrap'): Promise<void> {
  const config = await configOf(command)
  const dataDir = dataDirOf(command)
  const loggers = loggersOf(config)
  const options = { dataDir, config, bootstrapPeers: await bootstrapPeersOf(config), loggers, version: packageVersion() }
  const daemon = role === 'bootstrap' ? await startBootstrap(options) : await Daemon.start({ ...options, role })
  const status = daemon.status()
  const lines = [
    `gpumesh ${role === 'bootstrap' ? 'bootstrap peer' : 'node'} ${status.peerId}`,
    `  data dir: ${dataDir}`,
    ...(role === 'bootstrap' ? publishableAddrs(daemon) : status.addresses).map((a) => `  listening: ${a}`),
    ...(role === 'node' ? [`  selling: ${status.selling ? `${status.gpus.length} GPU(s) in ${config.provider.region}` : 'nothing'}`] : []),
    '  press Ctrl+C to stop'
  ]
  await new Promise<void>((resolve) => {
    let signals = 0
    const say = (line: string): void => { if (!outputClosed(process.stderr)) process.stderr.write(`gpumesh: ${line}\n`) }
    const onSignal = (signal: NodeJS.Signals | 'output closed'): void => {
      if (++signals > 1) {
        say(`${signal} again, exiting without cleanup`)
        process.exit(130)
      }
      say(`${signal}, shutting down`)
      daemon.stop().then(resolve, (err: unknown) => {
        say(`shutdown failed: ${(err as Error).message}`)
        process.exitCode = 1
        resolve()
      })
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    // `gpumesh node start | head -1`: once the reader is gone, stop as on SIGTERM (never die uncleanly)
    onOutputClosed(() => { onSignal('output closed') })
    // only now "press Ctrl+C": a signal sent as soon as the line is read must find the handlers in place
    process.stdout.write(`${lines.join('\n')}\n`)
  })
}
