import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.js'

const JOBS = ['gold-h100', 'silver-eu-input', 'silver-any', 'bronze-batch', 'bronze-long', 'gold-urgent']
const PROVIDERS = ['provider-h100', 'provider-a100', 'provider-l40s', 'provider-4090', 'provider-h100-spare']

describe('gpumesh demo (the README\'s main job)', function () {
  this.timeout(180_000)
  let stdout = ''

  before(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-demo-'))
    try {
      const result = await runCli(['demo', '--dir', dir, '--duration', '0'], { timeoutMs: 170_000 })
      stdout = result.stdout
      assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  /** The block a job prints, from its `━━ label` header to the next blank line. */
  const block = (label: string): string => stdout.split(`━━ ${label} `)[1]?.split('\n\n')[0] ?? ''
  /** The summary row of a job: TIER, STATUS, RAN ON, PRICE, GPU-S, PAID, ROUNDS. */
  const row = (label: string): string[] => stdout.split('\n').find((l) => l.startsWith(`${label} `) && /\b(settled|failed|expired|cancelled)\b/.test(l))?.trim().split(/\s+/).slice(1) ?? []

  it('starts five providers and a buyer, and the buyer finds them on the DHT', () => {
    assert.match(stdout, /5 providers and a buyer up; \d+ capability keys on the DHT/)
    assert.match(stdout, /the buyer finds 5 providers on the DHT/)
    // the dashboards to watch it live, printed before the market starts (test/e2e/dashboard.test.ts drives one)
    const early = stdout.split('the buyer finds 5 providers')[0] ?? ''
    assert.match(early, /watch it live in a browser/)
    assert.match(early, /dashboard --data-dir \S+\/buyer /)
    assert.match(early, /dashboard --data-dir \S+\/provider-4090 /)
    for (const name of PROVIDERS) assert.match(stdout, new RegExp(`^${name} `, 'm'))
    assert.match(stdout, /^provider-h100-spare .*Mon-Sun \d\d:00-\d\d:00$/m)
    const found = stdout.split('$ gpumesh providers --region eu --min-vram 80 ')[1]?.split('\n')[0] ?? ''
    assert.deepEqual(found.match(/provider-[\w-]+/g)?.sort(), ['provider-h100', 'provider-h100-spare'])
  })

  it('every job of every tier settles, with bids, a winner and why, a verified receipt and its output', () => {
    for (const label of JOBS) {
      const [tier, status] = row(label)
      assert.equal(status, 'settled', `${label}: ${row(label).join(' ')}`)
      assert.ok(['gold', 'silver', 'bronze'].includes(tier ?? ''), label)
      const text = block(label)
      assert.match(text, /bids(, round \d of \d)?:\n\s+PROVIDER\s+PRICE\s+EFFECTIVE/, label)
      assert.match(text, /winner: provider-[\w-]+ at \d+\.\d+ cr\/GPU-h \(first-price\): lowest effective price/, label)
      assert.match(text, /receipt: exit 0, \d+ GPU-s on provider-[\w-]+, outputs verified/, label)
      assert.match(text, /output: {2}out\.txt \(\d+ bytes\): \S/, label)
    }
    assert.deepEqual(JOBS.map((l) => row(l)[0]).filter((t, i, all) => all.indexOf(t) === i).sort(), ['bronze', 'gold', 'silver'])
    // the cheapest provider that fits wins; the input file reached the job
    assert.equal(row('silver-any')[2], 'provider-4090')
    assert.equal(row('silver-eu-input')[2], 'provider-a100')
    assert.match(block('silver-eu-input'), /output: {2}out\.txt \(\d+ bytes\): TRANSLATE: THE CAT SAT ON THE MAT/)
  })

  it('the provider outside its window never bids, and says why', () => {
    for (const label of JOBS) assert.doesNotMatch(block(label), /^ {4}provider-h100-spare +\d/m, label)
    assert.match(block('gold-h100'), /provider-h100-spare +not selling now: open Mon-Sun \d\d:00-\d\d:00 UTC, opens in /)
    assert.equal(row('gold-h100')[2], 'provider-h100')
  })

  it('gold preempts bronze, and the bronze job is re-auctioned and completes elsewhere', () => {
    assert.match(stdout, /bronze-long was preempted on provider-4090 after \d+\.\d s of work and is auctioned again/)
    assert.equal(row('gold-urgent')[2], 'provider-4090')
    const [, status, ranOn, , , , rounds] = row('bronze-long')
    assert.equal(status, 'settled')
    assert.equal(ranOn, 'provider-l40s')
    assert.equal(rounds, '2')
    const text = block('bronze-long')
    assert.match(text, /preempted +provider reports preempted: .*provider-4090/)
    assert.match(text, /re-auction +round 2 \(preempted\)/)
    assert.match(text, /provider-4090 +busy with the better-paying job it preempted this one for/)
  })

  it('shows the ledgers of the buyer and of every provider, and both sides agree', () => {
    assert.match(stdout, /^ {2}buyer +spent \d+\.\d+/m)
    for (const name of PROVIDERS) assert.match(stdout, new RegExp(`^ {2}${name} +earned \\d+\\.\\d+`, 'm'))
    assert.match(stdout, /^ {2}provider-h100-spare +earned 0\.00 +0 entries$/m)
    // the preempted attempt is paid for the time it ran
    assert.match(stdout, /^ {2}provider-4090 +bronze-long +paid by buyer .* preempted$/m)
    assert.match(stdout, /^ {2}provider-l40s +bronze-long +paid by buyer .* settled$/m)
    const agree = /buyer and providers agree on (\d+) of (\d+) awards/.exec(stdout)
    assert.ok(agree !== null && agree[1] === agree[2] && Number(agree[1]) >= JOBS.length + 1, agree?.[0])
  })

  it('shuts every process down cleanly', () => {
    assert.match(stdout, /stopped: all 7 processes exited cleanly\./)
  })
})
