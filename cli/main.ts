/**
 * The `gpumesh` command line: one file per command group; this file wires them and turns known
 * errors into one clear line on stderr and an exit code (1 for a failed command, 2 for bad usage).
 */
import { Command, CommanderError } from 'commander'
import { KeyFileError } from '../node/keystore.js'
import { MessageRejectedError } from '../protocol/index.js'
import { CommunityPeersError } from '../bootstrap/community.js'
import { ApiRequestError, DaemonUnavailableError } from '../node/api/client.js'
import { ConfigError } from '../node/config/load.js'
import { DaemonError } from '../node/daemon-error.js'
import { DataDirError } from '../node/data-dir.js'
import { JobSpecError } from '../node/market/job-spec.js'
import { StorageError } from '../node/storage.js'
import { addConfigFlags } from './config-flags.js'
import { peersCommand, providersCommand, statusCommand } from './client-commands.js'
import { NoMarketError, NotConnectedError, UsageError } from './errors.js'
import { initCommand } from './init.js'
import { JobCommandError, addJobSpecFlags, jobCancelCommand, jobListCommand, jobLogsCommand, jobResultCommand, jobStatusCommand, jobSubmitCommand, jobVerifyCommand } from './job-commands.js'
import { ledgerCommand } from './ledger-command.js'
import { probeCommand } from './probe-command.js'
import { repairCommand } from './repair-command.js'
import { ChartFontError, ChartSpecError } from './chart-errors.js'
import { CsvError, CsvValueError } from '../simulations/workloads/csv.js'
import { WorkloadError } from '../simulations/workloads/workload.js'
import { packageVersion } from './version.js'

const DATA_DIR = ['-d, --data-dir <dir>', 'data directory (env GPUMESH_DATA_DIR, default ~/.gpumesh)'] as const

/**
 * The command tree. Commands that need libp2p, the simulator or the chart renderer load them when
 * they run (a `status` or `job` call would otherwise pay ≈2 CPU-s to load them); `scenarios` is the
 * sim help's scenario list, loaded by main() only when the sim command is asked for.
 */
export function buildProgram (scenarios?: string): Command {
  const program = new Command('gpumesh')
    .description('a peer-to-peer market for GPU time')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError()
    .exitOverride()
  program.configureHelp({ sortSubcommands: false })

  addConfigFlags(program.command('init')
    .description('create this node\'s identity and config.json, or show the existing ones')
    .option(...DATA_DIR)
    .option('--show-ad', 'also sign, verify and print the capability ad this node would serve')
    .option('--json', 'print JSON'), ['provider.region', 'provider.country', 'provider.priceFloor', 'provider.gpus', 'provider.detectGpus'])
    .action(async (_opts, command: Command) => { await initCommand(command) })

  const node = program.command('node').description('run a gpumesh node')
  addConfigFlags(node.command('start')
    .description('start the daemon: join the network, announce this machine\'s GPUs, serve the local API')
    .option(...DATA_DIR))
    .action(async (_opts, command: Command) => { await (await import('./run-daemon.js')).runDaemon(command, 'node') })

  // a bootstrap peer sells nothing: no provider.* flags (--region, --declare-gpu, …) in its help
  addConfigFlags(program.command('bootstrap')
    .description('run a bootstrap peer: DHT server and relay for others, no jobs')
    .option(...DATA_DIR), (path) => !path.startsWith('provider.'))
    .action(async (_opts, command: Command) => { await (await import('./run-daemon.js')).runDaemon(command, 'bootstrap') })

  program.command('status')
    .description('show the running daemon\'s identity, addresses, GPUs and announcements')
    .option(...DATA_DIR)
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) => { await statusCommand(command) })

  program.command('peers')
    .description('list the peers the running daemon is connected to')
    .option(...DATA_DIR)
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) => { await peersCommand(command) })

  program.command('providers')
    .description('find providers on the network (DHT lookup + signed capability ads)')
    .option(...DATA_DIR)
    .option('--gpu <model>', 'GPU model, or part of it, e.g. h100')
    .option('--min-vram <GB>', 'minimum VRAM per GPU in nominal GB: a GPU\'s marketed size, the larger of the VRAM bucket its reported MiB meets (≥ 92 %) and its reported GiB rounded, so an H100 80GB (79.6 GiB reported) is 80 GB, an L40S (45.0 GiB) 48 GB')
    .option('--region <region>', 'region, e.g. eu (includes eu-west, …)')
    .option('--timeout <seconds>', 'give up after this long (default 10)')
    .option('--limit <n>', 'list at most this many providers (default 100); a cut answer says "at least N"')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) => { await providersCommand(command) })

  program.command('probe')
    .description('challenge a provider now with a timed, checked matrix product sized to its claimed GPU: measured vs claimed, flagged when the claim is more than 2× faster; the signed result is published')
    .argument('<peer-id>', 'the provider\'s peer id')
    .option('--model <slug>', 'probe against this GPU model instead of the one its ad claims, e.g. nvidia-h100-80gb-hbm3')
    .option(...DATA_DIR)
    .option('--json', 'print JSON')
    .action(async (peer: string, _opts, command: Command) => { await probeCommand(peer, command) })

  const job = program.command('job').description('buy GPU time: submit jobs to the market and follow them')
  addJobSpecFlags(job.command('submit')
    .description('offer a job to the market (checked here before the daemon is asked)')
    .usage('[options] [-- <command...>]')
    .argument('[command...]', 'the job\'s argv, run without a shell')
    .option('-f, --file <job.json|job.yaml>', 'job file; flags override its values'))
    .option('--wait', 'follow the job until it is final, then show its outputs (exit 1 unless it settled with exit code 0)')
    .option(...DATA_DIR)
    .option('--json', 'print JSON')
    .action(async (argv: string[], _opts, command: Command) => { await jobSubmitCommand(argv, command) })
  job.command('status').description('show a job: status, bids, award, receipt, payment, events')
    .argument('<id>', 'job id').option(...DATA_DIR).option('--json', 'print JSON')
    .action(async (id: string, _opts, command: Command) => { await jobStatusCommand(id, command) })
  job.command('logs').description('print a job\'s output (stdout and stderr)')
    .argument('<id>', 'job id').option('--follow', 'keep printing until the job is final').option(...DATA_DIR).option('--json', 'print JSON')
    .action(async (id: string, _opts, command: Command) => { await jobLogsCommand(id, command) })
  job.command('result').description('list a job\'s output files, or copy them')
    .argument('<id>', 'job id').option('--out <dir>', 'copy the outputs into this directory (never overwrites)').option(...DATA_DIR).option('--json', 'print JSON')
    .action(async (id: string, _opts, command: Command) => { await jobResultCommand(id, command) })
  job.command('cancel').description('cancel a job')
    .argument('<id>', 'job id').option(...DATA_DIR).option('--json', 'print JSON')
    .action(async (id: string, _opts, command: Command) => { await jobCancelCommand(id, command) })
  job.command('verify').description('re-execute a finished wasm job here and compare with its receipt; publish a fraud proof on a mismatch (exit 1)')
    .argument('<id>', 'job id').option(...DATA_DIR).option('--json', 'print JSON')
    .action(async (id: string, _opts, command: Command) => { await jobVerifyCommand(id, command) })
  job.command('list').description('list the jobs this node submitted')
    .option(...DATA_DIR).option('--json', 'print JSON')
    .action(async (_opts, command: Command) => { await jobListCommand(command) })

  program.command('ledger')
    .description('show credits earned as a provider and spent as a requester, job by job')
    .option(...DATA_DIR)
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) => { await ledgerCommand(command) })

  program.command('dashboard')
    .description('print the running daemon\'s dashboard login link and open it in a browser')
    .option(...DATA_DIR)
    .option('--no-open', 'only print the link')
    .option('--json', 'print { url, opened } as JSON (opens nothing)')
    .action(async (_opts, command: Command) => { await (await import('./dashboard-command.js')).dashboardCommand(command) })

  program.command('repair')
    .description('move a damaged database aside (kept) and rebuild it from the journal of every record written; refuses while a daemon runs')
    .option(...DATA_DIR)
    .option('--force', 'rebuild even when the database matches the journal')
    .option('--json', 'print JSON')
    .action(async (_opts, command: Command) => { await repairCommand(command) })

  program.command('demo')
    .description('run a live local market (a bootstrap peer, five providers, a buyer): auctions of every tier, a preemption, receipts and ledgers')
    .option('--dir <dir>', 'where the demo keeps its data dirs', '.gpumesh-demo')
    .option('--duration <seconds>', 'stop by itself after this long (default: run until Ctrl+C)')
    .action(async (_opts, command: Command) => { await (await import('./demo.js')).demoCommand(command) })

  program.command('sim')
    .description('run a simulator scenario: the market agents\' own decisions on a real cluster trace, against the old way, a central matcher, lowest-price-only and random')
    .option('--scenario <name>', 'the experiment (see below)', 'market')
    .option('--nodes <n>', 'fleet size (default: the scenario\'s)')
    .option('--jobs <m>', 'renter jobs (default: the scenario\'s)')
    .option('--seed <s>', 'seed: the same seed, data and size give the same report.json', '1')
    .option('--trace <file>', 'a job CSV (simulations/workloads/README.md) in place of the trace\'s renter jobs')
    .option('--out <dir>', 'where the report goes (default sim-out/<scenario>)')
    .option('--font <file>', 'the font for the PNG charts\' text (default: DejaVu Sans where Debian puts it)')
    .option('--json', 'print the summary as JSON')
    .option('--calibrate', 'instead of a scenario: run the calibration workload on real daemons in this process (memory transport) and on the model, side by side (writes calibration.json)')
    .option('--latency <ms>', 'with --calibrate: the memory transport\'s latency, ms')
    .option('--bid-window <ms>', 'with --calibrate: the jobs\' bid window, ms')
    .addHelpText('after', scenarios === undefined ? '\nScenarios: see `gpumesh sim --help`' : `\nScenarios:\n${scenarios}`)
    .action(async (_opts, command: Command) => {
      await (command.opts().calibrate === true ? (await import('./calibrate-command.js')).calibrateCommand(command) : (await import('./sim-command.js')).simCommand(command))
    })

  return program
}

const KNOWN_ERRORS = [ChartFontError, ChartSpecError, CsvError, CsvValueError, WorkloadError, KeyFileError, MessageRejectedError, ConfigError, StorageError, DataDirError, DaemonError, DaemonUnavailableError, ApiRequestError, CommunityPeersError, UsageError, JobSpecError, JobCommandError, NoMarketError, NotConnectedError]

/**
 * `gpumesh help job submit`: commander's own help command looks at one name only (it would print
 * the help of `job`), so walk the whole path of names here. Unknown names are a usage error.
 */
function helpFor (program: Command, names: string[]): number {
  let command = program
  for (const name of names) {
    const sub = command.commands.find((c) => c.name() === name || c.aliases().includes(name))
    if (sub === undefined) {
      process.stderr.write(`error: unknown command '${[...names.slice(0, names.indexOf(name)), name].join(' ')}'\n(see \`gpumesh --help\`)\n`)
      return 2
    }
    command = sub
  }
  command.outputHelp()
  return 0
}

export async function main (argv: string[]): Promise<number> {
  try {
    const args = argv.slice(2)
    const wantsSim = args[0] === 'sim' || (args[0] === 'help' && args[1] === 'sim')
    const program = buildProgram(wantsSim ? (await import('./sim-command.js')).scenarioHelp() : undefined)
    if (args[0] === 'help' && args.length > 1 && args.slice(1).every((a) => !a.startsWith('-'))) return helpFor(program, args.slice(1))
    await program.parseAsync(argv)
    // a command that set an exit status (sim --calibrate outside its tolerance) keeps it: bin.ts assigns this return value
    return typeof process.exitCode === 'number' ? process.exitCode : 0
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2
    if (KNOWN_ERRORS.some((E) => err instanceof E)) {
      const message = (err as Error).message
      process.stderr.write(`gpumesh: ${err instanceof ConfigError && message.includes('\n') ? `invalid configuration:\n  ${message.split('\n').join('\n  ')}` : message}\n`)
      return 1
    }
    throw err
  }
}
