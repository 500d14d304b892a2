import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ProcessGroupRegistry, groupIsJobs, processStartTicks } from '../../node/executors/orphans.js'
import { ProcessExecutor } from '../../node/executors/process.js'

/**
 * A daemon killed with SIGKILL while an unsandboxed process job runs leaves the job alive (its own
 * process group; bubblewrap's --die-with-parent covers only sandboxed jobs). Here a real daemon-like
 * process runs a real job through the ProcessExecutor and is killed; the job lives on as an orphan
 * until the next executor's sweep ends its group and removes its work dir (node/executors/orphans.ts).
 */
const here = fileURLToPath(new URL('.', import.meta.url))
const executorModule = join(here, '../../node/executors/process.js')
const registryModule = join(here, '../../node/executors/orphans.js')

/** Alive and not a zombie (an orphan's zombie waits for whoever reaps it, which may be no one here). */
function alive (pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z'
  } catch {
    return false
  }
}

async function waitFor<T> (what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('process jobs left running by a killed daemon are ended at the next start (orphans)', function () {
  this.timeout(60_000)
  if (process.platform !== 'linux') return
  let root: string
  let workRoot: string
  let runDir: string
  const spawned: number[] = []

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-orphans-'))
    workRoot = join(root, 'work')
    runDir = join(root, 'run')
    await mkdir(workRoot)
  })

  /** A "daemon": a node process that runs one unsandboxed job (`script` in /bin/sh) through a ProcessExecutor with a registry, and waits. */
  function daemonRunning (script: string): { daemon: ReturnType<typeof spawn>, daemonGone: Promise<unknown> } {
    const daemon = spawn(process.execPath, ['--input-type=module', '-e', `
      const { ProcessExecutor } = await import(${JSON.stringify(executorModule)})
      const { ProcessGroupRegistry } = await import(${JSON.stringify(registryModule)})
      const executor = new ProcessExecutor({ sandbox: 'none', runAs: 'self', workRoot: ${JSON.stringify(workRoot)}, registry: new ProcessGroupRegistry(${JSON.stringify(runDir)}) })
      await executor.run({ job: 'orphan', argv: ['/bin/sh', '-c', ${JSON.stringify(script)}], env: {}, inputs: [], outputs: [], gpus: [], timeoutMs: 60000, network: false })
    `], { stdio: 'ignore' })
    return { daemon, daemonGone: new Promise((resolve) => daemon.once('exit', resolve)) }
  }

  afterEach(async () => {
    for (const pid of spawned.splice(0)) { try { process.kill(-pid, 'SIGKILL') } catch {} try { process.kill(pid, 'SIGKILL') } catch {} }
    await rm(root, { recursive: true, force: true })
  })

  it('a daemon killed mid-job leaves the job\'s processes alive; the next executor ends the group and removes its work dir', async () => {
    const bgFile = join(root, 'bg.pid')
    // the job: a shell that keeps a background child
    const { daemon, daemonGone } = daemonRunning(`sleep 60 & echo $! > ${bgFile}; wait`)
    const record = await waitFor('the job to be recorded', async () => {
      const names = await readdir(runDir).catch(() => [])
      return names.length === 1 ? JSON.parse(await readFile(join(runDir, names[0] as string), 'utf8')) as { pid: number, startTicks: string, workDir: string } : undefined
    })
    const bg = await waitFor('the job\'s background child', async () => {
      const text = await readFile(bgFile, 'utf8').catch(() => '')
      return /^\d+\n$/.test(text) ? Number(text) : undefined
    })
    spawned.push(record.pid, bg)
    assert.equal(record.startTicks, processStartTicks(record.pid))
    assert.ok((await stat(record.workDir)).isDirectory())

    daemon.kill('SIGKILL')
    await daemonGone
    await new Promise((resolve) => setTimeout(resolve, 300))
    // the orphan: the daemon is gone, its job is not
    assert.equal(alive(record.pid), true, 'the job\'s shell outlived the daemon')
    assert.equal(alive(bg), true, 'the job\'s background child outlived the daemon')

    const next = new ProcessExecutor({ sandbox: 'none', runAs: 'self', workRoot, registry: new ProcessGroupRegistry(runDir) })
    const swept = await next.sweepOrphans()
    assert.deepEqual(swept, { killed: [record.pid], stale: 0, workDirs: 1 })
    await waitFor('the job\'s processes to end', () => !alive(record.pid) && !alive(bg) ? true : undefined)
    await assert.rejects(stat(record.workDir), /ENOENT/)
    assert.deepEqual(await readdir(runDir), [])
    // a second sweep finds nothing
    assert.deepEqual(await next.sweepOrphans(), { killed: [], stale: 0, workDirs: 0 })
  })

  it('a daemon killed just before its job\'s shell exits: the shell\'s background child is still ended', async () => {
    const bgFile = join(root, 'bg.pid')
    const { daemon, daemonGone } = daemonRunning(`sleep 60 > /dev/null 2>&1 & echo $! > ${bgFile}; sleep 1`)
    const bg = await waitFor('the job\'s background child', async () => {
      const text = await readFile(bgFile, 'utf8').catch(() => '')
      return /^\d+\n$/.test(text) ? Number(text) : undefined
    })
    spawned.push(bg)
    await waitFor('the job to be recorded', async () => (await readdir(runDir).catch(() => [])).length === 1 ? true : undefined)
    daemon.kill('SIGKILL')
    await daemonGone
    // the shell exits on its own after the daemon is gone; its child stays in the group
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    assert.equal(alive(bg), true)
    const swept = await new ProcessGroupRegistry(runDir).sweep(workRoot)
    assert.equal(swept.killed.length, 1)
    await waitFor('the background child to end', () => !alive(bg) ? true : undefined)
  })

  it('a job whose shell exits leaving a background child: the run ends the child with it', async () => {
    const bgFile = join(root, 'bg.pid')
    const executor = new ProcessExecutor({ sandbox: 'none', runAs: 'self', workRoot, registry: new ProcessGroupRegistry(runDir) })
    const result = await executor.run({ job: 'leftover', argv: ['/bin/sh', '-c', `sleep 60 > /dev/null 2>&1 & echo $! > ${bgFile}`], env: {}, inputs: [], outputs: [], gpus: [], timeoutMs: 10_000, network: false })
    assert.equal(result.exitCode, 0)
    const bg = Number(await readFile(bgFile, 'utf8'))
    spawned.push(bg)
    await waitFor('the leftover child to end', () => !alive(bg) ? true : undefined, 5_000)
  })

  it('knows a group by a member started after its leader once the leader is gone, and by the leader\'s start time while it lives', async () => {
    // a shell (reaped by this process when it exits) leaving a background child in its group
    const shell = spawn('/bin/sh', ['-c', 'sleep 60 > /dev/null 2>&1 & echo $!; sleep 0.5'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
    const leader = shell.pid as number
    const ticks = await waitFor('the shell\'s start time', () => processStartTicks(leader))
    spawned.push(leader)
    let out = ''
    shell.stdout?.on('data', (d: Buffer) => { out += d.toString() })
    assert.equal(groupIsJobs(leader, ticks), true)
    assert.equal(groupIsJobs(leader, String(BigInt(ticks) + 1n)), false, 'a live pid with another start time is another process')
    await new Promise((resolve) => shell.once('exit', resolve))
    await waitFor('the shell to be reaped', () => processStartTicks(leader) === undefined ? true : undefined)
    const bg = Number(out.trim())
    assert.equal(alive(bg), true)
    assert.equal(groupIsJobs(leader, ticks), true, 'the group lives on in the child')
    assert.equal(groupIsJobs(leader, String(BigInt(processStartTicks(bg) as string) + 1n)), false, 'a member older than the recorded leader is not the job\'s')
    process.kill(-leader, 'SIGKILL')
    await waitFor('the child to end', () => !alive(bg) ? true : undefined)
    assert.equal(groupIsJobs(leader, ticks), false)
  })

  it('a job that ends normally is forgotten: nothing is left to sweep', async () => {
    const registry = new ProcessGroupRegistry(runDir)
    const executor = new ProcessExecutor({ sandbox: 'none', runAs: 'self', workRoot, registry })
    const result = await executor.run({ job: 'plain', argv: ['/bin/sh', '-c', 'echo hi'], env: {}, inputs: [], outputs: [], gpus: [], timeoutMs: 10_000, network: false })
    assert.equal(result.exitCode, 0)
    await waitFor('the record to go', async () => (await readdir(runDir).catch(() => [])).length === 0 ? true : undefined)
    assert.deepEqual(await registry.sweep(workRoot), { killed: [], stale: 0, workDirs: 0 })
  })

  it('never kills a process that only shares the pid (another start time), and never removes a dir outside the work root', async () => {
    const other = spawn('/bin/sleep', ['30'], { detached: true, stdio: 'ignore' })
    const pid = other.pid as number
    spawned.push(pid)
    const outside = join(root, 'not-a-work-dir')
    await mkdir(outside)
    await mkdir(runDir)
    await writeFile(join(runDir, `${pid}.json`), JSON.stringify({ pid, startTicks: '1', workDir: outside }))
    // a record that does not parse, and one for a pid that is gone
    await writeFile(join(runDir, 'broken.json'), '{not json')
    await writeFile(join(runDir, '999999999.json'), JSON.stringify({ pid: 999_999_999, startTicks: '5', workDir: join(workRoot, 'gone') }))
    const swept = await new ProcessGroupRegistry(runDir).sweep(workRoot)
    assert.deepEqual(swept, { killed: [], stale: 3, workDirs: 1 })
    assert.equal(alive(pid), true, 'an unrelated process was killed')
    assert.ok((await stat(outside)).isDirectory(), 'a dir outside the work root was removed')
    assert.deepEqual(await readdir(runDir), [])
  })
})
