import assert from 'node:assert/strict'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { multiaddr } from '@multiformats/multiaddr'
import { Key } from 'interface-datastore'
import { base32 } from 'multiformats/bases/base32'
import { base58btc } from 'multiformats/bases/base58'
import { base64 } from 'multiformats/bases/base64'
import { cidOfRaw } from '../../../crypto/index.js'
import { MAX_LOG_MESSAGE_CHARS, formatLibp2pArgs } from '../../../node/libp2p-format.js'

const fmt = (formatter: unknown, ...args: unknown[]): string => formatLibp2pArgs(formatter, args).msg

describe('libp2p log arguments (node/libp2p-format.ts)', () => {
  it('renders libp2p\'s own conversions: %p peer id, %a multiaddr, %c CID, %k key, %b %t %m bytes', async () => {
    const peer = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
    const addr = multiaddr('/ip4/127.0.0.1/tcp/4001')
    const cid = cidOfRaw(new TextEncoder().encode('x'))
    const bytes = Uint8Array.from([0, 1, 2, 250])
    assert.equal(fmt('dial %p on %a', peer, addr), `dial ${peer.toString()} on /ip4/127.0.0.1/tcp/4001`)
    assert.equal(fmt('provide %c under %k', cid, new Key('/providers/abc')), `provide ${cid.toString()} under /providers/abc`)
    assert.equal(fmt('%b %t %m', bytes, bytes, bytes), `${base58btc.baseEncode(bytes)} ${base32.baseEncode(bytes)} ${base64.baseEncode(bytes)}`)
    assert.equal(fmt('peer %p', undefined), 'peer undefined')
  })

  it('renders Node\'s: %s (peer ids and multiaddrs by toString, bytes by size), %d %i %f, %j, %o %O, %%', async () => {
    const peer = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
    assert.equal(fmt('%s/%s/%s', 'a', peer, new Uint8Array(7)), `a/${peer.toString()}/<7 bytes>`)
    assert.equal(fmt('%d %d %i %f', '42', 3n, '7.9', '2.5x'), '42 3n 7 2.5')
    assert.equal(fmt('%j', { a: 1, b: [2], n: 5n }), '{"a":1,"b":[2],"n":"5"}')
    assert.equal(fmt('%o', { a: { b: 1 } }), '{ a: { b: 1 } }')
    assert.equal(fmt('%O', [1, 2]), '[ 1, 2 ]')
    assert.equal(fmt('100%% done %s', 'now'), '100% done now')
  })

  it('renders %e and an Error by name and message (an AggregateError with its errors), and returns the first Error apart', () => {
    const cause = new Error('connection reset')
    cause.name = 'StreamResetError'
    const { msg, error } = formatLibp2pArgs('dial failed - %e', [cause])
    assert.equal(msg, 'dial failed - StreamResetError: connection reset')
    assert.equal(error, cause)
    const all = new AggregateError([new Error('a'), new TypeError('b')], 'all dials failed')
    assert.equal(fmt('%e', all), 'AggregateError: all dials failed (Error: a; TypeError: b)')
    assert.equal(formatLibp2pArgs('%s', ['x']).error, undefined)
  })

  it('keeps directives without an argument and unknown ones; appends arguments left over', () => {
    assert.equal(fmt('a %s b %s', 'x'), 'a x b %s')
    assert.equal(fmt('%x %s', 'y'), '%x y')
    assert.equal(fmt('closing', 'conn', 3, { a: 1 }), 'closing conn 3 { a: 1 }')
  })

  it('shows a formatter that is not a string as the first argument, its % signs literal', () => {
    const err = new RangeError('100% wrong %s')
    const { msg, error } = formatLibp2pArgs(err, ['extra'])
    assert.equal(msg, 'RangeError: 100% wrong %s extra')
    assert.equal(error, err)
    assert.equal(fmt({ a: 1 }), '{ a: 1 }')
    assert.equal(fmt(undefined), 'undefined')
  })

  it('writes one line, capped, and never throws on what a peer sent', () => {
    assert.equal(fmt('remote said %s', 'hi\nFAKE 00:00:00.000 ERROR gpumesh:node forged\r\nend'), 'remote said hi\\nFAKE 00:00:00.000 ERROR gpumesh:node forged\\nend')
    const long = fmt('%s', 'x'.repeat(MAX_LOG_MESSAGE_CHARS * 2))
    assert.equal(long.length, MAX_LOG_MESSAGE_CHARS + 1)
    assert.ok(long.endsWith('…'))
    const hostile = { toString (): string { throw new Error('no') } }
    assert.equal(fmt('%s', hostile), '<unprintable: no>')
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    assert.equal(fmt('%j', cyclic).startsWith('<unprintable: '), true)
    assert.match(fmt('%o', cyclic), /Circular/)
  })
})
