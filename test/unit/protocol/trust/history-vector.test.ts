/**
 * The examples of protocol/README.md §7.11, byte for byte: a request for one subject's attestations,
 * a request for convictions past a cursor, the answer to the first (the §7.10 attestation, with a
 * cursor) and a rate-limit refusal. Any change to these bytes is a wire change.
 */
import assert from 'node:assert/strict'
import { fromString as fromHex } from 'uint8arrays/from-string'
import { toString as toHex } from 'uint8arrays/to-string'
import { openMessage } from '../../../../protocol/index.js'
import {
  decodeHistoryRequest, decodeHistoryResponse, encodeHistoryRequest, encodeHistoryResponse, historyKey, servedRefusal, type HistoryRequest
} from '../../../../protocol/trust/history.js'

const SUBJECT = '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7'
const ATTESTATION_CID = 'bafyreiaqcpxy5x5jzii2ttc2xglsyfctshvjucyuexs2sa5k32uoar7upa'

const REQUEST_HEX =
  'a56171677375626a656374617601656b696e6473816b6174746573746174696f6e656c696d697401677375626a656374' +
  '7834313244334b6f6f5752617750627850745031655a614a70756d476e7957583244635579643352516e796472336541' +
  '746f34417a37'
const CONVICTED_HEX =
  'a4617169636f6e7669637465646176016561667465727834313244334b6f6f5752617750627850745031655a614a70756d' +
  '476e7957583244635579643352516e796472336541746f34417a37656c696d69741820'
const RESPONSE_HEX =
  'a3617601646e657874783d332f626166797265696171637078793578356a7a6969327474633278676c73796663747368' +
  '766a75637975657873327361356b3332756f61723775706169656e76656c6f706573815901c70a2408011220ea4a6c63' +
  'e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c12048acefd011ad602a7617601646770757381a5' +
  '646e616d65754e5649444941204831303020383047422048424d33647575696478284750552d35623065316133632d37' +
  '6432662d346538612d396336312d30663365326434623661373866647269766572693536352e35372e3031677672616d' +
  '4d69421a00013e976a70726f76656e616e636568646574656374656464686f7374a268637075436f7265731820696d65' +
  '6d6f72794d69421a000400006869737375656441741b0000019b76daa8006870726f76696465727834313244334b6f6f' +
  '5752617750627850745031655a614a70756d476e7957583244635579643352516e796472336541746f34417a37696265' +
  '6e63686d61726ba4646e616d65746672656976616c64732d6d61746d756c2d63707564756e6974696d61632d7065722d' +
  '736576616c75651a07270e006a6475726174696f6e4d7311696578706972657341741b0000019c115970002a407e417b' +
  '1f06539f0c2849a1bd9956e605f433c4bf225fedd5e0f5d97db3150ddefe904acd0ce367fdbba8a2fe0d64acd2136674' +
  '7235a64647f3eeddc91ccd170a'
const REFUSED_HEX = 'a361760167726566757365646c524154455f4c494d4954454469656e76656c6f70657380'

describe('history vectors (protocol/README.md §7.11)', () => {
  const request: HistoryRequest = { v: 1, q: 'subject', subject: SUBJECT, kinds: ['attestation'], limit: 1 }

  it('requests', () => {
    assert.equal(toHex(encodeHistoryRequest(request), 'base16'), REQUEST_HEX)
    assert.deepEqual(decodeHistoryRequest(fromHex(REQUEST_HEX, 'base16')), request)
    const convicted: HistoryRequest = { v: 1, q: 'convicted', limit: 32, after: SUBJECT }
    assert.equal(toHex(encodeHistoryRequest(convicted), 'base16'), CONVICTED_HEX)
    assert.deepEqual(decodeHistoryRequest(fromHex(CONVICTED_HEX, 'base16')), convicted)
  })

  it('the answer: the subject\'s attestation and the cursor past it', () => {
    const response = decodeHistoryResponse(fromHex(RESPONSE_HEX, 'base16'), request)
    assert.equal(response.next, historyKey('attestation', ATTESTATION_CID))
    assert.equal(response.next, `3/${ATTESTATION_CID}`)
    const envelope = response.envelopes[0] as Uint8Array
    const opened = openMessage(envelope, 'attestation', { now: 1_767_225_600_000 })
    assert.equal(opened.cid.toString(), ATTESTATION_CID)
    assert.equal(opened.signer, SUBJECT)
    assert.equal(servedRefusal(request, opened.kind, opened.payload as unknown as Record<string, unknown>, opened.signer), undefined)
    assert.equal(toHex(encodeHistoryResponse(response), 'base16'), RESPONSE_HEX)
  })

  it('a refusal', () => {
    assert.equal(toHex(encodeHistoryResponse({ v: 1, envelopes: [], refused: 'RATE_LIMITED' }), 'base16'), REFUSED_HEX)
  })
})
