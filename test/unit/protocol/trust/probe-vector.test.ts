/**
 * The examples of protocol/README.md "Attestations and probes", byte for byte: a provider's attestation
 * (key 32 × 0x07), a prober's probe-result flagging it (key 32 × 0x08), the challenge derivation for a
 * fixed nonce and a challenge frame. Any change to these bytes is a wire change.
 */
import assert from 'node:assert/strict'
import { toString as toHex } from 'uint8arrays/to-string'
import { Identity, sha256 } from '../../../../crypto/index.js'
import { openMessage, sealMessage } from '../../../../protocol/index.js'
import { attestationPayload, verifyAttestation } from '../../../../protocol/trust/attestation.js'
import { encodeProbeFrame } from '../../../../protocol/trust/probe-frames.js'
import { probeResultPayload, probeVerdict } from '../../../../protocol/trust/probe-result.js'
import { expectedProbeMs, probeClaim } from '../../../../protocol/trust/probe-throughput.js'
import { deriveMatrix, encodeProduct, multiply } from '../../../../protocol/trust/probe.js'

const NOW = 1_767_225_600_000
const NONCE = new Uint8Array(16).map((_, i) => i + 1)
const provider = new Identity(new Uint8Array(32).fill(7))
const prober = new Identity(new Uint8Array(32).fill(8))

const ATTESTATION_CID = 'bafyreiaqcpxy5x5jzii2ttc2xglsyfctshvjucyuexs2sa5k32uoar7upa'
const ATTESTATION_HEX =
  '0a2408011220ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c12048acefd011ad602a7' +
  '617601646770757381a5646e616d65754e5649444941204831303020383047422048424d33647575696478284750552d' +
  '35623065316133632d376432662d346538612d396336312d30663365326434623661373866647269766572693536352e' +
  '35372e3031677672616d4d69421a00013e976a70726f76656e616e636568646574656374656464686f7374a268637075' +
  '436f7265731820696d656d6f72794d69421a000400006869737375656441741b0000019b76daa8006870726f76696465' +
  '727834313244334b6f6f5752617750627850745031655a614a70756d476e7957583244635579643352516e7964723365' +
  '41746f34417a376962656e63686d61726ba4646e616d65746672656976616c64732d6d61746d756c2d63707564756e69' +
  '74696d61632d7065722d736576616c75651a07270e006a6475726174696f6e4d7311696578706972657341741b000001' +
  '9c115970002a407e417b1f06539f0c2849a1bd9956e605f433c4bf225fedd5e0f5d97db3150ddefe904acd0ce367fdbb' +
  'a8a2fe0d64acd21366747235a64647f3eeddc91ccd170a'

const PROBE_RESULT_CID = 'bafyreidvwa4abodzlgbje4bmsj265p7ptaip47eg3mfovhqqaf2yj5m5py'
const PROBE_RESULT_HEX =
  '0a24080112201398f62c6d1a457c51ba6a4b5f3dbd2f69fca93216218dc8997e416bd17d93ca12048bcefd011a8902ad' +
  '617601626f6bf4646b696e64706672656976616c64732d6d61746d756c6473697a65190800656d6f64656c756e766964' +
  '69612d683130302d383067622d68626d33656e6f6e6365500102030405060708090a0b0c0d0e0f10657274744d730166' +
  '64657461696c78224e4f5f414e535745523a206e6f206469676573742077697468696e20363035206d73677375626a65' +
  '63747834313244334b6f6f5752617750627850745031655a614a70756d476e7957583244635579643352516e79647233' +
  '6541746f34417a376869737375656441741b0000019b76daa800696578706972657341741b0000019b9ae72c006a6475' +
  '726174696f6e4d7319025d6a65787065637465644d7318332a40f07b34b83a9b773241af393c5b94447b93a646ad8645' +
  'ca3e13358974c9e7e4b5500769f31b6a4dc7dcbfaf7aee30b1620dfb0c4eeb8e587b02ef181906ae0805'

describe('protocol/README.md "Attestations and probes": the examples', () => {
  const attestation = sealMessage(provider, 'attestation', attestationPayload({
    provider: provider.peerId,
    gpus: [{ index: 0, uuid: 'GPU-5b0e1a3c-7d2f-4e8a-9c61-0f3e2d4b6a78', name: 'NVIDIA H100 80GB HBM3', model: 'nvidia-h100-80gb-hbm3', vramMiB: 81_559, driver: '565.57.01', provenance: 'detected' }],
    host: { cpuCores: 32, memoryMiB: 262_144 },
    benchmark: { name: 'freivalds-matmul-cpu', value: 120_000_000, unit: 'mac-per-s', durationMs: 17 },
    now: NOW
  }))
  const result = sealMessage(prober, 'probe-result', probeResultPayload({
    subject: provider.peerId, nonce: NONCE, claim: probeClaim('nvidia-h100-80gb-hbm3'), n: 2048, expectedMs: expectedProbeMs(probeClaim('nvidia-h100-80gb-hbm3'), 2048),
    ok: false, rttMs: 1, durationMs: 605, now: NOW, detail: 'NO_ANSWER: no digest within 605 ms'
  }))

  it('reproduces the attestation and it opens as the provider\'s', () => {
    assert.equal(provider.peerId, '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7')
    assert.equal(attestation.cid.toString(), ATTESTATION_CID)
    assert.equal(toHex(attestation.bytes, 'base16'), ATTESTATION_HEX)
    const ad = { signer: provider.peerId, payload: { attestations: [attestation.cid], gpus: [] } }
    assert.equal(verifyAttestation(attestation.bytes, ad, { now: NOW }).attestation.payload.gpus[0]?.provenance, 'detected')
  })

  it('reproduces the probe-result, and it reads as flagged', () => {
    assert.equal(prober.peerId, '12D3KooWB8sCGZCrwr79HtabLAn95qyPQx6RYHXjEbiD6QKou7ww')
    assert.equal(result.cid.toString(), PROBE_RESULT_CID)
    assert.equal(toHex(result.bytes, 'base16'), PROBE_RESULT_HEX)
    const opened = openMessage(result.bytes, 'probe-result', { now: NOW })
    assert.equal(opened.signer, prober.peerId)
    assert.equal(probeVerdict(opened.payload), 'flagged')
  })

  it('derives the challenge for nonce 01…10 and n = 32 as documented', () => {
    const a = deriveMatrix(NONCE, 'A', 32)
    const b = deriveMatrix(NONCE, 'B', 32)
    assert.deepEqual(Array.from(a.subarray(0, 4)), [6333, 32333, 40673, 8378])
    assert.deepEqual(Array.from(b.subarray(0, 4)), [27686, 15717, 50960, 46439])
    assert.equal(toHex(sha256(encodeProduct(multiply(a, b, 32))), 'base16'), '226db8605c19db8a73109f6a072793ab6aec107c81c005dbc2532e62235f792b')
    assert.equal(toHex(encodeProbeFrame({ kind: 'freivalds-matmul', nonce: NONCE, n: 32 }), 'base16'), 'a3616e1820646b696e64706672656976616c64732d6d61746d756c656e6f6e6365500102030405060708090a0b0c0d0e0f10')
  })
})
