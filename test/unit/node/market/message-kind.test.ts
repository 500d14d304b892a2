import assert from 'node:assert/strict'
import { sealMessage } from '../../../../protocol/index.js'
import { messageKindOf } from '../../../../node/market/message-kind.js'
import { NOW, identity, jobPayload } from '../../../helpers/requester-agent-driver.js'

describe('messageKindOf (the kind label of rejected messages)', () => {
  it('reads the kind from the envelope, even of a message that fails its checks (an expired job request here)', () => {
    const sealed = sealMessage(identity(1), 'job-request', { ...jobPayload(), issuedAt: NOW - 10_000, expiresAt: NOW - 1 })
    assert.equal(messageKindOf(sealed.bytes), 'job-request')
  })

  it('unknown for bytes that are no envelope, and for an oversized message (not decoded twice)', () => {
    assert.equal(messageKindOf(new Uint8Array([1, 2, 3])), 'unknown')
    assert.equal(messageKindOf(new Uint8Array(0)), 'unknown')
    assert.equal(messageKindOf(new Uint8Array(256 * 1024 + 1)), 'unknown')
  })
})
