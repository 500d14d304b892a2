import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { access, mkdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Daemon } from '../../node/daemon.js'
import type { LedgerEntry } from '../../node/market/views.js'
import { startNetwork, untilJob, waitForAnnouncements, type TestNetwork } from '../helpers/network.js'
import { TEST_GPU } from '../helpers/market-network.js'

const run = promisify(execFile)
const LEASE_MS = 3_000
const MARKET = { leaseMs: LEASE_MS }

/** Whether `chattr +i` works here (root, on a file system with the immutable flag): the way to make a disk refuse writes. */
async function immutableWorks (dir: string): Promise<boolean> {
  const probe = join(dir, 'chattr-probe')
  await mkdir(probe, { recursive: true })
  try {
    await run('chattr', ['+i', probe])
    await run('chattr', ['-i', probe])
    return true
  } catch {
    return false
  } finally {
    await rm(probe, { recursive: true, force: true })
  }
}

/**
 * The requester fetched and checked a receipt's outputs but its own disk refuses to store them
 * (protocol/market/output-fetch.ts `local`): it tries again within one lease, then ends the job
 * failed here (`outputs-unsaved`) and pays the receipt; the provider, which delivered, is not
 * blamed (no `output-mismatch`, no re-auction) and settles paid in full. The disk is made to refuse
 * with the immutable flag on the job's directory once its log file exists.
 */
describe('outputs the requester cannot store (in-process, an immutable job dir)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let seller: Daemon
  let requester: Daemon
  let locked: string | undefined

  before(async function () {
    net = await startNetwork([
      { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1, market: MARKET },
      { sell: false, market: MARKET }
    ])
    ;[seller, requester] = net.nodes as [Daemon, Daemon]
    if (!await immutableWorks(requester.options.dataDir)) this.skip()
    await waitForAnnouncements([seller], 60_000)
  })
  after(async () => {
    if (locked !== undefined) await run('chattr', ['-i', locked]).catch(() => {})
    await net?.stop()
  })

  it('tries again within the lease, then fails the job here, pays the receipt and blames nobody', async () => {
    const { job } = await requester.market!.submit({
      command: ['/bin/sh', '-c', 'echo started; sleep 2; echo result > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 60, maxPrice: 3, bidWindowMs: 500
    })
    const dir = join(requester.options.dataDir, 'jobs', job)
    await untilJob(requester, job, (v) => v.status === 'running' && v.events.some((e) => e.type === 'running'))
    for (let i = 0; i < 100; i++) {
      if (await access(join(dir, 'log')).then(() => true, () => false)) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await run('chattr', ['+i', dir])
    locked = dir

    const ended = await untilJob(requester, job, (v) => v.status === 'failed' || v.status === 'settled', 60_000)
    assert.equal(ended.status, 'failed', ended.events.map((e) => e.text).join('\n'))
    assert.match(ended.reason ?? '', /^outputs-unsaved: cannot store the outputs in .*\/outputs: .*(EPERM|not permitted).* \(and still after one lease of tries\)$/)
    assert.equal(ended.events.some((e) => e.type === 'failure'), false, 'no failure recorded against the provider')

    let earned: LedgerEntry | undefined
    for (let i = 0; i < 200 && (earned === undefined || earned.state === 'open'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      earned = (await seller.market!.ledger()).entries.find((e) => e.job === job)
    }
    assert.equal(earned?.state, 'settled', JSON.stringify(earned))
  })
})
