import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll } from '../helpers/processes.js'

/** A local TCP port nobody listens on (bound, then closed). */
async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => { resolve() }))
  return port
}

interface StatusJson { connections: number, bootstrap: { state: string, configured: number, connected: number, failedRounds: number, lastErrors: string[] } }

describe('a node whose bootstrap peer does not answer (separate processes)', function () {
  this.timeout(60_000)
  let root: string
  let node: DaemonProcess
  let startedAt: number
  let bootstrap: string

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-lonely-'))
    bootstrap = `/ip4/127.0.0.1/tcp/${await closedPort()}/p2p/${peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()}`
    startedAt = Date.now()
    node = await DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', bootstrap, '--no-sell'], join(root, 'lonely'))
  })

  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it('warns in its log within a few seconds, naming the address and the error', async () => {
    const line = await eventually('the warning', async () => node.stderr.split('\n').find((l) => l.includes('no bootstrap peer answers')), 5_000, 50)
    const warning = JSON.parse(line) as { level: string, component: string, errors: string[], retryInMs: number }
    assert.equal(warning.level, 'warn')
    assert.equal(warning.component, 'gpumesh:bootstrap-peers')
    assert.match(warning.errors[0] ?? '', new RegExp(`^${bootstrap}: .*ECONNREFUSED`))
    assert.equal(warning.retryInMs, 1_000)
    process.stdout.write(`      (warned ${Date.now() - startedAt} ms after the start command)\n`)
  })

  it('status shows that no bootstrap peer answers and that it keeps retrying', async () => {
    await eventually('a second failed round', async () => (await node.api<StatusJson>('/v1/status')).bootstrap.failedRounds >= 2 ? true : undefined, 10_000)
    const status = await node.json<StatusJson>(['status'])
    assert.ok(status.bootstrap.failedRounds >= 2, JSON.stringify(status.bootstrap))
    assert.equal(status.connections, 0)
    assert.deepEqual({ state: status.bootstrap.state, configured: status.bootstrap.configured, connected: status.bootstrap.connected }, { state: 'unreachable', configured: 1, connected: 0 })
    const text = await node.cli(['status'])
    assert.match(text.stdout, /\n +bootstrap: +no answer from any of 1 \(\d+ failed rounds, next try in \d+ s; last error: .*ECONNREFUSED.*\)\n/)
  })

  it('providers and job submit say "not connected to any peer" and exit 1', async () => {
    const providers = await node.cli(['providers'])
    assert.equal(providers.code, 1)
    assert.match(providers.stderr, /^gpumesh: not connected to any peer; bootstrap peers: no answer from any of 1 /)
    assert.equal(providers.stdout, '')
    const submit = await node.cli(['job', 'submit', '--', '/bin/true'])
    assert.equal(submit.code, 1)
    assert.match(submit.stderr, /^gpumesh: not connected to any peer/)
    assert.deepEqual(await node.json<unknown[]>(['job', 'list']), [], 'nothing was submitted')
  })
})
