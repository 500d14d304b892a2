import assert from 'node:assert/strict'
import { SILENT_LIBP2P_LOGGER, libp2pLogger } from '../../../node/libp2p-logger.js'

describe('libp2p component logger (node/libp2p-logger.ts)', () => {
  it('is the shared silent logger unless DEBUG names something; then libp2p keeps its own', () => {
    assert.equal(libp2pLogger(undefined), SILENT_LIBP2P_LOGGER)
    assert.equal(libp2pLogger(''), SILENT_LIBP2P_LOGGER)
    assert.equal(libp2pLogger('  '), SILENT_LIBP2P_LOGGER)
    assert.equal(libp2pLogger('libp2p:*'), undefined)
    assert.equal(libp2pLogger('gpumesh'), undefined)
  })

  it('hands every component and scope one logger that is off and does nothing', () => {
    const a = SILENT_LIBP2P_LOGGER.forComponent('libp2p:yamux:stream')
    const b = SILENT_LIBP2P_LOGGER.forComponent('libp2p:tcp')
    assert.equal(a, b)
    assert.equal(a.enabled, false)
    assert.equal(a.newScope('outbound'), a)
    assert.equal(a('x %s', 1), undefined)
    assert.equal(a.error(new Error('x')), undefined)
    assert.equal(a.trace('x'), undefined)
  })
})
