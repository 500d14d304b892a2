/**
 * The Docker image and the compose network, run without a container engine: docker/Dockerfile's runtime
 * stage and docker/compose.yaml's services are read (test/helpers/image.ts), the image's files laid out
 * under a temporary root, and each service's own entrypoint, command and health check run as separate OS
 * processes with the container's environment, as the image's user (uid 10001 via setpriv when this runs
 * as root). The only settings changed are the ones one host cannot share the way separate containers do:
 * listen on 127.0.0.1 (each container has its own IP and port 4001), allow several peers on one IP, and
 * reach the bootstrap peer at 127.0.0.1 instead of the DNS name `bootstrap`.
 *
 * Then `docker-compose config -q` (Debian's docker-compose 1.29) checks the compose file, where it is installed.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ApiClient } from '../../node/api/client.js'
import { eventually } from '../helpers/processes.js'
import { Container, type ContainerProcess, buildRootfs, createVolumes, ownerOf, parseCompose, parseDockerfile } from '../helpers/image.js'

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const image = parseDockerfile(readFileSync(join(REPO, 'docker', 'Dockerfile'), 'utf8'))
const services = parseCompose(readFileSync(join(REPO, 'docker', 'compose.yaml'), 'utf8'))
const readme = readFileSync(join(REPO, 'docker', 'README.md'), 'utf8')

/** The settings one host cannot share as separate containers do (see the header). */
const ONE_HOST = { GPUMESH_LISTEN: '/ip4/127.0.0.1/tcp/0', GPUMESH_CONNECTIONS_ALLOW: '/ip4/127.0.0.1', GPUMESH_GOSSIP_ALLOW_COLOCATION: 'true' }
const READY = (stdout: string): boolean => stdout.includes('press Ctrl+C to stop')

interface StatusJson { peerId: string, selling: boolean, gpuDetection: string, executors: Record<string, string>, capabilityKeys: Array<{ provided: boolean }> }

/** A TCP port free on 127.0.0.1 now, for the bootstrap peer, whose address the nodes must know before it starts. */
async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer().on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { resolve(typeof address === 'object' && address !== null ? address.port : 0) })
    })
  })
}

const service = (name: string): NonNullable<typeof services[string]> => {
  const s = services[name]
  if (s === undefined) throw new Error(`docker/compose.yaml has no service ${name}`)
  return s
}

describe('the Docker image run as its own commands, without a container engine (docker/Dockerfile, docker/compose.yaml)', function () {
  this.timeout(120_000)
  let tmp: string
  let root: string
  let volumes: Record<string, string>
  const started: ContainerProcess[] = []
  const container = (name: string, vols = volumes): Container => new Container(name, image, root, vols, service(name))

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-image-'))
    await chmod(tmp, 0o755) // the image's user must reach the root below
    root = join(tmp, 'rootfs')
    await buildRootfs(image, REPO, root)
    volumes = await createVolumes(image, services, join(tmp, 'volumes'))
  })

  after(async () => {
    await Promise.all(started.map(async (p) => await p.stop()))
    if (tmp !== undefined) await rm(tmp, { recursive: true, force: true })
  })

  it('runs as a non-root user (uid 10001) that bubblewrap sandboxes jobs as, listens on the ports it EXPOSEs, and has a health check', () => {
    assert.equal(image.user.name, 'gpumesh')
    assert.equal(image.user.uid, 10001)
    assert.ok(image.packages.includes('bubblewrap'), `the runtime stage installs ${image.packages.join(', ')}`)
    const ports = [...(image.env.GPUMESH_LISTEN ?? '').matchAll(/\/tcp\/(\d+)/g)].map((m) => Number(m[1]))
    assert.deepEqual(ports, image.expose)
    assert.equal(image.env.GPUMESH_DATA_DIR, '/data')
    assert.deepEqual(image.healthcheck?.test.slice(0, 2), ['gpumesh', 'status'])
    // every node service mounts its own data volume at the image's data dir, and the bootstrap info read-only
    for (const [name, s] of Object.entries(services).filter(([, s]) => s.entrypoint?.[0] === 'bootstrap-addr.sh')) {
      assert.ok(s.volumes.some((v) => v.target === image.env.GPUMESH_DATA_DIR && v.volume === `${name}-data`), name)
      assert.ok(s.volumes.some((v) => v.target === '/shared' && v.readOnly), name)
    }
  })

  it('bootstrap-addr.sh waits BOOTSTRAP_WAIT seconds for the bootstrap peer\'s id, then fails saying why; a bad id or setting fails at once', async () => {
    // its own bootstrap-info volumes, so the network below is not touched: one empty, one with a garbled file
    const empty = join(tmp, 'empty-info')
    await mkdir(empty)
    const node = container('node1', { ...volumes, 'bootstrap-info': empty })
    const gaveUp = await node.spawn(node.argv(), { ...ONE_HOST, BOOTSTRAP_WAIT: '1' }).result()
    assert.equal(gaveUp.code, 1, gaveUp.stderr)
    assert.match(gaveUp.stderr, /waiting up to 1 s for \S+\/bootstrap\.json/)
    assert.match(gaveUp.stderr, /gave up after 1 s \(BOOTSTRAP_WAIT\): \S+\/bootstrap\.json does not exist; it is written by `gpumesh init --json` in the bootstrap-init service/)
    const bad = await node.spawn(node.argv(), { BOOTSTRAP_WAIT: 'soon' }).result()
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /BOOTSTRAP_WAIT must be a whole number of seconds, not 'soon'/)
    // a bootstrap.json without a base58 peer id (0, O, I and l are not base58)
    const info = join(tmp, 'bad-info')
    await mkdir(info)
    await writeFile(join(info, 'bootstrap.json'), '{\n  "peerId": "12D3KooW0OIl"\n}\n')
    await chmod(join(info, 'bootstrap.json'), 0o644)
    const garbled = await container('node1', { ...volumes, 'bootstrap-info': info }).spawn(node.argv()).result()
    assert.equal(garbled.code, 1)
    assert.match(garbled.stderr, /no peer id \(base58\) in \S+\/bootstrap\.json/)
  })

  it('the compose network in any start order: nodes wait for bootstrap-init, the health checks answer, and the README\'s job submit from the buyer settles', async function () {
    const port = await freePort()
    const boot = container('bootstrap')
    const health = async (c: Container): Promise<{ code: number | null, stdout: string, stderr: string }> =>
      await c.spawn(c.healthcheck() ?? assert.fail(`${c.name} has no health check`)).result()

    // unhealthy while its daemon does not run: compose's health check of the bootstrap, the image's of the buyer
    for (const down of await Promise.all([boot, container('buyer')].map(health))) {
      assert.notEqual(down.code, 0, `the health check passed with no daemon running: ${down.stdout}`)
      assert.match(down.stderr, /no running gpumesh daemon for data dir \S+-data/)
    }

    // the nodes first: each waits for the bootstrap peer's id
    const nodeNames = Object.keys(services).filter((n) => service(n).entrypoint?.[0] === 'bootstrap-addr.sh')
    assert.ok(nodeNames.includes('buyer'), 'compose.yaml has a buyer')
    const nodes = nodeNames.map((n) => container(n))
    const procs = nodes.map((c) => c.spawn(c.argv(), { ...ONE_HOST, BOOTSTRAP_HOST: '127.0.0.1', BOOTSTRAP_PORT: String(port) }))
    started.push(...procs)
    await Promise.all(procs.map(async (p) => await p.until('"waiting up to … s"', (_o, e) => /waiting up to \d+ s for /.test(e))))

    // bootstrap-init, then the bootstrap peer on the port the nodes were given
    const init = container('bootstrap-init')
    const created = await init.spawn(init.argv()).result()
    assert.equal(created.code, 0, created.stderr)
    const info = JSON.parse(await readFile(join(volumes['bootstrap-info'] as string, 'bootstrap.json'), 'utf8')) as { peerId: string }
    assert.match(info.peerId, /^12D3KooW/)
    const bootstrap = boot.spawn(boot.argv(), { ...ONE_HOST, GPUMESH_LISTEN: `/ip4/127.0.0.1/tcp/${port}` })
    started.push(bootstrap)
    await bootstrap.until('its ready line', READY)
    const up = await health(boot)
    assert.equal(up.code, 0, up.stderr)
    assert.equal((JSON.parse(up.stdout) as StatusJson).peerId, info.peerId)

    await Promise.all(procs.map(async (p) => await p.until('its ready line', READY)))
    for (const p of procs) assert.match(p.stderr, new RegExp(`GPUMESH_BOOTSTRAP=/ip4/127\\.0\\.0\\.1/tcp/${port}/p2p/${info.peerId}`))

    // the image's own health check, as uid 10001, in the buyer and one provider, while the providers announce (their API)
    const buyer = nodes[nodeNames.indexOf('buyer')] as Container
    const provider = nodes.find((c) => c.name !== 'buyer') as Container
    const api = async (c: Container): Promise<ApiClient> => await ApiClient.fromDataDir(c.hostPath(image.env.GPUMESH_DATA_DIR as string))
    const announced = async (c: Container): Promise<StatusJson> => await eventually(`${c.name} announced`, async () => {
      const s = await (await api(c)).get<StatusJson>('/v1/status')
      return s.capabilityKeys.length > 0 && s.capabilityKeys.every((k) => k.provided) ? s : undefined
    }, 60_000)
    const [checks, statuses] = await Promise.all([
      Promise.all([buyer, provider].map(health)),
      Promise.all(nodes.filter((c) => c !== buyer).map(announced))
    ])
    const [buyerStatus, providerStatus] = checks.map((ok) => {
      assert.equal(ok.code, 0, ok.stderr)
      return JSON.parse(ok.stdout) as StatusJson
    }) as [StatusJson, StatusJson]
    assert.equal(providerStatus.selling, true)
    // provider.sell = false: the buyer never even looks for GPUs to sell (with it on, detection would say "off (…)")
    assert.equal(buyerStatus.selling, false)
    assert.equal(buyerStatus.gpuDetection, 'not run')
    const owner = ownerOf(image)
    const sandboxed = statuses.every((s) => /^sandboxed with \S*bwrap/.test(s.executors.process ?? ''))
    if (!sandboxed) {
      // the providers refuse process jobs: bubblewrap cannot make a user namespace for this user here
      console.log(`      skipped the job: bubblewrap does not run for uid ${owner?.uid ?? process.getuid?.()} here (${statuses[0]?.executors.process})`)
      return this.skip()
    }

    // the README's exact command, split by a shell as the host's shell splits `docker compose exec`'s arguments
    const example = /^docker compose -f docker\/compose\.yaml exec buyer (gpumesh job submit --wait .*)$/m.exec(readme)?.[1]
    assert.ok(example !== undefined, 'docker/README.md has a one-line `docker compose -f docker/compose.yaml exec buyer gpumesh job submit --wait …`')
    const job = await buyer.spawn(['sh', '-c', example]).result()
    assert.equal(job.code, 0, `${job.stdout}\n${job.stderr}`)
    assert.match(job.stdout, /^job \S+: settled: paid /m)
    assert.match(job.stdout, /result\.txt/)

    // `docker compose stop`: SIGTERM, and each ends cleanly
    for (const p of [...procs, bootstrap]) assert.equal(await p.stop(), 0, `${p.name}: ${p.stderr.slice(-1000)}`)
  })

  it('docker-compose config -q accepts docker/compose.yaml (Debian\'s docker-compose 1.29)', async function () {
    const result = await new Promise<{ code: number | null, out: string }>((resolve) => {
      execFile('docker-compose', ['-f', join(REPO, 'docker', 'compose.yaml'), 'config', '-q'], { timeout: 60_000 }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null
        resolve({ code: (error as NodeJS.ErrnoException | null)?.code === 'ENOENT' ? -1 : code, out: stdout + stderr })
      })
    })
    if (result.code === -1) {
      console.log('      skipped: docker-compose is not installed (apt-get install -y --no-install-recommends docker-compose)')
      return this.skip()
    }
    assert.equal(result.code, 0, result.out)
  })
})
