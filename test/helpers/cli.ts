import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** dist/node/cli/bin.js, run as a separate OS process, the way users run `gpumesh`. */
export const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'cli', 'bin.js')

export interface CliResult { code: number | null, stdout: string, stderr: string }

/**
 * How long a `gpumesh` command may run before it is killed. Generous on purpose: it is no speed target (those
 * live in bench/), only a backstop against a hung process; on a loaded 2-core machine loading the CLI alone can
 * take seconds. A command that fails, fails by exiting, which is seen at once.
 */
export const CLI_TIMEOUT_MS = 120_000

/** `prefix`: a command to run the CLI under, e.g. ['ip', 'netns', 'exec', 'ns1'] (test/nat). */
export async function runCli (args: string[], options: { env?: NodeJS.ProcessEnv, timeoutMs?: number, prefix?: readonly string[] } = {}): Promise<CliResult> {
  return await new Promise((resolve, reject) => {
    const argv = [...(options.prefix ?? []), process.execPath, BIN, ...args]
    const child = spawn(argv[0] as string, argv.slice(1), { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, options.timeoutMs ?? CLI_TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
