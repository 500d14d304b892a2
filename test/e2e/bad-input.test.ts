import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll } from '../helpers/processes.js'

const START = ['node', 'start', ...LOCAL_FLAGS, '--no-detect-gpus', '--declare-gpu', 'NVIDIA L4:23034']

describe('the daemon and CLI on bad input (separate processes)', function () {
  this.timeout(120_000)
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-bad-')) })
  afterEach(async () => {
    await killAll()
    await rm(dir, { recursive: true, force: true })
  })

  it('a config.json that is not JSON stops the start with the file named', async () => {
    await writeFile(join(dir, 'config.json'), '{ "provider": { "region": "eu", } ')
    const result = await runCli([...START, '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /config\.json/)
    assert.match(result.stderr, /not valid JSON/)
  })

  it('invalid settings are all named, with where each came from', async () => {
    await writeFile(join(dir, 'config.json'), JSON.stringify({ provider: { priceFloor: -1, colour: 'blue' }, api: { port: 70000 } }))
    const result = await runCli([...START, '--data-dir', dir], { env: { GPUMESH_LOG_LEVEL: 'loud' } })
    assert.equal(result.code, 1)
    assert.match(result.stderr, /provider\.priceFloor: .*\(from .*config\.json\)/)
    assert.match(result.stderr, /provider\.colour: unknown setting/)
    assert.match(result.stderr, /api\.port: .*65535/)
    assert.match(result.stderr, /log\.level: .*\(from GPUMESH_LOG_LEVEL\)/)
  })

  it('a bad --log-level spec stops the start, naming the entry at fault', async () => {
    const result = await runCli([...START, '--data-dir', dir, '--log-level', 'info,libp2p:kad-dht=loud'])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /log\.level: unknown level "loud" in "libp2p:kad-dht=loud" .*\(from flag --log-level\)/)
  })

  it('a port already in use is a clear error', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    try {
      const args = START.map((a) => a === '/ip4/127.0.0.1/tcp/0' ? `/ip4/127.0.0.1/tcp/${port}` : a)
      const result = await runCli([...args, '--data-dir', dir])
      assert.equal(result.code, 1)
      assert.match(result.stderr, /address already in use/)
    } finally {
      blocker.close()
    }
  })

  it('a corrupt identity file stops the start and is left as it was', async () => {
    await runCli(['init', '--data-dir', dir])
    const garbage = Buffer.from('this is not a key')
    await writeFile(join(dir, 'identity.key'), garbage, { mode: 0o600 })
    const result = await runCli([...START, '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /identity key is corrupt/)
    assert.deepEqual(await readFile(join(dir, 'identity.key')), garbage)
  })

  it('a second daemon on the same data dir is refused, the first keeps running', async () => {
    const first = await DaemonProcess.start(START, dir)
    const second = await runCli([...START, '--data-dir', dir])
    assert.equal(second.code, 1)
    assert.match(second.stderr, /in use by another gpumesh process/)
    const status = await first.json<{ selling: boolean }>(['status'])
    assert.equal(status.selling, true)
    assert.equal(await first.stop(), 0)
  })

  it('an unreachable bootstrap address does not stop the daemon', async () => {
    const nobody = '/ip4/127.0.0.1/tcp/9/p2p/12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7'
    const daemon = await DaemonProcess.start([...START, '--bootstrap', nobody], dir)
    // not a fixed sleep: wait until it has dialled the address and failed, then it must still be up
    await eventually('a failed bootstrap round', async () => (await daemon.api<{ bootstrap: { failedRounds: number } }>('/v1/status')).bootstrap.failedRounds >= 1 ? true : undefined)
    const status = await daemon.json<{ connections: number, selling: boolean, bootstrap: { failedRounds: number } }>(['status'])
    assert.ok(status.bootstrap.failedRounds >= 1, JSON.stringify(status.bootstrap))
    assert.equal(status.connections, 0)
    assert.equal(status.selling, true)
    assert.equal(await daemon.stop(), 0)
  })

  it('a local API port already in use is a clear error', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    try {
      const result = await runCli([...START, '--api-port', String((blocker.address() as { port: number }).port), '--data-dir', dir])
      assert.equal(result.code, 1)
      assert.match(result.stderr, /local API on 127\.0\.0\.1:\d+: address already in use/)
    } finally {
      blocker.close()
    }
  })

  it('a stale api.json from a killed daemon is not trusted', async () => {
    const daemon = await DaemonProcess.start(START, dir)
    await daemon.stop('SIGKILL')
    const result = await runCli(['status', '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /no running gpumesh daemon/)
  })

  it('client commands without a daemon say so', async () => {
    const result = await runCli(['status', '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /no running gpumesh daemon/)
  })

  it('SIGINT shuts down gracefully and removes the API endpoint file', async () => {
    const daemon = await DaemonProcess.start(START, dir)
    assert.equal(await daemon.stop('SIGINT'), 0)
    await assert.rejects(readFile(join(dir, 'api.json')))
    assert.match(daemon.stderr, /"msg":"stopped"/)
  })
})

// the API's answers to bad requests need a running daemon, not a fresh one each: one serves both cases
describe('the local API on bad requests (one daemon, a separate process)', function () {
  this.timeout(120_000)
  let daemon: DaemonProcess
  let url: string
  let token: string
  let apiDir: string
  before(async () => {
    apiDir = await mkdtemp(join(tmpdir(), 'gpumesh-bad-api-'))
    daemon = await DaemonProcess.start(START, apiDir)
    url = (JSON.parse(await readFile(join(apiDir, 'api.json'), 'utf8')) as { url: string }).url
    token = (await readFile(join(apiDir, 'api.token'), 'utf8')).trim()
  })
  after(async () => {
    // it kept running through every bad request, and stops cleanly
    if (daemon !== undefined) assert.equal(await daemon.stop(), 0, daemon.stderr)
    await rm(apiDir, { recursive: true, force: true })
  })
  const unauthorizedCount = async (): Promise<number> => {
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text()
    return Number(/gpumesh_api_requests_total\{route="unauthorized",status="401"\} (\d+)/.exec(metrics)?.[1] ?? 0)
  }

  it('the local API refuses a missing or wrong token', async () => {
    const before = await unauthorizedCount()
    assert.equal((await fetch(`${url}/v1/status`)).status, 401)
    assert.equal((await fetch(`${url}/v1/status`, { headers: { authorization: `Bearer ${'0'.repeat(64)}` } })).status, 401)
    const ok = await fetch(`${url}/v1/status`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(ok.status, 200)
    assert.equal(await unauthorizedCount(), before + 2)
    assert.equal((await fetch(`${url}/v1/providers?minVram=lots`, { headers: { authorization: `Bearer ${token}` } })).status, 400)
  })

  it('an unreadable request path gets 400, and the daemon keeps running', async () => {
    const { port } = new URL(url)
    for (const auth of [undefined, `Bearer ${token}`]) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '//', headers: auth === undefined ? {} : { authorization: auth } }, (res) => { res.resume(); resolve(res.statusCode ?? 0) })
        req.on('error', reject)
        req.end()
      })
      assert.equal(status, auth === undefined ? 401 : 400)
    }
    assert.equal((await daemon.json<{ selling: boolean }>(['status'])).selling, true)
  })
})
