/**
 * The wrong-output fraud-proof example of protocol/README.md §5.9, byte for byte: the provider of the
 * conflicting-receipts example (seed 32 × 0x11) signed one receipt naming the output of "7" for the
 * wasm job of test/helpers/trust-fixtures.ts; the reporter (seed 32 × 09) re-executed it, got "6", and
 * signed the proof with the job's two input blobs. Any change to these bytes is a wire change.
 */
import assert from 'node:assert/strict'
import { fromString } from 'uint8arrays/from-string'
import { toString as toHex16 } from 'uint8arrays/to-string'
import { Identity } from '../../../../crypto/index.js'
import { RejectReason, sealMessage } from '../../../../protocol/index.js'
import { buildWrongOutputProof, checkWrongOutput, settleWrongOutput } from '../../../../protocol/trust/wrong-output.js'
import { HOUR, T, openedJob, outputs, provider, receipt } from '../../../helpers/trust-fixtures.js'

const PAYLOAD_CID = 'bafyreie7obtyerb5w5ssjwaxgou6jl7n4g45lxsprmir2bmyhnatnc74ge'
const ENVELOPE_HEX =
  '0a2408011220fd1724385aa0c75b64fb78cd602fa1d991fdebf76b13c58ed702eac835e9f61812048fcefd011aee0aa9' +
  '617601636a6f62d82a58250001711220ef36191ee0ce31be502b274e0dbbc430c91a74bdad50b6da24a787dd1c133c97' +
  '646b696e646c77726f6e672d6f757470757466696e707574738248286d6f64756c65294631203220330a677265717565' +
  '73745902890a2408011220ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c120482cefd' +
  '011a9804aa61760163736c61a364746965726673696c766572686d617850726963651a001e8480706d61785374617274' +
  '44656c6179536563190258656e6f6e636550aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa6761756374696f6ea26b62696457' +
  '696e646f774d731907d06b7061796d656e7452756c656b66697273742d70726963656869737375656441741b0000019b' +
  '76daa80068776f726b6c6f6164a763656e76a06461726776826873756d2e7761736d68646174612e74787466696e7075' +
  '747382a363636964d82a582500015512201885772b94ca41b360d9bd07535547f4c8ef16cbe7e49d2c8e9780247e26c4' +
  'de64706174686873756d2e7761736d6473697a6508a363636964d82a582500015512201def07dbe06eeb097aafec8a40' +
  '329937cd20c93a83634b8221ea2b41a894310c647061746868646174612e7478746473697a6506676e6574776f726bf4' +
  '676f757470757473816773756d2e747874686578656375746f72647761736d6d6d617852756e74696d65536563183c69' +
  '6578706972657341741b0000019b7711968069706c6163656d656e74a267726567696f6e7380697265736964656e6379' +
  '66707265666572697265736f7572636573a6646770757300666d6f64656c7380676469736b4d6942184068637075436f' +
  '72657301696d656d6f72794d6942190100696d696e5672616d4742006c766572696669636174696f6ea2616b03646d6f' +
  '6465697265706c69636174652a409f3742de373db4fc517e0964aefdbb7bd09041d612be97aba2367bb9b8e3ac4b5581' +
  '5f20d1c73a492765588238aaba9904d61e39f14fb84e5b00847623db140d677375626a6563747834313244334b6f6f57' +
  '507154326e4d44536958555378354437666173617868784b696756686371666b4b71724c67684371396a787a68697373' +
  '75656441741b0000019b76ddb5406872656365697074738159020f0a2408011220d04ab232742bb4ab3a1368bd4615e4' +
  'e6d0224ab71a016baf8520a332c9778737120487cefd011a9e03ae617601636a6f62d82a58250001711220ef36191ee0' +
  'ce31be502b274e0dbbc430c91a74bdad50b6da24a787dd1c133c97646770757380656177617264d82a58250001711220' +
  'b33479132e0693093194f70f73e8aa55254aadf2bd525bc907dc87fc595f444c66696e7075747382d82a582500015512' +
  '201885772b94ca41b360d9bd07535547f4c8ef16cbe7e49d2c8e9780247e26c4ded82a582500015512201def07dbe06e' +
  'eb097aafec8a40329937cd20c93a83634b8221ea2b41a894310c67656e64656441741b0000019b76db9648676f757470' +
  '757473d82a582500017112206e1c02dfe4aef4135f015ee2c397815d92b4967ab3c66c29a51f304db076b83368657865' +
  '6375746f72647761736d6865786974436f6465006869737375656441741b0000019b76dc7cc069657870697265734174' +
  '1b0000019c11597000697265717565737465727834313244334b6f6f5752617750627850745031655a614a70756d476e' +
  '7957583244635579643352516e796472336541746f34417a37697374617274656441741b0000019b76db92606a677075' +
  '5365636f6e6473002a403cab4002d4af27ddb767834f06ab5796baf769d1820f6990b50b77cc3df9494657d59fa98ff4' +
  'b66e31cc82653b1e4f602561b7f55b365b310fddafa47919a30a696578706972657341741b0000019c115c7d402a40c9' +
  'ed4529cd37e0ac7d16d1d015a8e0386ea488e233e94b191e16f42ab29f380ac6341492e878d5e9ef15e6252c89199b8b' +
  '31e4374df1c8d5552d30aec19c6501'

describe('protocol/README.md: the wrong-output fraud-proof example', () => {
  const job = openedJob()
  const subject = provider(1)
  const reporter = new Identity(new Uint8Array(32).fill(9))
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s)
  const claimed = receipt(subject, job, { outputs: outputs('7') })
  const issuedAt = T + 200_000
  const sealed = sealMessage(reporter, 'fraud-proof', { v: 1, issuedAt, expiresAt: issuedAt + 30 * 24 * HOUR, ...buildWrongOutputProof(job, claimed, outputs('6'), [enc('(module)'), enc('1 2 3\n')]) })

  it('reproduces the payload CID and the envelope bytes', () => {
    assert.equal(sealed.cid.toString(), PAYLOAD_CID)
    assert.equal(sealed.bytes.byteLength, 1503)
    assert.equal(toHex16(sealed.bytes, 'base16'), ENVELOPE_HEX)
  })

  it('checks from the hex alone, convicts on another output, and a flipped bit in it is refused', () => {
    const bytes = fromString(ENVELOPE_HEX, 'base16')
    const pending = checkWrongOutput(bytes, { now: issuedAt + 1000 })
    assert.equal(pending.subject, subject.peerId)
    assert.equal(settleWrongOutput(pending, outputs('6')).subject, subject.peerId)
    assert.throws(() => settleWrongOutput(pending, outputs('7')), { reason: RejectReason.REEXECUTION_AGREES })
    const flipped = Uint8Array.from(bytes)
    flipped[700] = (flipped[700] as number) ^ 1
    assert.throws(() => checkWrongOutput(flipped, { now: issuedAt + 1000 }), { reason: RejectReason.BAD_SIGNATURE })
  })
})
