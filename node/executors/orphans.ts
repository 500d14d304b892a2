/**
 * Job processes a daemon left behind when it died without stopping them (kill -9, a crash, power
 * management killing the daemon alone). Each process job runs in its own process group; bubblewrap's
 * `--die-with-parent` ends a sandboxed one with the daemon, but an unsandboxed one (`sandbox: none`)
 * lives on as an orphan, holding the GPU, and a restarted provider that takes the job up again
 * (protocol/README.md §7.7 "Resuming") would run it twice.
 *
 * So the process executor records each job's process group in `<dir>/<pid>.json` while it runs, with
 * the kernel's start time of its leader (so a recycled pid is never mistaken for it) and its work dir;
 * at the next start the daemon ends every recorded group still alive (SIGKILL to the group) and removes
 * its work dir, before any job runs. The start time comes from /proc (Linux); where there is none, a
 * record is dropped without killing anything, since the pid cannot be told from a new process's.
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { readFileSync, readdirSync } from 'node:fs'
import { isAbsolute, join, relative, resolve } from 'node:path'

export interface GroupRecord {
  pid: number
  /** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
  startTicks?: string
  workDir?: string
}

export interface SweepResult {
  /** Process groups found alive and killed. */
  killed: number[]
  /** Records whose process had ended (or was another process now), dropped. */
  stale: number
  /** Work dirs removed. */
  workDirs: number
}

/** Fields 3 … of /proc/<pid>/stat (after the command name, which is in parentheses and may hold spaces). */
function statFields (pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** When `pid` started (clock ticks since boot), or undefined without /proc or once it is gone. */
export function processStartTicks (pid: number): string | undefined {
  return statFields(pid)?.[19]
}

/**
 * Whether the process group `pgid` recorded with its leader's start time is still the job's: the
 * leader itself (a live process with that pid and another start time is someone else's, the group
 * long gone), or, the leader gone (a shell that left a background child), a member of the group that
 * started no earlier than it. A group id is a pid, and Linux hands out no pid in use as a group id, so
 * such a member is the job's, unless the whole group ended and the id came round again as another
 * group's whose leader ended too (not guarded against; it takes a pid wrap within one restart).
 */
export function groupIsJobs (pgid: number, leaderTicks: string): boolean {
  const leader = processStartTicks(pgid)
  if (leader !== undefined) return leader === leaderTicks
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return false
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statFields(entry)
    // fields: 0 state (Z: a zombie, dead), 2 process group, 19 start time
    if (fields?.[2] === String(pgid) && fields[0] !== 'Z' && BigInt(fields[19] ?? '0') >= BigInt(leaderTicks)) return true
  }
  return false
}

export class ProcessGroupRegistry {
  constructor (readonly dir: string) {}

  /** Record a job's process group (its leader's pid) while it runs. */
  async add (pid: number, workDir?: string): Promise<void> {
    const record: GroupRecord = { pid, ...(processStartTicks(pid) !== undefined ? { startTicks: processStartTicks(pid) } : {}), ...(workDir !== undefined ? { workDir } : {}) }
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    await writeFile(join(this.dir, `${pid}.json`), JSON.stringify(record), { mode: 0o600 })
  }

  /** The job ended (or was stopped): forget it. */
  async remove (pid: number): Promise<void> {
    await rm(join(this.dir, `${pid}.json`), { force: true })
  }

  /**
   * End every recorded group still alive and remove its work dir (only one under `workRoot`, where
   * the executor makes them); call before any job runs.
   */
  async sweep (workRoot: string): Promise<SweepResult> {
    const result: SweepResult = { killed: [], stale: 0, workDirs: 0 }
    let names: string[]
    try {
      names = await readdir(this.dir)
    } catch {
      return result
    }
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const file = join(this.dir, name)
      const record = await readRecord(file)
      if (record !== undefined && record.startTicks !== undefined && groupIsJobs(record.pid, record.startTicks)) {
        try {
          process.kill(-record.pid, 'SIGKILL')
          result.killed.push(record.pid)
        } catch {
          result.stale++
        }
      } else {
        result.stale++
      }
      if (record?.workDir !== undefined && isInside(workRoot, record.workDir)) {
        await rm(record.workDir, { recursive: true, force: true }).catch(() => {})
        result.workDirs++
      }
      await rm(file, { force: true })
    }
    return result
  }
}

function isInside (root: string, path: string): boolean {
  const rel = relative(resolve(root), resolve(path))
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)
}

async function readRecord (file: string): Promise<GroupRecord | undefined> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as Partial<GroupRecord>
    if (!Number.isSafeInteger(value.pid) || (value.pid as number) <= 1) return undefined
    return {
      pid: value.pid as number,
      ...(typeof value.startTicks === 'string' ? { startTicks: value.startTicks } : {}),
      ...(typeof value.workDir === 'string' ? { workDir: value.workDir } : {})
    }
  } catch {
    return undefined
  }
}
