import assert from 'node:assert/strict'
import { sha256 } from '../../../../crypto/index.js'
import { NOW, WINDOW, peer } from '../../../helpers/requester-agent-driver.js'
import { addressesOf, deliverReplica, replicaDriver, verifiedJob } from '../../../helpers/replica-driver.js'
import { jobIdOf } from '../../../../protocol/index.js'

/** The spec's draw (protocol/README.md §5.9), computed here: first 4 bytes, big-endian, of sha2-256(domain ‖ seed ‖ binary job id). */
function specDraw (job: Uint8Array, seed: Uint8Array): number {
  const domain = new TextEncoder().encode('gpumesh/spotcheck/1\n')
  const digest = sha256(new Uint8Array([...domain, ...seed, ...job]))
  return new DataView(digest.buffer, digest.byteOffset, 4).getUint32(0)
}

/** The smallest perMille that draws the job: the draw is re-run ⇔ draw × 1000 < perMille × 2³². */
function threshold (draw: number): number {
  return Math.floor(draw * 1000 / 2 ** 32) + 1
}

describe('the requester agent: spotcheck perMille (protocol/market/replica-runs.ts)', () => {
  const PER_MILLE = 500
  const job = verifiedJob({ mode: 'spotcheck', perMille: PER_MILLE })
  /** A seed whose draw of the job has this threshold (found by counting through seeds). */
  function seedAt (wanted: number): Uint8Array {
    for (let n = 0; n < 1 << 20; n++) {
      const seed = new Uint8Array(32).fill(0x5c)
      new DataView(seed.buffer).setUint32(0, n)
      if (threshold(specDraw(jobIdOf(job).bytes, seed)) === wanted) return seed
    }
    throw new Error('no seed found')
  }
  // on: the draw is just under perMille × 2³² / 1000; off: just at or over it
  const on = seedAt(PER_MILLE)
  const off = seedAt(PER_MILLE + 1)

  it('drawn: after the single run is verified, a check on another provider (a new attempt); agreement pays both', () => {
    const d = replicaDriver(job, { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: on })
    d.submit()
    d.bid(1, 1_000_000)
    d.bid(2, 1_100_000)
    d.runTo(NOW + WINDOW)
    assert.deepEqual(d.of('send-award').map((a) => a.provider), [peer(1)])
    deliverReplica(d, 1, 'same')
    assert.equal(d.of('pay').length, 0, 'the first run waits for the check')
    const [round] = d.of('publish-round')
    assert.deepEqual([round?.reason, round?.attempt, round?.excluded], ['replica', 2, [peer(1)]])
    d.bid(1, 900_000)
    d.bid(2, 1_100_000)
    d.runTo(d.now + WINDOW)
    assert.deepEqual(d.of('send-award').map((a) => [a.provider, a.attempt]), [[peer(1), 1], [peer(2), 2]])
    deliverReplica(d, 2, 'same', 2)
    assert.deepEqual(d.of('pay').filter((p) => p.final).map((p) => p.payee).sort(), [peer(1), peer(2)].sort())
    assert.deepEqual(d.state?.replication?.replicas.map((r) => r.role), ['original', 'check'])
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
  })

  it('drawn, and the check disagrees: the one-on-one split goes on to a tie-break', () => {
    const d = replicaDriver(job, { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: on })
    d.submit()
    d.bid(1, 1_000_000)
    d.runTo(NOW + WINDOW)
    deliverReplica(d, 1, 'x')
    d.bid(2, 1_100_000)
    d.runTo(d.now + WINDOW)
    deliverReplica(d, 2, 'y', 2)
    assert.equal(d.of('pay').length, 0)
    assert.equal(d.of('publish-round').length, 2)
    assert.deepEqual(d.state?.replication?.replicas.map((r) => r.role), ['original', 'check', 'tie-break'])
  })

  it('drawn, but no provider bids for the check (the round re-opened once): the first run is paid, unverified', () => {
    const d = replicaDriver(job, { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: on })
    d.submit()
    d.bid(1, 1_000_000)
    d.runTo(NOW + WINDOW)
    deliverReplica(d, 1, 'x')
    d.runTo(d.now + 3 * WINDOW)
    assert.deepEqual(d.of('pay').filter((p) => p.final).map((p) => p.payee), [peer(1)])
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
    assert.match(d.state?.state.reason ?? '', /^unverified/)
  })

  it('not drawn (a seed whose draw is just at perMille × 2³² / 1000), or no seed: the single run is paid at once', () => {
    const d = replicaDriver(job, { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: off })
    d.submit()
    d.bid(1, 1_000_000)
    d.runTo(NOW + WINDOW)
    deliverReplica(d, 1, 'x')
    assert.equal(d.of('publish-round').length, 0)
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
    const unseeded = replicaDriver(job, { addresses: addressesOf(), auditUnproven: false })
    unseeded.submit()
    unseeded.bid(1, 1_000_000)
    unseeded.runTo(NOW + WINDOW)
    deliverReplica(unseeded, 1, 'x')
    assert.deepEqual(unseeded.of('finished').map((f) => f.status), ['settled'])
    assert.equal(unseeded.state?.replication, undefined)
  })
})
