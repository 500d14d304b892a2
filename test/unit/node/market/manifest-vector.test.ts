/**
 * protocol/README.md §7.8 "Output manifest": the byte vector, built by the reference provider's
 * `storeResult` (file order, the missing output left out, a repeated declaration once), and the form the
 * reference requester's `checkManifest` insists on (closed maps, declared order), so that two honest
 * implementations give one output the same manifest CID (replicas and fraud proofs compare them, §5.9).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { toString as toHex } from 'uint8arrays/to-string'
import { cidOfRaw, cidOfValue, decodeCanonical, encodeCanonical } from '../../../../crypto/index.js'
import { BlobStore } from '../../../../node/blobs/store.js'
import { ManifestError, buildManifest, checkManifest } from '../../../../node/market/manifest.js'
import { storeResult } from '../../../../node/market/provider-io.js'
import { specSection } from '../../../helpers/spec-text.js'

const DECLARED = ['results.json', 'logs/metrics.csv', 'missing.bin', 'results.json']
const enc = new TextEncoder()
const RESULTS = enc.encode('{"accuracy":0.91}\n')
const METRICS = enc.encode('step,loss\n1,0.5\n')
const REQUESTER = '12D3KooWRawPbxPtP1eZaJpumGnyWX2DcUyd3RQnydr3eAto4Az7'

const MANIFEST_HEX = 'a16566696c657382a363636964d82a5825000155122058913dc3525673abf8633be15fa62fdb3eea32df40f99114d6ac0b2440a2a1ba' +
  '64706174686c726573756c74732e6a736f6e6473697a6512a363636964d82a58250001551220321dbd57fed5631b1504f882f404b575b447c0336f3e2e4391c9c24cb7a936f7' +
  '6470617468706c6f67732f6d6574726963732e6373766473697a6510'
const MANIFEST_CID = 'bafyreib4qngonkfisulmdtxnhomczaqzxiva6dozvilfwahukang3pddqu'

describe('protocol/README.md §7.8: the output manifest', () => {
  let root: string
  let blobs: BlobStore

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-manifest-'))
    blobs = await BlobStore.open(join(root, 'blobs'))
  })

  after(async () => { await rm(root, { recursive: true, force: true }) })

  it('the reference provider builds the vector: declared order, the missing output left out, a repeat once', async () => {
    // produced in another order than declared: the manifest follows the job's declaration
    const result = await storeResult(blobs, DECLARED, [{ path: 'logs/metrics.csv', bytes: METRICS }, { path: 'results.json', bytes: RESULTS }], new Uint8Array(0), REQUESTER)
    assert.deepEqual(result.files.map((f) => [f.path, f.size, f.cid.toString()]), [
      ['results.json', 18, cidOfRaw(RESULTS).toString()],
      ['logs/metrics.csv', 16, cidOfRaw(METRICS).toString()]
    ])
    const bytes = await blobs.get(result.manifest)
    assert.ok(bytes !== undefined)
    assert.equal(toHex(bytes, 'base16'), MANIFEST_HEX)
    assert.equal(result.manifest.toString(), MANIFEST_CID)
    assert.equal(cidOfValue(buildManifest(result.files)).cid.toString(), MANIFEST_CID)
    // it is granted to the requester with every file
    for (const cid of [result.manifest, ...result.files.map((f) => f.cid)]) assert.equal(blobs.allowed(cid, REQUESTER), true)
  })

  it('the spec shows the same bytes, CID and file CIDs', () => {
    const section = specSection('7.8').replace(/\s+/g, '')
    assert.ok(section.includes(MANIFEST_HEX), 'the manifest bytes')
    assert.ok(section.includes(MANIFEST_CID), 'the manifest CID')
    assert.ok(section.includes(cidOfRaw(RESULTS).toString()) && section.includes(cidOfRaw(METRICS).toString()), 'the file CIDs')
  })

  it('the requester reads the vector back, and refuses every other form of the same files', () => {
    const value = decodeCanonical(Uint8Array.from(Buffer.from(MANIFEST_HEX, 'hex')))
    assert.deepEqual(checkManifest(value, DECLARED).files.map((f) => f.path), ['results.json', 'logs/metrics.csv'])
    const [a, b] = checkManifest(value, DECLARED).files as [ReturnType<typeof checkManifest>['files'][number], ReturnType<typeof checkManifest>['files'][number]]
    const refused: Array<[string, unknown, RegExp]> = [
      ['out of the declared order', { files: [b, a] }, /out of the job's declared order/],
      ['an extra key in a file', { files: [{ ...a, mode: 420 }, b] }, /unknown keys: mode/],
      ['an extra top-level key', { files: [a, b], v: 1 }, /not \{ files/],
      ['a file listed twice', { files: [a, a] }, /twice/],
      ['an undeclared path', { files: [{ ...a, path: 'other.json' }] }, /not a declared output/],
      ['a dag-cbor file CID', { files: [{ ...a, cid: cidOfValue({}).cid }] }, /not a raw sha2-256 CID/],
      ['a file that is not a map', { files: [[a.path, a.size, a.cid]] }, /not a map/]
    ]
    for (const [what, manifest, message] of refused) {
      assert.throws(() => checkManifest(manifest, DECLARED), (err: unknown) => err instanceof ManifestError && message.test(err.message), what)
    }
    // an empty manifest (no output written) and a subset in order are fine
    assert.deepEqual(checkManifest({ files: [] }, DECLARED).files, [])
    assert.deepEqual(checkManifest({ files: [b] }, DECLARED).files.map((f) => f.path), ['logs/metrics.csv'])
    // the canonical encoding sorts a file's keys cid, path, size (length first, then bytewise)
    assert.equal(toHex(encodeCanonical({ size: a.size, path: a.path, cid: a.cid }), 'base16').slice(0, 10), 'a363636964')
  })
})
