import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { containerName, DockerExecutor, dockerRunArgs, type DockerRunOptions } from '../../../../node/executors/docker.js'
import type { ExecutionRequest } from '../../../../node/executors/types.js'
import { executorCompliance } from './compliance.js'

/** Whether a Docker engine answers here (this CI machine has only the client). */
const engine = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 }).status === 0
/** Image for real runs; they need it present locally (no pulls in tests). */
const IMAGE = process.env.GPUMESH_DOCKER_TEST_IMAGE ?? 'busybox:latest'
const imagePresent = engine && spawnSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore', timeout: 10_000 }).status === 0

const base: ExecutionRequest = {
  job: 'bafyjob', argv: ['python3', 'train.py', '--epochs', '1'], image: 'pytorch/pytorch:2.3.0', env: {}, inputs: [],
  outputs: [], timeoutMs: 60_000, network: false, gpus: []
}
const opts: DockerRunOptions = { name: 'gpumesh-bafyjob-0001', workdir: '/tmp/gpumesh-job-abc', uid: 1000, gid: 1000 }

/** The fixed sandbox prefix every argv starts with. */
function prefix (network: 'none' | 'bridge', name = opts.name): string[] {
  return ['run', '--rm', '--name', name, '--network', network, '--read-only', '--tmpfs', '/tmp',
    '-v', '/tmp/gpumesh-job-abc:/work', '-w', '/work', '--user', '1000:1000', '--pids-limit', '512',
    '--security-opt', 'no-new-privileges', '--cap-drop', 'ALL']
}
const NO_GPUS = ['-e', 'NVIDIA_VISIBLE_DEVICES=void', '-e', 'CUDA_VISIBLE_DEVICES=']

describe('dockerRunArgs', () => {
  it('network off by default, no GPUs, image then argv', () => {
    assert.deepEqual(dockerRunArgs(base, opts), [...prefix('none'), ...NO_GPUS, 'pytorch/pytorch:2.3.0', 'python3', 'train.py', '--epochs', '1'])
  })

  it('network on only when the job asks and the provider allows', () => {
    const asks = { ...base, network: true }
    assert.deepEqual(dockerRunArgs(asks, { ...opts, allowNetwork: true }), [...prefix('bridge'), ...NO_GPUS, 'pytorch/pytorch:2.3.0', 'python3', 'train.py', '--epochs', '1'])
    assert.deepEqual(dockerRunArgs(asks, opts).slice(4, 6), ['--network', 'none'])
    assert.deepEqual(dockerRunArgs(base, { ...opts, allowNetwork: true }).slice(4, 6), ['--network', 'none'])
  })

  it('GPUs by UUID, with the quoted device list docker parses as one CSV field', () => {
    const args = dockerRunArgs({ ...base, gpus: ['GPU-aaaa-1111', 'GPU-bbbb-2222'] }, opts)
    assert.deepEqual(args, [...prefix('none'),
      '--gpus', '"device=GPU-aaaa-1111,GPU-bbbb-2222"',
      '-e', 'CUDA_VISIBLE_DEVICES=GPU-aaaa-1111,GPU-bbbb-2222',
      '-e', 'NVIDIA_VISIBLE_DEVICES=GPU-aaaa-1111,GPU-bbbb-2222',
      'pytorch/pytorch:2.3.0', 'python3', 'train.py', '--epochs', '1'])
  })

  it('limits and provider CPU allocation', () => {
    const args = dockerRunArgs({ ...base, argv: ['true'], limits: { memoryBytes: 2 ** 30, cpuSeconds: 90.5 } }, { ...opts, cpus: 2, pidsLimit: 64 })
    assert.deepEqual(args, [...prefix('none').map((a) => a === '512' ? '64' : a),
      '--cpus', '2', '--memory', '1073741824', '--memory-swap', '1073741824', '--ulimit', 'cpu=91:91',
      ...NO_GPUS, 'pytorch/pytorch:2.3.0', 'true'])
  })

  it('the env allowlist drops names not on it, and the job cannot set the GPU names', () => {
    const env = { LANG: 'C.UTF-8', SECRET: 'x', LD_PRELOAD: '/evil.so', CUDA_VISIBLE_DEVICES: 'all', NVIDIA_VISIBLE_DEVICES: 'all', TZ: 'UTC' }
    assert.deepEqual(dockerRunArgs({ ...base, argv: ['env'], env }, opts).slice(prefix('none').length),
      ['-e', 'LANG=C.UTF-8', '-e', 'TZ=UTC', ...NO_GPUS, 'pytorch/pytorch:2.3.0', 'env'])
    assert.deepEqual(dockerRunArgs({ ...base, argv: ['env'], env }, { ...opts, envAllowlist: ['SECRET', 'CUDA_VISIBLE_DEVICES'] }).slice(prefix('none').length),
      ['-e', 'SECRET=x', ...NO_GPUS, 'pytorch/pytorch:2.3.0', 'env'])
  })

  it('never builds a shell command: metacharacters stay inside single argv elements', () => {
    const argv = ['sh; rm -rf /', '$(id)', '`x`', 'a b', '&&', '|']
    const args = dockerRunArgs({ ...base, argv }, opts)
    assert.deepEqual(args.slice(-argv.length), argv)
    assert.equal(args.some((a) => a === '-c' || a === 'bash'), false)
  })

  it('refuses a missing image, an image that looks like a flag, and a work dir that breaks -v', () => {
    const { image: _unused, ...noImage } = base
    assert.throws(() => dockerRunArgs(noImage, opts), /image/)
    assert.throws(() => dockerRunArgs({ ...base, image: '--privileged' }, opts), /image/)
    assert.throws(() => dockerRunArgs(base, { ...opts, workdir: '/tmp/a:b' }), /work dir/)
  })

  it('names containers gpumesh-<job>-<random> with only legal characters', () => {
    const a = containerName('bafy/job:1')
    assert.match(a, /^gpumesh-bafyjob1-[0-9a-f]{8}$/)
    assert.notEqual(a, containerName('bafy/job:1'))
  })
})

describe('DockerExecutor', function () {
  this.timeout(20_000)
  let root: string
  beforeEach(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-docker-test-')) })
  afterEach(async () => { await rm(root, { recursive: true, force: true }) })

  it('reports start-failed clearly when no Docker engine answers', async function () {
    if (engine) this.skip() // a real engine answers here: the real-run checks below cover it
    const t0 = Date.now()
    const result = await new DockerExecutor({ tmpRoot: root }).run({ ...base, image: 'busybox:latest', argv: ['true'] })
    assert.equal(result.exitCode, -1)
    assert.equal(result.reason, 'start-failed')
    assert.match(result.detail ?? '', /docker/i)
    assert.ok(Date.now() - t0 < 10_000)
    assert.deepEqual(await readdir(root), [], 'work dir removed')
  })

  it('reports start-failed when the docker client is missing', async () => {
    const result = await new DockerExecutor({ tmpRoot: root, dockerPath: '/nonexistent/docker' }).run({ ...base, argv: ['true'] })
    assert.equal(result.exitCode, -1)
    assert.equal(result.reason, 'start-failed')
    assert.match(result.detail ?? '', /ENOENT/)
  })

  it('reports start-failed for a request without an image, before spawning anything', async () => {
    const { image: _unused, ...noImage } = base
    const result = await new DockerExecutor({ tmpRoot: root, dockerPath: '/nonexistent/docker' }).run(noImage)
    assert.equal(result.reason, 'start-failed')
    assert.match(result.detail ?? '', /image/)
  })
})

if (imagePresent) {
  executorCompliance('docker', () => new DockerExecutor({ envAllowlist: ['GPUMESH_TEST_ALLOWED'] }), {
    image: IMAGE,
    echoArgv: (text) => ['echo', text],
    writeFileArgv: (path, text) => ['sh', '-c', 'printf %s "$1" > "$0"', path, text],
    catArgv: (path) => ['cat', path],
    exitArgv: (code) => ['sh', '-c', `exit ${code}`],
    sleepArgv: (ms) => ['sleep', String(Math.ceil(ms / 1000))],
    envArgv: (name) => ['sh', '-c', 'printenv "$0" || true', name],
    // Docker needs the NVIDIA runtime and these GPUs to exist for --gpus; covered by the argv tests instead.
    skip: ['exposes allocated GPUs by UUID']
  })
} else {
  describe('executor compliance: docker', () => {
    it('needs a Docker engine and a local test image', function () {
      // Skipped, not faked: real runs only where `docker info` succeeds and the image is present.
      this.skip()
    })
  })
}
