/**
 * The capability-ad example of protocol/README.md §8, byte for byte: a provider that opted out of the
 * process sandbox (`processSandbox: "none"`) and sells one detected GPU whose memory the driver does not
 * report (`vramMiB: 0`, unknown) beside one it does. Any change to these bytes is a wire change.
 */
import assert from 'node:assert/strict'
import { toString as toHex16 } from 'uint8arrays/to-string'
import { Identity } from '../../../crypto/index.js'
import { capabilityKeys, openMessage, sealMessage, type CapabilityAd } from '../../../protocol/index.js'

export const AD_EXAMPLE: CapabilityAd = {
  v: 1,
  issuedAt: 1_767_225_600_000,
  expiresAt: 1_767_247_200_000,
  seq: 1,
  gpus: [
    { index: 0, uuid: 'GPU-5b0e1a3c-7d2f-4e8a-9c61-0f3e2d4b6a78', name: 'NVIDIA H100 80GB HBM3', model: 'nvidia-h100-80gb-hbm3', vramMiB: 81_559, driver: '565.57.01', powerLimitW: 700, provenance: 'detected' },
    { index: 1, uuid: 'GPU-2dee1e25-b3b5-007e-2b55-79f2d0f2ebe5', name: 'NVIDIA GB10', model: 'nvidia-gb10', vramMiB: 0, driver: '580.126.09', provenance: 'detected' }
  ],
  host: { cpuCores: 32, memoryMiB: 262_144, diskGiB: 0 },
  region: 'eu-west',
  country: 'DE',
  price: { floor: 1_800_000 },
  availability: { timeZone: 'Europe/Berlin', windows: [{ day: 6, start: 0, end: 1440 }, { day: 7, start: 0, end: 1440 }] },
  workloads: ['process', 'wasm'],
  processSandbox: 'none',
  limits: {},
  attestations: [],
  addrs: ['/ip4/203.0.113.7/tcp/4001']
}

const PAYLOAD_CID = 'bafyreignf5vezk3c7tnycd5qzcgbvpmu7p3noukn5fabxo4f36lrn42gkq'
const ENVELOPE_HEX =
  '0a2408011220ea4a6c63e29c520abef5507b132ec5f9954776aebebe7b92421eea691446d22c120481cefd011afb04af' +
  '6176016373657101646770757382a8646e616d65754e5649444941204831303020383047422048424d33647575696478' +
  '284750552d35623065316133632d376432662d346538612d396336312d30663365326434623661373865696e64657800' +
  '656d6f64656c756e76696469612d683130302d383067622d68626d3366647269766572693536352e35372e3031677672' +
  '616d4d69421a00013e976a70726f76656e616e63656864657465637465646b706f7765724c696d6974571902bca7646e' +
  '616d656b4e56494449412047423130647575696478284750552d32646565316532352d623362352d303037652d326235' +
  '352d37396632643066326562653565696e64657801656d6f64656c6b6e76696469612d67623130666472697665726a35' +
  '38302e3132362e3039677672616d4d6942006a70726f76656e616e636568646574656374656464686f7374a367646973' +
  '6b4769420068637075436f7265731820696d656d6f72794d69421a000400006561646472738178192f6970342f323033' +
  '2e302e3131332e372f7463702f34303031657072696365a165666c6f6f721a001b7740666c696d697473a06672656769' +
  '6f6e6765752d7765737467636f756e7472796244456869737375656441741b0000019b76daa800696578706972657341' +
  '741b0000019b78243f0069776f726b6c6f616473826770726f63657373647761736d6c6174746573746174696f6e7380' +
  '6c617661696c6162696c697479a26777696e646f777382a3636461790663656e641905a065737461727400a363646179' +
  '0763656e641905a0657374617274006874696d655a6f6e656d4575726f70652f4265726c696e6e70726f636573735361' +
  '6e64626f78646e6f6e652a40a90ee647f072262d2a5ca85038c67803f63f5c67816e06c68e70a0c28949cad479e64386' +
  '762c1e46e2600175fc22a38efe15ccb3eacb49b163884cf0f02a9401'

describe('protocol/README.md §8: the capability-ad example', () => {
  const signer = new Identity(new Uint8Array(32).fill(7))
  const sealed = sealMessage(signer, 'capability-ad', AD_EXAMPLE)

  it('reproduces the payload CID and the envelope bytes', () => {
    assert.equal(signer.peerId, '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7')
    assert.equal(sealed.cid.toString(), PAYLOAD_CID)
    assert.equal(toHex16(sealed.bytes, 'base16'), ENVELOPE_HEX)
  })

  it('opens, and the GPU with unknown VRAM adds no vram or market key', () => {
    const opened = openMessage(sealed.bytes, 'capability-ad', { now: AD_EXAMPLE.issuedAt + 1000 })
    assert.equal(opened.payload.processSandbox, 'none')
    const keys = capabilityKeys({ gpus: opened.payload.gpus, region: opened.payload.region })
    assert.ok(keys.includes('gpu/nvidia-gb10'))
    assert.deepEqual(keys.filter((k) => k.startsWith('vram/')), ['vram/12', 'vram/16', 'vram/24', 'vram/32', 'vram/40', 'vram/48', 'vram/8', 'vram/80'])
  })
})
