/**
 * The Docker image and compose network without a container engine (test/e2e/container-runtime.test.ts):
 * read docker/Dockerfile's runtime stage (ENV, USER, WORKDIR, COPY, the RUN steps that make users, dirs
 * and links, EXPOSE, HEALTHCHECK, ENTRYPOINT, CMD) and docker/compose.yaml's services, lay the image's
 * files out under a temporary root, and run the image's own commands there as separate OS processes,
 * with the container's environment and its absolute paths moved under that root.
 *
 * What this cannot be is a container: no own network, PID or mount namespace, the host's /usr, node and
 * bubblewrap, the repository's node_modules (dev dependencies included, where the image prunes them), and
 * read-only mounts are writable. Whatever the Dockerfile says that this does not understand is an
 * ImageError, so a change to it fails the test instead of being skipped.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, chown, cp, mkdir, symlink } from 'node:fs/promises'
import { basename, dirname, join, posix } from 'node:path'
import { parse as parseYaml } from 'yaml'

/** The Dockerfile or compose file says something this emulation does not (or no longer) understands. */
export class ImageError extends Error {
  override name = 'ImageError'
}

export interface Healthcheck { test: string[], options: Record<string, string> }
export interface ImageCopy { from: string, to: string, excluded: string[] }
export interface ImageDir { path: string, owner?: string, mode?: number }

export interface RuntimeImage {
  env: Record<string, string>
  user: { name: string, uid: number, gid: number, home: string }
  workdir: string
  entrypoint: string[]
  cmd: string[]
  healthcheck: Healthcheck | undefined
  expose: number[]
  /** What the runtime stage copies: `from` relative to the repository root, `to` an image path. */
  copies: ImageCopy[]
  /** Modes the build stage sets, by repository-relative path. */
  modes: Array<{ path: string, mode: number }>
  links: Array<{ target: string, path: string }>
  dirs: ImageDir[]
  /** What the runtime stage's `apt-get install` lines install. */
  packages: string[]
}

interface Instruction { keyword: string, args: string, line: number }

/** Instructions by stage (FROM starts one), with comments dropped and continuation lines joined. */
function stages (text: string): Instruction[][] {
  const out: Instruction[][] = []
  let pending = ''
  let start = 0
  const lines = text.split('\n')
  for (const [i, raw] of lines.entries()) {
    // a comment line, even inside a continued instruction, is dropped; so is a blank line between instructions
    if (/^\s*#/.test(raw) || (pending === '' && raw.trim() === '')) continue
    if (pending === '') start = i + 1
    if (raw.endsWith('\\')) { pending += raw.slice(0, -1) + ' '; continue }
    pending += raw
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(pending)
    if (m === null) throw new ImageError(`Dockerfile line ${start}: cannot read "${pending.trim()}"`)
    const ins = { keyword: (m[1] as string).toUpperCase(), args: (m[2] as string).trim(), line: start }
    pending = ''
    if (ins.keyword === 'FROM') out.push([])
    else if (out.length > 0) out[out.length - 1]?.push(ins)
    else if (ins.keyword !== 'ARG') throw new ImageError(`Dockerfile line ${start}: ${ins.keyword} before FROM`)
  }
  return out
}

function execForm (ins: Instruction): string[] {
  let value: unknown
  try { value = JSON.parse(ins.args) } catch { value = undefined }
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
    throw new ImageError(`Dockerfile line ${ins.line}: ${ins.keyword} must be in exec form (a JSON array of strings), got ${ins.args}`)
  }
  return value
}

function envPairs (ins: Instruction): Array<[string, string]> {
  if (ins.args.includes('$')) throw new ImageError(`Dockerfile line ${ins.line}: ENV with a variable reference is not emulated: ${ins.args}`)
  const pairs: Array<[string, string]> = []
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|[^\s"]*)\s*/y
  re.lastIndex = 0
  while (re.lastIndex < ins.args.length) {
    const m = re.exec(ins.args)
    if (m === null) throw new ImageError(`Dockerfile line ${ins.line}: ENV must be KEY=value pairs, got ${ins.args}`)
    const raw = m[2] as string
    pairs.push([m[1] as string, raw.startsWith('"') ? JSON.parse(raw) as string : raw])
  }
  return pairs
}

function healthcheck (ins: Instruction): Healthcheck | undefined {
  if (ins.args === 'NONE') return undefined
  const m = /^((?:--[a-z-]+=\S+\s+)*)CMD\s+(.*)$/.exec(ins.args)
  if (m === null) throw new ImageError(`Dockerfile line ${ins.line}: cannot read HEALTHCHECK ${ins.args}`)
  const options = Object.fromEntries((m[1] as string).trim().split(/\s+/).filter((o) => o !== '').map((o) => o.slice(2).split('=') as [string, string]))
  const cmd = (m[2] as string).trim()
  return { test: cmd.startsWith('[') ? execForm({ ...ins, args: cmd }) : ['/bin/sh', '-c', cmd], options }
}

/** The simple commands of a RUN, split on `&&`, as words; a quote in one makes it unreadable here. */
function runCommands (ins: Instruction): string[][] {
  return ins.args.split('&&').map((c) => c.trim().split(/\s+/)).filter((w) => w[0] !== undefined && w[0] !== '')
}

const flag = (words: string[], name: string): string | undefined => {
  const i = words.indexOf(name)
  return i === -1 ? undefined : words[i + 1]
}

/** Read the Dockerfile: its last stage is the image; the stage its COPY --from names is where the files come from. */
export function parseDockerfile (text: string): RuntimeImage {
  const all = stages(text)
  const runtime = all[all.length - 1]
  if (runtime === undefined) throw new ImageError('Dockerfile: no FROM')
  // the build stage: WORKDIR (where `COPY . .` puts the repository), and what its RUN steps remove and chmod
  const build = all.length > 1 ? all[0] as Instruction[] : []
  const buildDir = build.find((i) => i.keyword === 'WORKDIR')?.args ?? '/'
  const inRepo = (p: string): string => posix.relative(buildDir, posix.resolve(buildDir, p))
  const removed: string[] = []
  const modes: RuntimeImage['modes'] = []
  for (const ins of build.filter((i) => i.keyword === 'RUN')) {
    for (const w of runCommands(ins)) {
      if (w[0] === 'rm') removed.push(...w.slice(1).filter((a) => !a.startsWith('-')).map(inRepo))
      if (w[0] === 'chmod') for (const p of w.slice(2)) modes.push({ path: inRepo(p), mode: parseInt(w[1] as string, 8) })
    }
  }

  const env: Record<string, string> = {}
  const groups = new Map<string, number>()
  const users = new Map<string, { uid: number, gid: number, home: string }>()
  const dirs = new Map<string, ImageDir>()
  const links: RuntimeImage['links'] = []
  const copies: ImageCopy[] = []
  const expose: number[] = []
  const packages: string[] = []
  let workdir = '/'
  let user = 'root'
  let entrypoint: string[] | undefined
  let cmd: string[] = []
  let check: Healthcheck | undefined
  for (const ins of runtime) {
    switch (ins.keyword) {
      case 'ENV': for (const [k, v] of envPairs(ins)) env[k] = v; break
      case 'WORKDIR': workdir = posix.resolve(workdir, ins.args); break
      case 'USER': user = ins.args; break
      case 'ENTRYPOINT': entrypoint = execForm(ins); cmd = []; break
      case 'CMD': cmd = execForm(ins); break
      case 'HEALTHCHECK': check = healthcheck(ins); break
      case 'EXPOSE': expose.push(...ins.args.split(/\s+/).map((p) => Number(p.replace(/\/tcp$/, '')))); break
      case 'COPY': {
        const words = ins.args.split(/\s+/)
        const from = words.find((w) => w.startsWith('--from='))
        const paths = words.filter((w) => !w.startsWith('--'))
        if (from === undefined || paths.length !== 2) throw new ImageError(`Dockerfile line ${ins.line}: only COPY --from=<stage> <one path> <dest> is emulated, got ${ins.args}`)
        const src = inRepo(paths[0] as string)
        const dest = paths[1] as string
        const to = posix.resolve(workdir, dest.endsWith('/') ? posix.join(dest, posix.basename(src)) : dest)
        copies.push({ from: src, to, excluded: removed.filter((r) => r.startsWith(src + '/')).map((r) => r.slice(src.length + 1)) })
        break
      }
      case 'RUN':
        for (const w of runCommands(ins)) {
          if (w[0] === 'groupadd') groups.set(w[w.length - 1] as string, Number(flag(w, '--gid')))
          if (w[0] === 'useradd') {
            const gid = flag(w, '--gid') ?? ''
            users.set(w[w.length - 1] as string, { uid: Number(flag(w, '--uid')), gid: groups.get(gid) ?? Number(gid), home: flag(w, '--home-dir') ?? '/' })
          }
          if (w[0] === 'mkdir') for (const p of w.slice(1).filter((a) => !a.startsWith('-'))) dirs.set(p, { path: p })
          if (w[0] === 'chown') for (const p of w.slice(2)) dirs.set(p, { ...dirs.get(p), path: p, owner: w[1] as string })
          if (w[0] === 'chmod') for (const p of w.slice(2)) dirs.set(p, { ...dirs.get(p), path: p, mode: parseInt(w[1] as string, 8) })
          if (w[0] === 'apt-get' && w.includes('install')) packages.push(...w.slice(w.indexOf('install') + 1).filter((a) => !a.startsWith('-')))
          if (w[0] === 'ln' && w[1] === '-s' && w.length === 4) links.push({ target: w[2] as string, path: w[3] as string })
        }
        break
      case 'ARG': case 'VOLUME': case 'LABEL': break
      default: throw new ImageError(`Dockerfile line ${ins.line}: ${ins.keyword} is not emulated`)
    }
  }
  if (entrypoint === undefined) throw new ImageError('Dockerfile: the runtime stage has no ENTRYPOINT')
  const account = user === 'root' ? { uid: 0, gid: 0, home: '/root' } : users.get(user)
  if (account === undefined || !Number.isInteger(account.uid) || !Number.isInteger(account.gid)) {
    throw new ImageError(`Dockerfile: USER ${user} is not made by a useradd --uid … --gid … in the runtime stage`)
  }
  for (const d of dirs.values()) {
    if (d.owner !== undefined && !users.has(d.owner.split(':')[0] as string)) throw new ImageError(`Dockerfile: ${d.path} is owned by unknown user ${d.owner}`)
  }
  return { env, user: { name: user, ...account }, workdir, entrypoint, cmd, healthcheck: check, expose, copies, modes, links, dirs: [...dirs.values()], packages }
}

export interface ComposeService {
  entrypoint?: string[]
  command?: string[]
  environment: Record<string, string>
  /** volume name → container path */
  volumes: Array<{ volume: string, target: string, readOnly: boolean }>
  healthcheck?: { test?: string[], disable?: boolean }
}

/** docker/compose.yaml's services, with YAML merge keys (`<<: *anchor`) applied. */
export function parseCompose (text: string): Record<string, ComposeService> {
  const doc = parseYaml(text, { merge: true }) as { services?: Record<string, Record<string, unknown>> }
  const strings = (v: unknown, what: string): string[] | undefined => {
    if (v === undefined) return undefined
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new ImageError(`compose: ${what} must be a list of strings`)
    return v
  }
  const out: Record<string, ComposeService> = {}
  for (const [name, s] of Object.entries(doc.services ?? {})) {
    const environment = Object.fromEntries(Object.entries((s.environment ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]))
    const volumes = (strings(s.volumes, `${name}.volumes`) ?? []).map((v) => {
      const [volume, target, mode] = v.split(':')
      if (volume === undefined || target === undefined) throw new ImageError(`compose: ${name}.volumes: cannot read ${v}`)
      return { volume, target, readOnly: mode === 'ro' }
    })
    const hc = s.healthcheck as { test?: unknown, disable?: boolean } | undefined
    const service: ComposeService = { environment, volumes }
    const entrypoint = strings(s.entrypoint, `${name}.entrypoint`)
    const command = strings(s.command, `${name}.command`)
    if (entrypoint !== undefined) service.entrypoint = entrypoint
    if (command !== undefined) service.command = command
    if (hc !== undefined) service.healthcheck = { ...(hc.disable !== undefined ? { disable: hc.disable } : {}), ...(hc.test !== undefined ? { test: strings(hc.test, `${name}.healthcheck.test`) as string[] } : {}) }
    out[name] = service
  }
  return out
}

/** Lay the image's files out under `root` (copies, build-stage modes, links, dirs, the user's home). */
export async function buildRootfs (image: RuntimeImage, repo: string, root: string): Promise<void> {
  const owner = ownerOf(image)
  await mkdir(root, { recursive: true })
  await chmod(root, 0o755)
  for (const c of image.copies) {
    const to = join(root, c.to)
    await mkdir(dirname(to), { recursive: true })
    // node_modules is linked, not copied (hundreds of packages): the image's pruned copy is not emulated
    if (basename(c.from) === 'node_modules') { await symlink(join(repo, c.from), to); continue }
    const excluded = c.excluded.map((e) => join(repo, c.from, e))
    await cp(join(repo, c.from), to, { recursive: true, filter: (src) => !excluded.some((e) => src === e || src.startsWith(e + '/')) })
    for (const m of image.modes) {
      if (m.path === c.from || m.path.startsWith(c.from + '/')) await chmod(join(to, m.path.slice(c.from.length)), m.mode)
    }
  }
  for (const l of image.links) {
    await mkdir(dirname(join(root, l.path)), { recursive: true })
    await symlink(join(root, l.target), join(root, l.path))
  }
  for (const d of [...image.dirs, { path: image.user.home, owner: image.user.name }]) {
    await mkdir(join(root, d.path), { recursive: true })
    if (d.owner !== undefined && owner !== undefined) await chown(join(root, d.path), owner.uid, owner.gid)
    if ('mode' in d && d.mode !== undefined) await chmod(join(root, d.path), d.mode)
  }
}

/**
 * One directory per named volume under `base`, as Docker creates a named volume the first time a container
 * mounts it: with the owner and mode of the image's directory at the mount point.
 */
export async function createVolumes (image: RuntimeImage, services: Record<string, ComposeService>, base: string): Promise<Record<string, string>> {
  const owner = ownerOf(image)
  const volumes: Record<string, string> = {}
  for (const { volume, target } of Object.values(services).flatMap((s) => s.volumes)) {
    if (volume in volumes) continue
    const dir = join(base, volume)
    volumes[volume] = dir
    await mkdir(dir, { recursive: true })
    const made = image.dirs.find((d) => d.path === target)
    if (made?.owner !== undefined && owner !== undefined) await chown(dir, owner.uid, owner.gid)
    if (made?.mode !== undefined) await chmod(dir, made.mode)
  }
  return volumes
}

/** The uid/gid to run as: the image's user when this process may switch to it (root), else none (run as we are). */
export function ownerOf (image: RuntimeImage): { uid: number, gid: number } | undefined {
  return process.getuid?.() === 0 ? { uid: image.user.uid, gid: image.user.gid } : undefined
}

/** The base image's PATH (node:*-bookworm-slim). */
export const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** One service's container: the image's root plus its volumes (each a directory), and how its paths map onto them. */
export class Container {
  constructor (readonly name: string, readonly image: RuntimeImage, readonly root: string, readonly volumes: Record<string, string>, readonly service: ComposeService) {}

  /** Where an image path lives on this host: under a mounted volume, else under the root if the image made it, else unchanged. */
  hostPath (p: string): string {
    const under = (base: string): boolean => p === base || p.startsWith(base + '/')
    const mount = this.service.volumes.filter((v) => under(v.target)).sort((a, b) => b.target.length - a.target.length)[0]
    if (mount !== undefined) return join(this.volumes[mount.volume] as string, p.slice(mount.target.length))
    const made = [this.image.workdir, this.image.user.home, ...this.image.copies.map((c) => c.to), ...this.image.links.map((l) => l.path), ...this.image.dirs.map((d) => d.path)]
    return made.some(under) ? join(this.root, p) : p
  }

  /** `text` with each absolute path in it (a word, or after `>`, `,`, `=`) moved by hostPath. */
  mapText (text: string): string {
    return text.replace(/(^|[\s,=>;])(\/[\w.@+/-]*)/g, (_m, before: string, p: string) => before + this.hostPath(p))
  }

  /**
   * The container's environment: PATH (its image dirs first, then the host's node), HOME, the image's ENV, the
   * service's; and for an entrypoint that is a shell script of the image's, each `${VAR:-/a/path}` default in
   * it, moved by hostPath (a default path in a script cannot be moved otherwise without a mount namespace).
   */
  env (overrides: Record<string, string> = {}): Record<string, string> {
    const path = BASE_PATH.split(':').flatMap((d) => {
      const own = existsSync(join(this.root, d)) ? [join(this.root, d)] : []
      // the image's node is /usr/local/bin/node: the node running this test stands in for it
      return d === '/usr/local/bin' ? [...own, dirname(process.execPath), d] : [...own, d]
    })
    const env: Record<string, string> = { PATH: [...new Set(path)].join(':'), HOSTNAME: this.name, HOME: this.hostPath(this.image.user.home) }
    for (const [k, v] of Object.entries({ ...this.scriptDefaults(), ...this.image.env, ...this.service.environment })) env[k] = this.mapText(v)
    return { ...env, ...overrides }
  }

  private scriptDefaults (): Record<string, string> {
    const first = this.service.entrypoint?.[0] ?? this.image.entrypoint[0] as string
    // a bare name is looked up on the container's PATH, among the files the image put there
    const made = this.image.copies.map((c) => c.to)
    const script = first.startsWith('/') ? first : BASE_PATH.split(':').map((d) => posix.join(d, first)).find((p) => made.includes(p))
    if (script === undefined) return {}
    const text = readFileSync(this.hostPath(script), 'utf8')
    if (!text.startsWith('#!/bin/sh')) return {}
    return Object.fromEntries([...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*):-(\/[^}]*)\}/g)].map((m) => [m[1] as string, m[2] as string]))
  }

  /** The service's command line: compose's entrypoint (which drops the image's CMD) or the image's, then compose's command or CMD. */
  argv (): string[] {
    const entrypoint = this.service.entrypoint ?? this.image.entrypoint
    const cmd = this.service.command ?? (this.service.entrypoint !== undefined ? [] : this.image.cmd)
    return [...entrypoint, ...cmd].map((a) => this.mapText(a))
  }

  /** The health check the service runs: compose's test (CMD or CMD-SHELL) unless disabled, else the image's. */
  healthcheck (): string[] | undefined {
    const hc = this.service.healthcheck
    if (hc?.disable === true) return undefined
    const test = hc?.test
    const argv = test === undefined ? this.image.healthcheck?.test : test[0] === 'CMD' ? test.slice(1) : test[0] === 'CMD-SHELL' ? ['/bin/sh', '-c', test[1] ?? ''] : undefined
    if (test !== undefined && argv === undefined) throw new ImageError(`compose: ${this.name}.healthcheck.test must start with CMD or CMD-SHELL`)
    return argv?.map((a) => this.mapText(a))
  }

  /** Start `argv` as the image's user in its WORKDIR with the container's environment (plus `overrides`). */
  spawn (argv: string[], overrides: Record<string, string> = {}): ContainerProcess {
    const owner = ownerOf(this.image)
    const full = owner === undefined ? argv : ['setpriv', `--reuid=${owner.uid}`, `--regid=${owner.gid}`, '--clear-groups', ...argv]
    return new ContainerProcess(this.name, full, this.env(overrides), this.hostPath(this.image.workdir))
  }
}

/** A process started by Container.spawn: its output so far, waits on it, its end. */
export class ContainerProcess {
  stdout = ''
  stderr = ''
  readonly exited: Promise<number | null>
  private readonly child

  constructor (readonly name: string, argv: string[], env: Record<string, string>, cwd: string) {
    this.child = spawn(argv[0] as string, argv.slice(1), { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    this.child.stdout.setEncoding('utf8').on('data', (d: string) => { this.stdout += d })
    this.child.stderr.setEncoding('utf8').on('data', (d: string) => { this.stderr += d })
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject)
      this.child.on('close', (code) => { resolve(code) })
    })
  }

  /** Resolve once `seen(stdout, stderr)` holds; reject if the process ends first, or after `timeoutMs` (a backstop only). */
  async until (what: string, seen: (stdout: string, stderr: string) => boolean, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    let ended = false
    void this.exited.then(() => { ended = true }, () => { ended = true })
    while (!seen(this.stdout, this.stderr)) {
      if (ended) throw new Error(`${this.name} ended before ${what}: ${this.stderr.slice(-2000)}`)
      if (Date.now() > deadline) throw new Error(`${this.name}: no ${what} within ${timeoutMs} ms: ${this.stderr.slice(-2000)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Wait for the end: exit code and all output. */
  async result (): Promise<{ code: number | null, stdout: string, stderr: string }> {
    const code = await this.exited
    return { code, stdout: this.stdout, stderr: this.stderr }
  }

  /** SIGTERM (as `docker stop`), SIGKILL after `graceMs`; resolves with the exit code. */
  async stop (graceMs = 10_000): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return await this.exited
    this.child.kill('SIGTERM')
    const timer = setTimeout(() => { this.child.kill('SIGKILL') }, graceMs)
    const code = await this.exited
    clearTimeout(timer)
    return code
  }
}
