import assert from 'node:assert/strict'
import { PeerScore, createPeerScoreParams, createPeerScoreThresholds, validatePeerScoreParams, validatePeerScoreThresholds } from '@libp2p/gossipsub/score'
import type { ComponentLogger, Logger } from '@libp2p/interface'
import { GOSSIP_SCORE_THRESHOLDS, GOSSIP_TOPIC_SCORE, decayFor, gossipScoreParams } from '../../../node/peer-score.js'
import { EVIDENCE_TOPIC, marketTopic, providerTopics } from '../../../protocol/index.js'

const TOPICS = [...providerTopics('eu-west'), EVIDENCE_TOPIC]
const PEER = '12D3KooWattacker'
/** The scorer only writes debug lines. */
const quiet: Logger = Object.assign(() => {}, { error: () => {}, trace: () => {}, enabled: false, newScope: () => quiet })
const logger: ComponentLogger = { forComponent: () => quiet }

/** gossipsub's own scorer with gpumesh's parameters: the score of a peer after `invalid` rejected messages on `topic`. */
function scoreAfter (invalid: number, topic = marketTopic(), options = {}): number {
  const score = new PeerScore(createPeerScoreParams(gossipScoreParams(TOPICS, options)), null, logger, { scoreCacheValidityMs: 0 })
  score.addPeer(PEER)
  for (let i = 0; i < invalid; i++) score.rejectInvalidMessage(PEER, topic)
  return score.score(PEER)
}

describe('gossipsub peer-score parameters (node/peer-score.ts)', () => {
  it('pass gossipsub\'s own validation, for every joined topic', () => {
    const params = createPeerScoreParams(gossipScoreParams(TOPICS))
    validatePeerScoreParams(params)
    validatePeerScoreThresholds(createPeerScoreThresholds(GOSSIP_SCORE_THRESHOLDS))
    assert.deepEqual(Object.keys(params.topics).sort(), [EVIDENCE_TOPIC, marketTopic('eu'), marketTopic()].sort())
  })

  it('one rejected message is not below the gossip threshold, two are; two are above the graylist threshold, three below', () => {
    const t = GOSSIP_SCORE_THRESHOLDS
    assert.equal(scoreAfter(0), 0)
    assert.equal(scoreAfter(1), -10)
    assert.ok(!(scoreAfter(1) < t.gossipThreshold))
    assert.equal(scoreAfter(2), -40)
    assert.ok(scoreAfter(2) < t.gossipThreshold && scoreAfter(2) >= t.graylistThreshold)
    assert.equal(scoreAfter(3), -90)
    assert.ok(scoreAfter(3) < t.graylistThreshold)
    // the evidence topic costs the same
    assert.equal(scoreAfter(3, EVIDENCE_TOPIC), -90)
  })

  it('an unscored topic costs nothing (only joined topics are scored)', () => {
    assert.equal(scoreAfter(5, marketTopic('us')), 0)
  })

  it('the IP-colocation penalty is on unless allowColocation is set', () => {
    assert.equal(gossipScoreParams(TOPICS).IPColocationFactorWeight, -5)
    assert.equal(gossipScoreParams(TOPICS, { allowColocation: true }).IPColocationFactorWeight, 0)
    assert.equal(gossipScoreParams(TOPICS).IPColocationFactorThreshold, 10)
  })

  it('decayFor halves a counter in its half-life, and refuses one not longer than the interval', () => {
    assert.ok(Math.abs(Math.pow(decayFor(60_000), 60) - 0.5) < 1e-12)
    assert.equal(GOSSIP_TOPIC_SCORE.invalidMessageDeliveriesDecay, decayFor(60_000))
    assert.throws(() => decayFor(1_000), RangeError)
  })
})
