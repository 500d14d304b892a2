import assert from 'node:assert/strict'
import { packageOf, summarize, type CpuProfile } from '../../../bench/profile.js'

describe('bench/profile: where a CPU profile spends its samples', () => {
  it('names the package of a frame: scoped and plain npm packages, Node internals, this project, native', () => {
    assert.equal(packageOf('file:///w/node_modules/@libp2p/kad-dht/dist/src/index.js', 'get'), '@libp2p/kad-dht')
    assert.equal(packageOf('file:///w/node_modules/a/node_modules/mortice/dist/src/mortice.js', 'readLock'), 'mortice')
    assert.equal(packageOf('node:internal/event_target', 'dispatchEvent'), 'node:internal/event_target')
    assert.equal(packageOf('file:///w/dist/node/announcer.js', 'provideOne'), 'gpumesh node/announcer.js')
    assert.equal(packageOf('', '(garbage collector)'), '(garbage collector)')
    assert.equal(packageOf('', ''), '(native)')
  })

  it('sums own time by package and by function, largest first, as shares of all samples', () => {
    const frame = (id: number, functionName: string, url: string, children: number[] = []): CpuProfile['nodes'][number] =>
      ({ id, callFrame: { functionName, url, lineNumber: id }, children })
    const profile: CpuProfile = {
      nodes: [
        frame(1, '(root)', '', [2, 3]),
        frame(2, 'get', 'file:///w/node_modules/@libp2p/peer-store/dist/src/index.js', [4]),
        frame(3, 'provideOne', 'file:///w/dist/node/announcer.js'),
        frame(4, 'readLock', 'file:///w/node_modules/mortice/dist/src/mortice.js')
      ],
      // 5 in readLock, 2 in get itself, 1 in provideOne: a caller's share is its own time, not its callees'
      samples: [4, 4, 4, 4, 4, 2, 2, 3],
      startTime: 0,
      endTime: 8000
    }
    const s = summarize(profile)
    assert.equal(s.samples, 8)
    assert.deepEqual(s.byPackage, [['mortice', 5 / 8], ['@libp2p/peer-store', 2 / 8], ['gpumesh node/announcer.js', 1 / 8]])
    assert.deepEqual(s.bySelf[0], ['readLock mortice/dist/src/mortice.js:5', 5 / 8])
    assert.equal(summarize(profile, 1).bySelf.length, 1)
    assert.deepEqual(summarize({ nodes: [], samples: [], startTime: 0, endTime: 0 }).byPackage, [])
  })
})
