import assert from 'node:assert/strict'
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Daemon } from '../../node/daemon.js'
import type { ProviderJobs } from '../../node/market/provider-jobs.js'
import { startNetwork, untilJob, waitForAnnouncements, type TestNetwork } from '../helpers/network.js'
import { TEST_GPU } from '../helpers/market-network.js'

/**
 * A provider that stops while it holds a job leaves nothing running and writes nothing afterwards:
 * when `stop()` resolves, the job's process group is gone and its record in `run/process-jobs/`
 * removed, and a start that was queued when it stopped never happens, so the data dir can be removed
 * at once. (Before, stop() waited for the records only: a run still ending, or one started after the
 * stop, wrote under a caller's `rm -r` — ENOTEMPTY in CI — and was left running.)
 */
describe('a provider stopped mid-job (in-process)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let sellers: Daemon[]
  let requester: Daemon

  before(async () => {
    net = await startNetwork([
      { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1 },
      { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1 },
      { sell: false }
    ])
    sellers = net.nodes.slice(0, 2)
    requester = net.nodes[2] as Daemon
    await waitForAnnouncements(sellers, 60_000)
  })
  after(async () => { await net?.stop() })

  const recordsDir = (daemon: Daemon): string => join(daemon.options.dataDir, 'run', 'process-jobs')
  /** The process-group records of a node's running jobs. */
  async function records (daemon: Daemon): Promise<string[]> {
    return (await readdir(recordsDir(daemon)).catch(() => [])).filter((n) => n.endsWith('.json'))
  }
  async function submitSleep (): Promise<string> {
    const { job } = await requester.market!.submit({ command: ['/bin/sh', '-c', 'sleep 60'], maxRuntimeSec: 90, maxPrice: 3, bidWindowMs: 500 })
    return job
  }

  it('ends the run before stop() resolves: no process, no record, and the data dir removes cleanly', async () => {
    const job = await submitSleep()
    const view = await untilJob(requester, job, (v) => v.status === 'running' && v.events.some((e) => e.type === 'running'))
    const winner = sellers.find((d) => d.identity.peerId === view.award?.provider)
    assert.ok(winner !== undefined)
    sellers = sellers.filter((d) => d !== winner)
    let names: string[] = []
    for (let i = 0; i < 100 && names.length === 0; i++) {
      names = await records(winner)
      if (names.length === 0) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.equal(names.length, 1, 'the running job\'s process group is recorded')
    const { pid } = JSON.parse(await readFile(join(recordsDir(winner), names[0] as string), 'utf8')) as { pid: number }

    await winner.stop()
    assert.deepEqual(await records(winner), [], 'the record is removed by the time stop() resolves')
    assert.throws(() => process.kill(-pid, 0), { code: 'ESRCH' }, 'the job\'s process group has ended')
    await rm(winner.options.dataDir, { recursive: true })
  })

  it('starts no job after stop(), even one whose start was queued behind an earlier effect when it stopped', async () => {
    const [seller] = sellers as [Daemon]
    // stop the seller the moment its agent says "start": the start is queued behind the award's answer
    const provider = seller.market!.provider as unknown as { jobs: ProviderJobs }
    const onEffect = provider.jobs.onEffect.bind(provider.jobs)
    let stopping: Promise<void> | undefined
    provider.jobs.onEffect = (effect) => {
      onEffect(effect)
      if (effect.type === 'start-job' && stopping === undefined) stopping = seller.stop()
    }
    const job = await submitSleep()
    await untilJob(requester, job, (v) => v.award !== undefined)
    for (let i = 0; i < 200 && stopping === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.ok(stopping !== undefined, 'the start-job effect came')
    await stopping
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.deepEqual(await records(seller), [], 'no job process was started after stop()')
  })
})
