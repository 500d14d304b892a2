import assert from 'node:assert/strict'
import { ReputationStore, type Evidence } from '../../../../protocol/trust/reputation.js'
import { InvalidReputationSnapshotError } from '../../../../protocol/trust/reputation-snapshot.js'
import { REPUTATION_HALF_LIFE_MS } from '../../../../protocol/trust/reputation-params.js'
import { Reputation } from '../../../../protocol/market/reputation.js'

const ME = 'me'
const T0 = 1_767_225_600_000

/** A tangle of own outcomes, trusted and untrusted reporters, at spread-out times, with a cap that evicts. */
function busy (): ReputationStore {
  const s = new ReputationStore(ME, { maxReportersPerSubject: 4 })
  let x = 7
  const next = (n: number): number => { x = (x * 1_103_515_245 + 12_345) % 2 ** 31; return x % n }
  for (let i = 0; i < 2000; i++) {
    const signer = next(5) === 0 ? ME : `peer-${next(12)}`
    const subject = `peer-${next(12)}`
    const at = T0 + next(60) * 3_600_000
    const e: Evidence = next(3) === 0 ? { signer, subject, kind: 'failure', at } : { signer, subject, kind: 'settlement', at }
    s.add(e)
    if (i % 100 === 0) s.score(subject, at)
  }
  return s
}

function scores (s: ReputationStore, now: number): number[] {
  return Array.from({ length: 12 }, (_, i) => s.score(`peer-${i}`, now))
}

describe('reputation snapshot (protocol/trust/reputation-snapshot.ts)', () => {
  for (const [name, copy] of [['JSON', (v: unknown) => JSON.parse(JSON.stringify(v))], ['structuredClone', structuredClone]] as const) {
    it(`a round trip through ${name} gives identical scores, trust and explanations`, () => {
      const s = busy()
      const restored = new ReputationStore(ME, { maxReportersPerSubject: 4 })
      restored.load(copy(s.snapshot()))
      for (const now of [T0, T0 + 100 * 3_600_000, T0 + 3 * REPUTATION_HALF_LIFE_MS]) {
        assert.deepEqual(scores(restored, now), scores(s, now))
        assert.deepEqual(restored.explain('peer-3', now), s.explain('peer-3', now))
        assert.equal(restored.trustIn('peer-5', now), s.trustIn('peer-5', now))
      }
      assert.deepEqual(restored.snapshot(), s.snapshot())
      assert.equal(restored.clock, s.clock)
      assert.equal(restored.dropped, s.dropped)
      // and both go on alike
      const e: Evidence = { signer: ME, subject: 'peer-3', kind: 'receipt', at: s.clock + 1 }
      s.add(e)
      restored.add(e)
      assert.deepEqual(scores(restored, s.clock), scores(s, s.clock))
    })
  }

  it('the market\'s Reputation keeps its history and reliability across a snapshot', () => {
    const r = new Reputation(undefined, ME)
    r.record('p', true, T0)
    r.record('p', false, T0)
    const again = new Reputation(undefined, ME)
    again.load(JSON.parse(JSON.stringify(r.snapshot())))
    assert.deepEqual(again.history('p'), { ok: 1, failed: 1 })
    assert.equal(again.reliability('p', T0), r.reliability('p', T0))
  })

  it('refuses a bad snapshot, or another node\'s, with a typed error and keeps what it had', () => {
    const s = busy()
    const good = s.snapshot()
    const before = scores(s, T0)
    const bad: unknown[] = [
      null, 'x', { ...good, v: 2 }, { ...good, self: 'someone-else' }, { ...good, clock: -1 }, { ...good, pairs: {} },
      { ...good, pairs: [['a', 'a', 1, 0, 0, 1, 0]] }, { ...good, pairs: [['a', 'b', -1, 0, 0, 1, 0]] },
      { ...good, pairs: [['a', 'b', 1, 0, 0, 1.5, 0]] }, { ...good, pairs: [['a', 'b', 1, 0, 0]] }
    ]
    for (const b of bad) assert.throws(() => s.load(b), InvalidReputationSnapshotError, JSON.stringify(b)?.slice(0, 80))
    assert.deepEqual(scores(s, T0), before)
  })
})
