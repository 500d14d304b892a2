/**
 * The NAT test network (test/nat/netns.sh) from a test: whether this machine can build it, and up/down.
 * Needs root, `ip netns` and nft (nftables); tests that use it skip, saying why, where any is missing.
 */
import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** test/nat/netns.sh in the source tree (dist/test/helpers → ../../../test/nat). */
export const NETNS_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'nat', 'netns.sh')

/** Why the NAT network cannot be built here, or undefined when it can. */
export async function netnsUnavailable (): Promise<string | undefined> {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`
  if (process.getuid?.() !== 0) return 'network namespaces need root (run `sudo npm run test:nat`)'
  for (const tool of ['ip', 'nft']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`])
    } catch {
      return `${tool} not found on PATH${tool === 'nft' ? ' (apt-get install -y nftables)' : ' (apt-get install -y iproute2)'}`
    }
  }
  const probe = `gmprobe${process.pid}`
  try {
    await run('ip', ['netns', 'add', probe])
  } catch (err) {
    return `ip netns add failed: ${(err as Error).message.split('\n')[0] ?? ''}`
  } finally {
    await run('ip', ['netns', 'del', probe]).catch(() => undefined)
  }
  return undefined
}

/** Build the network with namespaces named `<prefix>-…` (removing any left from before). */
export async function netnsUp (prefix: string): Promise<void> {
  await run('bash', [NETNS_SCRIPT, 'up', prefix])
}

/** Remove the network's namespaces (never throws: it runs in after hooks and exit handlers). */
export async function netnsDown (prefix: string): Promise<void> {
  await run('bash', [NETNS_SCRIPT, 'down', prefix]).catch(() => undefined)
}

/** The command prefix that runs a process inside namespace `<prefix>-<host>`. */
export const inNetns = (prefix: string, host: string): string[] => ['ip', 'netns', 'exec', `${prefix}-${host}`]

/**
 * Try a TCP connection from inside a namespace: 'connected', 'refused'/'unreachable', or 'timeout'
 * (a SYN the NAT router dropped) after `timeoutMs`.
 */
export async function tcpProbe (prefix: string, host: string, target: string, port: number, timeoutMs = 2_000): Promise<string> {
  const script = `const s=require('net').connect(${port},${JSON.stringify(target)});s.setTimeout(${timeoutMs});` +
    "s.on('connect',()=>{console.log('connected');s.destroy()});s.on('timeout',()=>{console.log('timeout');s.destroy()});" +
    "s.on('error',(e)=>console.log(e.code==='ECONNREFUSED'?'refused':e.code==='ENETUNREACH'||e.code==='EHOSTUNREACH'?'unreachable':e.code))"
  const { stdout } = await run(inNetns(prefix, host)[0] as string, [...inNetns(prefix, host).slice(1), process.execPath, '-e', script])
  return stdout.trim()
}
