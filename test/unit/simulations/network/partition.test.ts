import assert from 'node:assert/strict'
import { InvalidPartitionError, type RegionPartition, partitioned, validatePartition } from '../../../../simulations/network/partition.js'

const P: RegionPartition = { sideA: ['eu'], sideB: ['us', 'ap-east'], fromMs: 1000, untilMs: 2000 }

describe('simulations/network partition', () => {
  it('drops exactly inside [t1, t2): at t1 dropped, just before t1 and at t2 delivered', () => {
    const at = (t: number): boolean => partitioned(P, 'eu-west', 'us-east', t)
    assert.deepEqual([0, 999.999, 1000, 1500, 1999.999, 2000, 5000].map(at), [false, false, true, true, true, false, false])
  })

  it('cuts both directions between the sides, sub-regions included, and nothing else', () => {
    assert.equal(partitioned(P, 'us-east', 'eu-north', 1000), true)
    assert.equal(partitioned(P, 'eu', 'ap-east', 1000), true)
    assert.equal(partitioned(P, 'ap-east-1', 'eu-central', 1000), true)
    assert.equal(partitioned(P, 'eu-west', 'eu-north', 1000), false, 'inside side A')
    assert.equal(partitioned(P, 'us-east', 'ap-east', 1000), false, 'inside side B')
    assert.equal(partitioned(P, 'eu-west', 'ap-south', 1000), false, 'ap-south is on neither side')
    assert.equal(partitioned(P, 'europe', 'us', 1000), false, '`europe` is not inside `eu`')
  })

  it('refuses a partition it cannot apply', () => {
    const bad: Array<[RegionPartition, string]> = [
      [{ ...P, sideA: [] }, 'EMPTY_SIDE'],
      [{ ...P, sideB: ['eu-west'] }, 'OVERLAP'],
      [{ ...P, sideA: ['us-east'] }, 'OVERLAP'],
      [{ ...P, untilMs: 1000 }, 'WINDOW'],
      [{ ...P, fromMs: Number.NaN }, 'WINDOW']
    ]
    for (const [p, code] of bad) assert.throws(() => { validatePartition(p) }, (e: unknown) => e instanceof InvalidPartitionError && e.code === code, code)
    validatePartition({ ...P, untilMs: 1001 })
    validatePartition({ ...P, untilMs: Infinity })
  })
})
