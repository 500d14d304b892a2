import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiClient, ApiRequestError } from '../../../node/api/client.js'
import { ensureApiToken, writeEndpoint } from '../../../node/api/credentials.js'
import type { JobView, LedgerView, ResultView } from '../../../node/market/views.js'
import { credits, progressLine } from '../../../cli/job-commands.js'
import { runCli } from '../../helpers/cli.js'
import { ApiError, MAX_BODY_BYTES, startApiServer, type ApiServer, type Route } from '../../../node/api/server.js'
import { silentLoggers } from '../../../node/logger.js'
import { createMetrics } from '../../../node/metrics.js'

const TOKEN = 'test-token-0123456789'

interface Reply { status: number, body: { error?: { code: string, message: string } } & Record<string, unknown>, headers: Headers }

describe('local API server (node/api/server.ts)', () => {
  let server: ApiServer
  let calls: Array<{ route: string, query: string, body: unknown }>

  const record = (route: string, result: (body: unknown) => unknown = (body) => ({ got: body })): Route => async (query, _signal, body) => {
    calls.push({ route, query: query.toString(), body })
    return result(body)
  }

  beforeEach(async () => {
    calls = []
    server = await startApiServer({
      host: '127.0.0.1',
      port: 0,
      token: TOKEN,
      metrics: createMetrics(),
      log: silentLoggers.forComponent('api'),
      routes: {
        '/v1/status': record('status', () => ({ ok: true })),
        'POST /v1/jobs': record('submit', () => ({ job: 'bafyjob' })),
        '/v1/jobs': record('list', () => []),
        'POST /v1/job/cancel': record('cancel'),
        '/v1/job': async () => { throw new ApiError(404, 'NO_SUCH_JOB', 'no such job') }
      }
    })
  })
  afterEach(async () => { await server.close() })

  async function call (method: string, path: string, init: { body?: string, type?: string, token?: string | null } = {}): Promise<Reply> {
    const headers: Record<string, string> = {}
    if (init.token !== null) headers.authorization = `Bearer ${init.token ?? TOKEN}`
    if (init.type !== undefined) headers['content-type'] = init.type
    const res = await fetch(new URL(path, server.url), { method, headers, ...(init.body !== undefined ? { body: init.body } : {}) })
    const text = await res.text()
    return { status: res.status, body: text === '' ? {} : JSON.parse(text), headers: res.headers }
  }

  it('checks the bearer token first, whatever the method, route or body', async () => {
    for (const [method, path] of [['GET', '/v1/status'], ['POST', '/v1/jobs'], ['GET', '/nowhere'], ['DELETE', '/v1/status']] as const) {
      const res = await call(method, path, { token: null, ...(method === 'POST' ? { body: 'not json', type: 'application/json' } : {}) })
      assert.equal(res.status, 401, `${method} ${path}`)
      assert.equal(res.body.error?.code, 'UNAUTHORIZED')
    }
    assert.equal((await call('GET', '/v1/status', { token: 'wrong' })).status, 401)
    assert.deepEqual(calls, [])
  })

  it('a plain key is a GET route; GET routes keep working through the client', async () => {
    const client = new ApiClient(server.url, TOKEN)
    assert.deepEqual(await client.get('/v1/status'), { ok: true })
    assert.deepEqual(await client.get('/v1/jobs'), [])
    assert.deepEqual(calls.map((c) => c.route), ['status', 'list'])
  })

  it('POST routes get the parsed JSON body, or undefined without one', async () => {
    const client = new ApiClient(server.url, TOKEN)
    const spec = { command: ['echo', 'hi'], env: { A: 'ü' }, gpus: 2 }
    assert.deepEqual(await client.post('/v1/jobs', {}, spec), { job: 'bafyjob' })
    assert.deepEqual(await client.post('/v1/job/cancel', { id: 'bafyjob' }), { })
    assert.deepEqual(calls, [
      { route: 'submit', query: '', body: spec },
      { route: 'cancel', query: 'id=bafyjob', body: undefined }
    ])
  })

  it('a known path with the wrong method is 405 and names the allowed methods', async () => {
    const post = await call('POST', '/v1/status', { body: '{}', type: 'application/json' })
    assert.equal(post.status, 405)
    assert.equal(post.body.error?.code, 'METHOD_NOT_ALLOWED')
    assert.equal(post.headers.get('allow'), 'GET')
    const get = await call('GET', '/v1/job/cancel?id=x')
    assert.equal(get.status, 405)
    assert.equal(get.headers.get('allow'), 'POST')
    assert.equal((await call('DELETE', '/v1/jobs')).headers.get('allow'), 'POST, GET')
    assert.equal((await call('POST', '/metrics')).status, 405)
    assert.deepEqual(calls, [])
  })

  it('an unknown path is 404, a route\'s ApiError keeps its status and code', async () => {
    const unknown = await call('POST', '/v1/nothing', { body: '{}', type: 'application/json' })
    assert.equal(unknown.status, 404)
    assert.equal(unknown.body.error?.code, 'NOT_FOUND')
    const client = new ApiClient(server.url, TOKEN)
    await assert.rejects(client.get('/v1/job', { id: 'x' }), (err) => err instanceof ApiRequestError && err.status === 404 && err.code === 'NO_SUCH_JOB')
  })

  it('bad JSON is 400 BAD_JSON; a body that is not JSON is 415', async () => {
    const bad = await call('POST', '/v1/jobs', { body: '{"command": [', type: 'application/json' })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error?.code, 'BAD_JSON')
    const charset = await call('POST', '/v1/jobs', { body: '{"a":1}', type: 'application/json; charset=utf-8' })
    assert.equal(charset.status, 200)
    const text = await call('POST', '/v1/jobs', { body: 'a=1', type: 'application/x-www-form-urlencoded' })
    assert.equal(text.status, 415)
    assert.equal(text.body.error?.code, 'UNSUPPORTED_MEDIA_TYPE')
    assert.deepEqual(calls.map((c) => c.body), [{ a: 1 }])
  })

  it('a body over 1 MiB is 413 BODY_TOO_LARGE, by its content-length or as it streams in', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES) })
    const declared = await call('POST', '/v1/jobs', { body: big, type: 'application/json' })
    assert.equal(declared.status, 413)
    assert.equal(declared.body.error?.code, 'BODY_TOO_LARGE')
    // chunked, no content-length: counted while it arrives
    const streamed = await new Promise<{ status: number, body: string }>((resolve, reject) => {
      const req = httpRequest(new URL('/v1/jobs', server.url), { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } }, (res) => {
        let body = ''
        res.setEncoding('utf8').on('data', (d: string) => { body += d }).on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
      })
      req.on('error', reject)
      const chunk = 'x'.repeat(64 * 1024)
      let sent = 0
      const write = (): void => {
        while (sent <= MAX_BODY_BYTES + chunk.length) {
          sent += chunk.length
          if (!req.write(chunk)) { req.once('drain', write); return }
        }
        req.end()
      }
      write()
    })
    assert.equal(streamed.status, 413)
    assert.match(streamed.body, /BODY_TOO_LARGE/)
    // exactly at the limit is fine
    const atLimit = JSON.stringify({ pad: 'x'.repeat(MAX_BODY_BYTES - 10) })
    assert.equal(atLimit.length, MAX_BODY_BYTES)
    assert.equal((await call('POST', '/v1/jobs', { body: atLimit, type: 'application/json' })).status, 200)
    assert.equal(calls.length, 1)
  })
})

describe('job and ledger commands against a stub of the daemon\'s API (separate processes)', function () {
  this.timeout(30_000)
  const PROVIDER = '12D3KooWProviderProviderProviderProviderProvider1'
  let dir: string
  let server: ApiServer
  let submitted: unknown[]
  let polls: number

  /** The job as the requester sees it after `step` polls: bidding, awarded, running, settled. */
  function jobAt (step: number): JobView {
    const events = [{ at: 1_000, type: 'submitted', text: 'offered to the market' }, { at: 2_000, type: 'bid', text: 'bid 1.5 cr/GPU-h', peer: PROVIDER }]
    const base: JobView = {
      id: 'bafyjob1', label: 'demo', status: 'bidding', tier: 'silver', executor: 'process', gpus: 1, maxPrice: 10_000_000,
      submittedAt: 1_000, updatedAt: 2_000, round: 1, paid: 0, events: events.slice(0, 1),
      bids: [{ cid: 'bafybid1bid1bid1bid1', provider: PROVIDER, price: 1_500_000, model: 'nvidia-h100-80gb-hbm3', region: 'eu-west', effectivePrice: 1_650_000, rttMs: 27, rttSource: 'estimated' }]
    }
    if (step === 0) return base
    const award = { attempt: 1, cid: 'bafyaward', provider: PROVIDER, bid: 'bafybid1bid1bid1bid1', price: 1_500_000, paymentRule: 'first-price' as const, considered: 1, why: 'only bid', awardedAt: 3_000 }
    if (step === 1) return { ...base, status: 'awarded', award, events }
    const receipt = { cid: 'bafyreceipt', provider: PROVIDER, exitCode: 0, startedAt: 3_000, endedAt: 4_000, gpuSeconds: 1, outputs: 'bafyout', outputsValid: true }
    return { ...base, status: 'settled', award, receipt, paid: 417, events: [...events, { at: 5_000, type: 'settled', text: 'paid 0.0004 cr' }] }
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpumesh-cli-stub-'))
    submitted = []
    polls = 0
    await mkdir(join(dir, 'data'))
    await mkdir(join(dir, 'fetched'))
    await writeFile(join(dir, 'fetched', 'result.txt'), 'hello\n')
    const result: ResultView = {
      id: 'bafyjob1', status: 'settled', exitCode: 0, receipt: jobAt(2).receipt,
      outputs: [{ path: 'out/result.txt', size: 6, cid: 'bafyblob', file: join(dir, 'fetched', 'result.txt') }]
    }
    const ledger: LedgerView = {
      peerId: '12D3KooWMe', earned: 2_000_000, spent: 417, balance: 1_999_583,
      entries: [{ job: 'bafyjob1', award: 'bafyaward', role: 'requester', counterparty: PROVIDER, price: 1_500_000, cumulative: 417, seq: 1, gpuSeconds: 1, state: 'settled', updatedAt: 5_000 }]
    }
    const known = (query: URLSearchParams): void => { if (query.get('id') !== 'bafyjob1' && query.get('id') !== 'bafyfail') throw new ApiError(404, 'NO_SUCH_JOB', `no job ${query.get('id') ?? ''}`) }
    server = await startApiServer({
      host: '127.0.0.1',
      port: 0,
      token: await ensureApiToken(join(dir, 'data')),
      metrics: createMetrics(),
      log: silentLoggers.forComponent('api'),
      routes: {
        '/v1/status': async () => ({ connections: 1 }),
        'POST /v1/jobs': async (_q, _s, body) => { submitted.push(body); return { job: (body as { label?: string }).label === 'fail' ? 'bafyfail' : 'bafyjob1' } },
        '/v1/jobs': async () => [jobAt(2)],
        '/v1/job': async (query) => {
          known(query)
          return query.get('id') === 'bafyfail' ? { ...jobAt(0), id: 'bafyfail', status: 'failed', reason: 'no acceptable bids in 3 rounds' } : jobAt(Math.min(2, polls++))
        },
        '/v1/job/result': async (query) => { known(query); return result },
        '/v1/job/logs': async (query) => ({ text: query.get('from') === '0' ? 'line 1\n' : 'line 2\n', next: query.get('from') === '0' ? 7 : 14, done: query.get('from') !== '0' }),
        'POST /v1/job/cancel': async (query) => { known(query); return { ...jobAt(0), status: 'cancelled', reason: 'cancelled by the requester' } },
        '/v1/ledger': async () => ledger
      }
    })
    await writeEndpoint(join(dir, 'data'), { url: server.url, pid: process.pid, peerId: '12D3KooWMe', role: 'node' })
  })
  afterEach(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** Run the CLI on the stub's data dir (the flag goes before any `--`). */
  const gpumesh = async (...args: string[]) => {
    const end = args.includes('--') ? args.indexOf('--') : args.length
    return await runCli([...args.slice(0, end), '--data-dir', join(dir, 'data'), ...args.slice(end)])
  }

  it('submit POSTs the validated spec with absolute input files and prints the id', async () => {
    await writeFile(join(dir, 'in.txt'), 'x')
    const result = await gpumesh('job', 'submit', '--gpus', '2', '--gpu', 'h100', '--max-price', '2.5', '--inputs', join(dir, 'in.txt'), '--', 'python', 'train.py')
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, 'bafyjob1\n')
    const body = submitted[0] as Record<string, unknown>
    assert.deepEqual(body.command, ['python', 'train.py'])
    assert.equal(body.gpus, 2)
    assert.equal(body.maxPrice, 2.5)
    assert.deepEqual(body.models, ['h100'])
    assert.deepEqual(body.inputs, [{ path: 'in.txt', file: join(dir, 'in.txt') }])
    const json = await gpumesh('job', 'submit', '--json', '--', 'true')
    assert.deepEqual(JSON.parse(json.stdout), { job: 'bafyjob1' })
  })

  it('submit --wait follows the job to settlement and lists the outputs; --json prints only the final JobView', async () => {
    const result = await gpumesh('job', 'submit', '--wait', '--', 'true')
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /submitted +offered to the market\n.*bid +bid 1\.5 cr\/GPU-h\n.*settled +paid/)
    assert.match(result.stdout, /\njob bafyjob1: settled: paid 0\.0004 cr \(exit 0\)\nOUTPUT +SIZE +FILE\nout\/result\.txt +6 +\S+result\.txt\n$/)
    polls = 0
    const json = await gpumesh('job', 'submit', '--wait', '--json', '--', 'true')
    assert.equal(json.code, 0, json.stderr)
    assert.equal((JSON.parse(json.stdout) as JobView).status, 'settled')
  })

  it('submit --wait exits 1 and says why when the job does not settle', async () => {
    const result = await gpumesh('job', 'submit', '--wait', '--label', 'fail', '--', 'true')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /^gpumesh: job bafyfail failed: no acceptable bids in 3 rounds\n$/)
  })

  it('progress lines and prices', () => {
    assert.equal(progressLine({ ...jobAt(0), bids: [...jobAt(0).bids, ...jobAt(0).bids, ...jobAt(0).bids] }), 'bidding (3 bids)')
    assert.equal(progressLine({ ...jobAt(0), round: 2 }), 'bidding (1 bid, round 2)')
    assert.equal(progressLine(jobAt(1)), `awarded to ${PROVIDER} at 1.50 cr/GPU-h: only bid`)
    assert.equal(progressLine({ ...jobAt(2), status: 'completed' }), 'completed exit 0')
    assert.equal(progressLine(jobAt(2)), 'settled: paid 0.0004 cr')
    assert.deepEqual([1_850_000, 417, 0, -3_500_000, 12_345_678, 49].map(credits), ['1.85', '0.0004', '0.00', '-3.50', '12.3457', '0.00'])
  })

  it('status, list, logs, cancel and ledger print what the API returned', async () => {
    polls = 2
    const status = await gpumesh('job', 'status', 'bafyjob1')
    assert.equal(status.code, 0, status.stderr)
    assert.match(status.stdout, /status: +settled/)
    assert.match(status.stdout, /award: +12D3KooWProvider\S+ at 1\.50 cr\/GPU-h \(first-price, 1 bid considered\)/)
    assert.match(status.stdout, /BID +PROVIDER +PRICE +EFFECTIVE +RTT\n/)
    assert.match(status.stdout, /1\.50 +1\.65 +~27 ms\n/)
    assert.match(status.stdout, /paid: +0\.0004 cr/)
    const missing = await gpumesh('job', 'status', 'nope')
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /no job nope/)
    const list = await gpumesh('job', 'list')
    assert.match(list.stdout, /^ID +STATUS +TIER +PROVIDER +PRICE +PAID +LABEL\nbafyjob1 +settled +silver +12D3Ko…vider1 +1\.50 +0\.0004 +demo\n$/)
    assert.equal((await gpumesh('job', 'logs', 'bafyjob1')).stdout, 'line 1\n')
    assert.equal((await gpumesh('job', 'logs', 'bafyjob1', '--follow')).stdout, 'line 1\nline 2\n')
    const settled = await gpumesh('job', 'cancel', 'bafyjob1')
    assert.equal(settled.code, 1, 'a settled job: nothing to cancel')
    assert.match(settled.stderr, /^gpumesh: job bafyjob1 is already settled: nothing to cancel\n$/)
    polls = 0
    const cancel = await gpumesh('job', 'cancel', 'bafyjob1')
    assert.equal(cancel.code, 0, cancel.stderr)
    assert.match(cancel.stdout, /^job bafyjob1: cancelled by the requester\n$/)
    const ledger = await gpumesh('ledger')
    assert.match(ledger.stdout, /earned: +2\.00 cr\n +spent: +0\.0004 cr\n +balance: +1\.9996 cr/)
    assert.match(ledger.stdout, /\nbafyjob1 +requester +12D3Ko…vider1 +1\.50 +0\.0004 \(#1\) +- +1 +settled /)
    assert.equal((JSON.parse((await gpumesh('ledger', '--json')).stdout) as LedgerView).balance, 1_999_583)
  })

  it('result --out copies the outputs and never overwrites', async () => {
    const out = join(dir, 'copy')
    const first = await gpumesh('job', 'result', 'bafyjob1', '--out', out)
    assert.equal(first.code, 0, first.stderr)
    assert.equal(await readFile(join(out, 'out', 'result.txt'), 'utf8'), 'hello\n')
    assert.match(first.stdout, /copied 1 file to/)
    const again = await gpumesh('job', 'result', 'bafyjob1', '--out', out)
    assert.equal(again.code, 1)
    assert.match(again.stderr, /refusing to overwrite .*result\.txt/)
  })
})
