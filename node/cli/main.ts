/**
 * The `gpumesh` command line. Commands live one per file; this file wires them and turns known
 * errors into one clear line and an exit code (1 for a failed command, 2 for bad usage).
 */
import { readFileSync } from 'node:fs'
import { Command, CommanderError } from 'commander'
import { KeyFileError } from '../../crypto/index.js'
import { MessageRejectedError } from '../../protocol/index.js'
import { DeclaredGpuError } from '../capability-ad.js'
import { defaultDataDir } from '../data-dir.js'
import { initCommand } from './init.js'

export function packageVersion (): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
  return pkg.version
}

export function buildProgram (): Command {
  const program = new Command('gpumesh')
    .description('a peer-to-peer market for GPU time')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError()
    .exitOverride()

  program.command('init')
    .description('create this node\'s identity (Ed25519 key = libp2p peer id) in the data dir, or show the existing one')
    .option('-d, --data-dir <dir>', 'data directory (env GPUMESH_DATA_DIR)', defaultDataDir())
    .option('--show-ad', 'also sign, verify and print the capability ad this node would serve')
    .option('--declare-gpu <name:mib...>', 'declare a GPU for the ad, e.g. "NVIDIA H100 80GB HBM3:81559"')
    .option('--region <region>', 'region slug for the ad', 'local')
    .option('--price-floor <credits>', 'price floor in credits per GPU-hour', '1.5')
    .option('--json', 'print JSON')
    .action(async (options) => { await initCommand(options) })

  return program
}

export async function main (argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv)
    return 0
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0
      return err.exitCode === 0 ? 0 : 2
    }
    if (err instanceof KeyFileError || err instanceof DeclaredGpuError || err instanceof MessageRejectedError || err instanceof UsageError) {
      process.stderr.write(`gpumesh: ${err.message}\n`)
      return 1
    }
    throw err
  }
}

/** A flag value the command cannot use. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}
