import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cidOfRaw } from '../../../crypto/index.js'
import { generateIdentity } from '../../../node/random.js'
import {
  JobSpecError, buildJobRequest, checkInputFiles, normaliseJobSpec, parseDuration, parseJobFile, readJobFile,
  requestLifetimeMs, validateJobSpec, type JobSpec, type JobSpecFields
} from '../../../node/market/job-spec.js'
import { jobRequestSchema, sealMessage } from '../../../protocol/index.js'
import { Identity } from '../../../crypto/index.js'
import { runCli } from '../../helpers/cli.js'

async function specError (fn: () => unknown): Promise<JobSpecError> {
  try {
    await fn()
  } catch (err) {
    assert.ok(err instanceof JobSpecError, String(err))
    return err
  }
  assert.fail('accepted')
}

const NOW = 1_750_000_000_000
const NONCE = new Uint8Array(16).fill(7)
const spec = (fields: JobSpecFields): JobSpec => validateJobSpec({ command: ['echo', 'hi'], ...fields })

describe('job spec (node/market/job-spec.ts)', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-jobspec-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  it('parses durations: units, compounds, bare numbers in the given unit', () => {
    assert.equal(parseDuration('90s', 's'), 90_000)
    assert.equal(parseDuration('15m', 's'), 900_000)
    assert.equal(parseDuration('2h', 's'), 7_200_000)
    assert.equal(parseDuration('1h30m', 's'), 5_400_000)
    assert.equal(parseDuration('500ms', 's'), 500)
    assert.equal(parseDuration('1d', 'ms'), 86_400_000)
    assert.equal(parseDuration(120, 's'), 120_000)
    assert.equal(parseDuration('120', 's'), 120_000)
    assert.equal(parseDuration(2500, 'ms'), 2500)
    for (const bad of ['abc', '', '5 parsecs', '-5s', -1, 'h', null, {}, '1.s']) assert.equal(parseDuration(bad, 's'), undefined, String(bad))
  })

  it('fills the defaults', () => {
    const s = spec({})
    assert.deepEqual({ ...s }, {
      executor: 'process', command: ['echo', 'hi'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 3600, network: false,
      gpus: 1, minVramGB: 0, models: [], tier: 'silver', maxPrice: 10, maxStartDelaySec: 300, regions: [], residency: 'prefer',
      latencySensitive: false, bidWindowMs: 2000, paymentRule: 'first-price', cpuCores: 0, memoryMiB: 0, diskMiB: 0, verification: { mode: 'none' }
    })
  })

  it('reads a JSON job file with spec keys; relative input files resolve against its directory', async () => {
    await mkdir(join(dir, 'jobs'))
    const path = join(dir, 'jobs', 'job.json')
    await writeFile(path, JSON.stringify({ command: ['python', 'train.py'], gpus: 2, maxRuntimeSec: 600, inputs: [{ path: 'train.py', file: 'src/train.py' }], tier: 'gold' }))
    const s = await parseJobFile(path)
    assert.equal(s.gpus, 2)
    assert.equal(s.maxRuntimeSec, 600)
    assert.equal(s.tier, 'gold')
    assert.deepEqual(s.inputs, [{ path: 'train.py', file: join(dir, 'jobs', 'src', 'train.py') }])
  })

  it('reads a YAML job file with friendly keys', async () => {
    const path = join(dir, 'job.yaml')
    await writeFile(path, [
      'label: sweep',
      'command: [python, train.py, --epochs, 3]',
      'gpu: [NVIDIA H100 80GB HBM3, a100]',
      'region: eu-west, us',
      'maxRuntime: 15m',
      'maxStartDelay: 90s',
      'bidWindow: 2.5s',
      'maxPrice: 2.35',
      'minVram: 40GB',
      'inputs: [data.csv, "cfg/run.yaml=conf.yaml"]',
      'outputs: out/model.bin, out/log.txt',
      'env: { SEED: 42, MODE: fast }'
    ].join('\n'))
    const s = await parseJobFile(path)
    assert.deepEqual(s.command, ['python', 'train.py', '--epochs', '3'])
    assert.deepEqual(s.models, ['nvidia-h100-80gb-hbm3', 'a100'])
    assert.deepEqual(s.regions, ['eu-west', 'us'])
    assert.equal(s.maxRuntimeSec, 900)
    assert.equal(s.maxStartDelaySec, 90)
    assert.equal(s.bidWindowMs, 2500)
    assert.equal(s.maxPrice, 2.35)
    assert.equal(s.minVramGB, 40)
    assert.deepEqual(s.inputs, [{ path: 'data.csv', file: join(dir, 'data.csv') }, { path: 'cfg/run.yaml', file: join(dir, 'conf.yaml') }])
    assert.deepEqual(s.outputs, ['out/model.bin', 'out/log.txt'])
    assert.deepEqual(s.env, { SEED: '42', MODE: 'fast' })
    assert.equal(s.label, 'sweep')
  })

  it('a file without a known extension is read as JSON, else YAML', async () => {
    await writeFile(join(dir, 'a.job'), '{"command": ["true"], "gpus": 0}')
    await writeFile(join(dir, 'b.job'), 'command: ["true"]\ngpus: 3\n')
    assert.equal((await parseJobFile(join(dir, 'a.job'))).gpus, 0)
    assert.equal((await parseJobFile(join(dir, 'b.job'))).gpus, 3)
  })

  it('flags (overrides, normalised the same way) win over the file, whichever key form each uses', async () => {
    const path = join(dir, 'job.yaml')
    await writeFile(path, 'command: [a]\ngpus: 1\nmaxRuntimeSec: 60\ngpu: h100\ntier: bronze\n')
    const flags = normaliseJobSpec({ gpus: '4', maxRuntime: '2h', gpu: ['l40s,a100'], env: ['A=1', 'B=x=y'] })
    const s = await parseJobFile(path, flags)
    assert.equal(s.gpus, 4)
    assert.equal(s.maxRuntimeSec, 7200)
    assert.deepEqual(s.models, ['l40s', 'a100'])
    assert.deepEqual(s.env, { A: '1', B: 'x=y' })
    assert.equal(s.tier, 'bronze')
  })

  it('a key given twice (spec key and alias) is an error naming both', async () => {
    const err = await specError(() => normaliseJobSpec({ maxRuntime: '1m', maxRuntimeSec: 60 }))
    assert.match(err.problems[0] as string, /maxRuntimeSec: give only one of maxRuntimeSec, maxRuntime/)
  })

  it('replicate K and spotcheck PERMILLE (the --replicate/--spotcheck flags) become the job\'s verification; the schema checks their range', async () => {
    assert.deepEqual(validateJobSpec(normaliseJobSpec({ command: ['a'], replicate: '2' })).verification, { mode: 'replicate', k: 2 })
    assert.deepEqual(validateJobSpec(normaliseJobSpec({ command: ['a'], spotcheck: 1000 })).verification, { mode: 'spotcheck', perMille: 1000 })
    assert.deepEqual(validateJobSpec(normaliseJobSpec({ command: ['a'] })).verification, { mode: 'none' })
    assert.match((await specError(() => normaliseJobSpec({ replicate: 2, spotcheck: 5 }))).problems[0] as string, /^replicate: give only one of replicate, spotcheck/)
    assert.match((await specError(() => normaliseJobSpec({ replicate: 'two' }))).problems[0] as string, /^replicate: expected a number of replicas/)
    for (const bad of [{ replicate: 1 }, { replicate: 6 }, { spotcheck: 0 }, { spotcheck: 1001 }]) {
      await specError(() => validateJobSpec(normaliseJobSpec({ command: ['a'], ...bad })))
    }
    assert.deepEqual(validateJobSpec(normaliseJobSpec({ command: ['a'], replicate: 5 })).verification, { mode: 'replicate', k: 5 })
  })

  it('every bad value is a JobSpecError naming its field', async () => {
    const cases: Array<[JobSpecFields, RegExp]> = [
      [{ gpus: 65 }, /^gpus: /],
      [{ gpus: 1.5 }, /^gpus: /],
      [{ bidWindowMs: 10 }, /^bidWindowMs: /],
      [{ bidWindow: '11m' }, /^bidWindowMs: /],
      [{ command: [] }, /^command: /],
      [{ command: 'python train.py' }, /^command: expected a list of arguments/],
      [{ outputs: ['../escape'] }, /^outputs\.0: /],
      [{ outputs: ['/abs'] }, /^outputs\.0: /],
      [{ executor: 'docker' }, /^image: the docker executor needs an image/],
      [{ image: 'alpine' }, /^image: only the docker executor/],
      [{ executor: 'wasm', command: ['mod.wasm'] }, /^command\.0: for the wasm executor/],
      [{ executor: 'wasm', command: ['mod.wasm'], inputs: ['/m/mod.wasm'], env: { MODE: 'fast' } }, /^env: a wasm job runs with an empty environment/],
      [{ executor: 'vm' }, /^executor: /],
      [{ tier: 'platinum' }, /^tier: /],
      [{ residency: 'maybe' }, /^residency: /],
      [{ paymentRule: 'dutch' }, /^paymentRule: /],
      [{ maxPrice: -1 }, /^maxPrice: /],
      [{ maxPrice: 'cheap' }, /^maxPrice: expected credits per GPU-hour/],
      [{ maxRuntime: 'forever' }, /^maxRuntime: expected a duration/],
      [{ maxRuntimeSec: 0 }, /^maxRuntimeSec: /],
      [{ maxStartDelay: '30d' }, /^maxStartDelaySec: /],
      [{ minVram: 'lots' }, /^minVram: expected a number of GB/],
      [{ gpus: 0, minVramGB: 40 }, /^gpus: minVramGB or models given, but gpus is 0/],
      [{ regions: ['Europe West'] }, /^regions\.0: /],
      [{ env: { 'BAD-NAME': 'x' } }, /^env/],
      [{ env: ['NOEQUALS'] }, /^env: expected KEY=VALUE/],
      [{ env: { CUDA_VISIBLE_DEVICES: '0' } }, /^env\.CUDA_VISIBLE_DEVICES: set by the provider/],
      [{ inputs: ['/x/a', '/y/a'] }, /^inputs\.1\.path: two inputs at a/],
      [{ verification: { mode: 'replicate', k: 9 } }, /^verification\.k: /],
      [{ colour: 'blue' }, /^colour: unknown key/],
      [{ label: 'x'.repeat(129) }, /^label: /]
    ]
    for (const [fields, expected] of cases) {
      const err = await specError(() => validateJobSpec(normaliseJobSpec({ command: ['echo'], ...fields })))
      assert.ok(err.problems.some((p) => expected.test(p)), `${JSON.stringify(fields)} → ${err.problems.join(' | ')}`)
    }
    // the spec form (the daemon's API) wants absolute input files; the friendly form resolves them
    const relative = await specError(() => validateJobSpec({ command: ['echo'], inputs: [{ path: 'a', file: 'relative.txt' }] }))
    assert.match(relative.problems[0] as string, /^inputs\.0\.file: expected an absolute path/)
  })

  it('unreadable, malformed and non-mapping files are JobSpecErrors naming the file', async () => {
    const missing = await specError(async () => await readJobFile(join(dir, 'nope.yaml')))
    assert.match(missing.message, /nope\.yaml.*\n {2}job: cannot read the job file: ENOENT/)
    await writeFile(join(dir, 'bad.json'), '{"command": [')
    assert.match((await specError(async () => await readJobFile(join(dir, 'bad.json')))).problems[0] as string, /^job: not valid JSON/)
    await writeFile(join(dir, 'bad.yaml'), 'command: [a\n  b: ]]')
    assert.match((await specError(async () => await readJobFile(join(dir, 'bad.yaml')))).problems[0] as string, /^job: not valid YAML/)
    await writeFile(join(dir, 'list.yaml'), '- a\n- b\n')
    assert.match((await specError(async () => await readJobFile(join(dir, 'list.yaml')))).problems[0] as string, /expected a mapping/)
  })

  it('all problems of a file are listed together, one per line', async () => {
    const path = join(dir, 'job.yaml')
    await writeFile(path, 'command: []\ngpus: 100\nbidWindow: 10ms\n')
    const err = await specError(async () => await parseJobFile(path))
    assert.deepEqual(err.problems.map((p) => p.split(':')[0]), ['command', 'gpus', 'bidWindowMs'])
    assert.equal(err.message.split('\n').length, 4)
  })

  it('checkInputFiles refuses missing files and directories', async () => {
    await writeFile(join(dir, 'ok.txt'), 'x')
    await checkInputFiles(spec({ inputs: [{ path: 'ok.txt', file: join(dir, 'ok.txt') }] }))
    const err = await specError(async () => await checkInputFiles(spec({ inputs: [{ path: 'a', file: join(dir, 'missing') }, { path: 'b', file: dir }] })))
    assert.match(err.problems[0] as string, /^inputs\.0\.file: cannot read .*missing \(ENOENT\)/)
    assert.match(err.problems[1] as string, /^inputs\.1\.file: .* is not a regular file/)
  })

  it('buildJobRequest makes a request that passes jobRequestSchema and can be signed', () => {
    const bytes = new TextEncoder().encode('data')
    const s = spec({ label: 'l', gpus: 2, minVramGB: 40, models: ['h100'], maxPrice: 0.1 + 0.2, regions: ['eu'], outputs: ['out.txt'], env: { A: 'b' }, inputs: [{ path: 'in.txt', file: '/tmp/in.txt' }] })
    const request = buildJobRequest(s, [{ path: 'in.txt', cid: cidOfRaw(bytes), size: bytes.byteLength }], NOW, NONCE)
    assert.equal(jobRequestSchema.safeParse(request).success, true)
    assert.equal(request.sla.maxPrice, 300_000)
    assert.equal(request.issuedAt, NOW)
    assert.equal(request.expiresAt, NOW + 300_000 + 3 * 3_600_000 + 60_000)
    assert.deepEqual(request.workload.argv, ['echo', 'hi'])
    assert.deepEqual(request.resources, { gpus: 2, minVramGB: 40, models: ['h100'], cpuCores: 0, memoryMiB: 0, diskMiB: 0 })
    assert.equal(request.label, 'l')
    assert.equal(request.workload.inputs[0]?.cid.toString(), cidOfRaw(bytes).toString())
    sealMessage(generateIdentity(), 'job-request', request)
  })

  it('latencySensitive and maxRtt reach the placement only when given (an old job keeps its encoding)', () => {
    const plain = buildJobRequest(spec({}), [], NOW, NONCE)
    assert.deepEqual(plain.placement, { regions: [], residency: 'prefer' })
    const near = buildJobRequest(validateJobSpec(normaliseJobSpec({ command: ['echo'], latencySensitive: true, maxRtt: '80ms' })), [], NOW, NONCE)
    assert.deepEqual(near.placement, { regions: [], residency: 'prefer', latencySensitive: true, maxRttMs: 80 })
    assert.equal(jobRequestSchema.safeParse(near).success, true)
    assert.equal(validateJobSpec(normaliseJobSpec({ command: ['echo'], maxRtt: 1 })).maxRttMs, 1)
    for (const bad of [0, '20s', 'far']) assert.throws(() => validateJobSpec(normaliseJobSpec({ command: ['echo'], maxRtt: bad })), JobSpecError, String(bad))
  })

  it('the request lifetime is capped at 7 days', () => {
    assert.equal(requestLifetimeMs({ maxStartDelaySec: 0, maxRuntimeSec: 10 }), 90_000)
    assert.equal(requestLifetimeMs({ maxStartDelaySec: 300, maxRuntimeSec: 30 * 86_400 }), 7 * 86_400_000)
  })

  it('buildJobRequest turns wire-level problems into JobSpecErrors', async () => {
    const bad = await specError(() => buildJobRequest(spec({}), [{ path: '../x', cid: cidOfRaw(new Uint8Array(1)), size: 1 }], NOW, NONCE))
    assert.match(bad.problems[0] as string, /^workload\.inputs\.0\.path: /)
    const env = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`V${i}`, 'x'.repeat(4000)]))
    const big = await specError(() => buildJobRequest(spec({ env }), [], NOW, NONCE))
    assert.match(big.problems[0] as string, /encodes to \d+ bytes/)
  })
})

describe('gpumesh job submit checks the job before asking the daemon (separate processes)', function () {
  this.timeout(30_000)
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-submit-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })
  // no daemon runs for `dir`: a job that passed the checks would fail with "no running gpumesh daemon"
  const submit = async (...args: string[]) => await runCli(['job', 'submit', '--data-dir', join(dir, 'data'), ...args])

  it('a bad job file: exit 1, every problem on its own line, the daemon never asked', async () => {
    const file = join(dir, 'bad.yaml')
    await writeFile(file, 'command: [python, train.py]\ngpus: 100\nbidWindow: 10ms\noutputs: [../x]\nexecutor: docker\n')
    const result = await submit('--file', file)
    assert.equal(result.code, 1)
    assert.equal(result.stdout, '')
    assert.match(result.stderr, /^gpumesh: invalid job \(.*bad\.yaml\):\n/)
    for (const field of ['gpus', 'bidWindowMs', 'outputs\\.0']) assert.match(result.stderr, new RegExp(`\\n  ${field}: `))
    assert.doesNotMatch(result.stderr, /daemon/)
  })

  it('flags override the file and are named in problems; a missing input file is caught', async () => {
    const file = join(dir, 'job.json')
    await writeFile(file, JSON.stringify({ command: ['true'], gpus: 1 }))
    const result = await submit('--file', file, '--gpus', '65', '--tier', 'platinum')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /\n {2}--gpus: /)
    assert.match(result.stderr, /\n {2}--tier: /)
    // input files are looked at once the job is otherwise valid
    const missing = await submit('--file', file, '--inputs', 'missing.bin')
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /\n {2}--inputs \(inputs\.0\.file\): cannot read .*missing\.bin \(ENOENT\)/)
  })

  it('unreadable flag values and a missing command are usage errors (exit 2)', async () => {
    const runtime = await submit('--max-runtime', 'soon', '--', 'echo', 'hi')
    assert.equal(runtime.code, 2)
    assert.match(runtime.stderr, /--max-runtime: expected a duration/)
    const env = await submit('--env', 'NOEQUALS', '--', 'echo')
    assert.equal(env.code, 2)
    assert.match(env.stderr, /--env: expected KEY=VALUE/)
    const none = await submit('--gpus', '1')
    assert.equal(none.code, 2)
    assert.match(none.stderr, /give the command after --/)
  })

  it('a valid job gets as far as looking for the daemon', async () => {
    const result = await submit('--gpus', '0', '--max-runtime', '90s', '--', 'echo', 'hi')
    assert.equal(result.code, 1)
    assert.match(result.stderr, /no running gpumesh daemon/)
  })
})
