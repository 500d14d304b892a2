/**
 * Run `gpumesh` with its stdout read the way `| head -1` reads it: the pipe's read end is closed at
 * once (`first: 'none'`) or after the first line, and every later write of the CLI meets EPIPE.
 */
import { spawn } from 'node:child_process'
import { BIN } from './cli.js'

export interface ClosedOutputResult { code: number | null, signal: NodeJS.Signals | null, firstLine: string, stderr: string }

export async function runWithClosedOutput (args: string[], first: 'none' | 'line', timeoutMs = 30_000): Promise<ClosedOutputResult> {
  return await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let read = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
    if (first === 'none') child.stdout.destroy()
    else {
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        read += d
        if (read.includes('\n')) child.stdout.destroy()
      })
    }
    const timer = setTimeout(() => { child.kill('SIGKILL') }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, firstLine: read.split('\n')[0] ?? '', stderr })
    })
  })
}
