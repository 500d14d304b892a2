import assert from 'node:assert/strict'
import { ManifestError } from '../../../../node/market/manifest.js'
import { outputFetchFailure } from '../../../../node/market/requester-outputs.js'
import { BlobFetchError, type BlobFetchErrorCode } from '../../../../node/services/blob.js'

/** Which failed output fetches the requester tries again (by error code, never by message). */
describe('outputFetchFailure', () => {
  const blob = (code: BlobFetchErrorCode): BlobFetchError => new BlobFetchError(code, 'peer', 'cid', 'hash mismatch words in a message change nothing')

  it('the provider not reached, gone, closed early, slow or not serving yet: unreachable (tried again)', () => {
    for (const code of ['UNREACHABLE', 'CLOSED_EARLY', 'TIMEOUT', 'UNAVAILABLE'] as const) assert.equal(outputFetchFailure(blob(code)), 'unreachable', code)
  })

  it('wrong bytes, a bad manifest or anything else: mismatch (the attempt fails)', () => {
    for (const code of ['HASH_MISMATCH', 'BAD_RESPONSE', 'TOO_LARGE', 'UNSUPPORTED_CID', 'ABORTED'] as const) assert.equal(outputFetchFailure(blob(code)), 'mismatch', code)
    assert.equal(outputFetchFailure(new ManifestError('not canonical')), 'mismatch')
    assert.equal(outputFetchFailure(new Error('the peer went away')), 'mismatch')
  })
})
