import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import type { JobView } from '../../node/market/views.js'
import { OPENER } from '../../cli/dashboard-command.js'
import { runCli } from '../helpers/cli.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll, waitUntilAnnounced } from '../helpers/processes.js'

/** The browser: Debian's Chromium (`apt-get install chromium`), or another at GPUMESH_CHROMIUM. */
const CHROMIUM = process.env.GPUMESH_CHROMIUM ?? '/usr/bin/chromium'
/** Set (to a folder) by `npm run docs:screenshots`: the test also saves a PNG of each view there. */
const SCREENSHOTS = process.env.GPUMESH_SCREENSHOTS

/**
 * The dashboard in a real headless browser against real daemons: a bootstrap peer, a provider and a buyer,
 * separate `gpumesh` processes over TCP; the page is opened from the link `gpumesh dashboard` prints.
 */
describe('the browser dashboard: real daemons, headless Chromium', function () {
  this.timeout(90_000)
  let root: string
  let provider: DaemonProcess
  let pricey: DaemonProcess
  let buyer: DaemonProcess
  let browser: Browser | undefined
  let providerId: string
  let priceyId: string
  const pageErrors: string[] = []

  const submit = async (label: string, say: string): Promise<string> => {
    const r = await buyer.cli(['job', 'submit', '--label', label, '--gpus', '1', '--max-price', '2', '--bid-window', '2s', '--max-runtime', '60s', '--', '/bin/sh', '-c', `echo ${say}`])
    assert.equal(r.code, 0, r.stderr)
    return r.stdout.trim()
  }
  const settled = async (id: string): Promise<JobView> => await eventually(`job ${id} to settle`, async () => {
    const view = await buyer.api<JobView>('/v1/job', { id })
    assert.ok(!['failed', 'expired', 'cancelled'].includes(view.status), `${view.status}: ${view.reason ?? ''}`)
    return view.status === 'settled' ? view : undefined
  }, 45_000)
  const loginLink = async (d: DaemonProcess): Promise<string> => {
    const r = await d.cli(['dashboard', '--json'])
    assert.equal(r.code, 0, r.stderr)
    const { url, opened } = JSON.parse(r.stdout) as { url: string, opened: boolean }
    assert.equal(opened, false, '--json opens nothing')
    return url
  }
  const open = async (url: string): Promise<Page> => {
    assert.ok(browser !== undefined)
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    page.on('pageerror', (err) => { pageErrors.push(err.message) })
    page.on('console', (msg) => { if (msg.type() === 'error') pageErrors.push(msg.text()) })
    await page.goto(url)
    return page
  }
  /** Save the page (or one of its panels, `selector`) as docs' dashboard-<name>.png, under `npm run docs:screenshots`. */
  const shot = async (page: Page, name: string, selector?: string): Promise<void> => {
    if (SCREENSHOTS === undefined) return
    await mkdir(SCREENSHOTS, { recursive: true })
    const path = join(SCREENSHOTS, `dashboard-${name}.png`)
    await (selector !== undefined ? page.locator(selector).screenshot({ path }) : page.screenshot({ path, fullPage: true }))
  }

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`      skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set GPUMESH_CHROMIUM)`)
      this.skip()
    }
    const { chromium } = await import('playwright-core')
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-dashboard-'))
    const bootstrap = await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS, '--log-level', 'warn'], join(root, 'bootstrap'))
    const addr = bootstrap.addresses()[0] as string
    const node = ['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr]
    const seller = ['--region', 'us-east', '--no-detect-gpus', '--declare-gpu', 'NVIDIA L40S:46068x1']
    ;[provider, pricey, buyer, browser] = await Promise.all([
      DaemonProcess.start([...node, ...seller, '--price-floor', '0.8'], join(root, 'provider')),
      DaemonProcess.start([...node, ...seller, '--price-floor', '1.5'], join(root, 'pricey')),
      DaemonProcess.start([...node, '--no-sell'], join(root, 'buyer')),
      chromium.launch({ executablePath: CHROMIUM, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] })
    ])
    ;[providerId, priceyId] = await Promise.all([provider, pricey].map(async (p) => (await waitUntilAnnounced(p)).peerId)) as [string, string]
  })

  beforeEach(() => { pageErrors.length = 0 })

  after(async () => {
    await browser?.close()
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it('`gpumesh dashboard` prints the login link and hands it to the opener; without one, or with --no-open, it only prints', async () => {
    const bin = join(root, 'bin')
    await mkdir(bin, { recursive: true })
    const opened = join(root, 'opened.txt')
    await writeFile(join(bin, OPENER), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`)
    await chmod(join(bin, OPENER), 0o755)
    const dashboard = async (args: string[], path: string): Promise<{ code: number | null, stdout: string, stderr: string }> =>
      await runCli(['dashboard', ...args, '--data-dir', buyer.dataDir], { env: { PATH: path } })
    const token = (await readFile(join(buyer.dataDir, 'api.token'), 'utf8')).trim()

    const withOpener = await dashboard([], bin)
    assert.equal(withOpener.code, 0, withOpener.stderr)
    const link = withOpener.stdout.trim()
    assert.match(link, new RegExp(`^http://127\\.0\\.0\\.1:\\d+/dashboard#token=${token}$`))
    assert.match(withOpener.stderr, new RegExp(`opening it with ${OPENER}`))
    await eventually('the opener to run', async () => await readFile(opened, 'utf8').then((t) => t === link ? true : undefined, () => undefined), 10_000)

    await rm(opened)
    const only = await dashboard(['--no-open'], bin)
    assert.equal(only.code, 0, only.stderr)
    assert.equal(only.stdout.trim(), link)
    assert.equal(only.stderr, '')
    const none = await dashboard([], join(root, 'empty-bin'))
    assert.equal(none.code, 0, none.stderr)
    assert.equal(none.stdout.trim(), link)
    assert.match(none.stderr, new RegExp(`no ${OPENER} here: open the link above in a browser`))
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(existsSync(opened), false, 'neither --no-open nor a missing opener ran it')

    const stopped = await runCli(['dashboard', '--data-dir', join(root, 'nobody')])
    assert.equal(stopped.code, 1)
    assert.match(stopped.stderr, /no running gpumesh daemon for data dir/)
  })

  it('without the token the page says so and the API answers 401; a wrong token is refused the same way', async () => {
    const link = await loginLink(buyer)
    const base = link.split('#')[0] as string
    const api = new URL('/v1/status', base)
    assert.equal((await fetch(api)).status, 401)
    // the page's own files need no token, and come with the strict policy
    const res = await fetch(base)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'self'/)

    const bare = await open(base)
    await bare.waitForSelector('#gate:not([hidden])')
    assert.match(await bare.textContent('#gate') ?? '', /Not signed in.*has no token.*gpumesh dashboard/s)
    assert.equal(await bare.isVisible('#tabs'), false)

    const wrong = await open(`${base}#token=${'0'.repeat(64)}`)
    await wrong.waitForSelector('#gate:not([hidden])')
    assert.match(await wrong.textContent('#gate') ?? '', /refused this page's token \(HTTP 401\)/)
    // the browser's own 401 report is the only console error allowed here; closed first, so none comes later
    await Promise.all([bare, wrong].map(async (p) => { await p.context().close() }))
    pageErrors.splice(0, pageErrors.length, ...pageErrors.filter((e) => !/401/.test(e)))
    assert.deepEqual(pageErrors, [])
  })

  it('with the login link: shows the job just run with its winner and log, and the next one when it finishes', async () => {
    const first = await submit('dash-one', 'hello-from-one')
    await settled(first)
    const page = await open(await loginLink(buyer))
    await page.waitForSelector('body[data-state="live"]')
    assert.equal(new URL(page.url()).hash, '', 'the token is dropped from the address bar')
    assert.equal(await page.getAttribute('body', 'data-view'), 'buyer', 'a node that sells nothing opens on its buyer view')
    const row = page.locator(`tr[data-job="${first}"]`)
    await row.waitFor()
    assert.match(await row.textContent() ?? '', /dash-one.*settled/)
    await page.locator('#log', { hasText: 'hello-from-one' }).waitFor()
    assert.match(await page.textContent('#job') ?? '', new RegExp(`${providerId.slice(0, 8)}.*lowest effective price`, 's'))
    assert.match(await page.textContent('#job') ?? '', /won/)

    // the next job shows up and settles on the open page: no reload (the marker would be gone)
    await page.evaluate('window.marker = 1')
    const second = await submit('dash-two', 'hello-from-two')
    await settled(second)
    await page.locator(`tr[data-job="${second}"]`).filter({ hasText: 'settled' }).waitFor({ timeout: 15_000 })
    assert.equal(await page.evaluate('window.marker'), 1)
    // picking it shows its own log
    await page.click(`tr[data-job="${second}"]`)
    await page.locator('#log', { hasText: 'hello-from-two' }).waitFor()
    assert.doesNotMatch(await page.textContent('#log') ?? '', /hello-from-one/)
    assert.match(await page.textContent('#buying') ?? '', /2\s*jobs/)
    await shot(page, 'buyer')

    await page.click('#tabs button[data-view="network"]')
    await page.waitForSelector('#peers')
    assert.match(await page.textContent('#peers') ?? '', /outbound|inbound/)
    assert.match(await page.textContent('#dht') ?? '', /routing table/)
    await shot(page, 'network')
    assert.deepEqual(pageErrors, [])
  })

  it('the providers\' pages: earnings, fill rate, track record, and bids won and lost with the reason', async () => {
    const page = await open(await loginLink(provider))
    await page.waitForSelector('body[data-state="live"]')
    assert.equal(await page.getAttribute('body', 'data-view'), 'provider', 'a selling node opens on its provider view')
    // two settled jobs were paid: earnings above zero, drawn as a line with a point per job
    await page.locator('#earnings circle.dot').nth(1).waitFor()
    assert.doesNotMatch(await page.textContent('#selling') ?? '', /0\.00 cr\s*earned/)
    assert.match(await page.textContent('#reputation') ?? '', /2\s*awards settled/)
    assert.match(await page.textContent('#fill') ?? '', /% of 1 GPU/)
    // what the fill rate divides by: the ad's 1 GPU × its availability since start (always free here: the time since start)
    const st = await provider.api<{ startedAt: number, offered?: { gpuSeconds: number, since: number } }>('/v1/status')
    assert.equal(st.offered?.since, st.startedAt)
    const upSeconds = (Date.now() - st.startedAt) / 1000
    assert.ok((st.offered?.gpuSeconds ?? 0) > upSeconds - 5 && (st.offered?.gpuSeconds ?? 0) <= upSeconds, `${st.offered?.gpuSeconds} GPU-s offered after ${upSeconds} s`)
    // its reputation as the evidence that reached it scores it (GET /v1/reputation, this node by default)
    const self = await provider.api<{ peer: string, self: boolean, score: number, prior: { mean: number } }>('/v1/reputation')
    assert.equal(self.peer, providerId)
    assert.equal(self.self, true)
    assert.match(await page.textContent('#peers-view') ?? '', new RegExp(`${self.score.toFixed(3)}\\s*score`))
    // and the buyer's view of it counts its own two settled awards (its probes of the CPU-declared GPU may add a failure)
    const seen = await buyer.api<{ self: boolean, own: { okCount: number } }>('/v1/reputation', { peer: providerId })
    assert.equal(seen.self, false)
    assert.equal(seen.own.okCount, 2)
    // its bids (GET /v1/bids): both won
    await page.locator('#bids tbody tr').nth(1).waitFor()
    assert.match(await page.textContent('#bids') ?? '', /won 2/)
    assert.match(await page.textContent('#bids') ?? '', /no bid lost/)
    await shot(page, 'provider')

    // the pricier provider lost both, on price, to the cheaper one
    const other = await open(await loginLink(pricey))
    await other.locator('#bids tbody tr').nth(1).waitFor()
    const bids = await other.textContent('#bids') ?? ''
    assert.match(bids, /lost 2/)
    assert.match(bids, /lost on: price 2/)
    assert.equal(await other.locator('#bids tbody tr', { hasText: providerId.slice(-6) }).count(), 2, bids)
    assert.doesNotMatch(bids, new RegExp(priceyId.slice(-6)))
    assert.match(await other.textContent('#selling') ?? '', /0\.00 cr\s*earned/)
    await shot(other, 'provider-lost-bids', '#bids')
    assert.deepEqual(pageErrors, [])
  })

  it('a provider\'s page follows the log of the job it runs, live (GET /v1/market/logs)', async () => {
    const page = await open(await loginLink(provider))
    await page.waitForSelector('body[data-state="live"]')
    const job = await submit('dash-run', 'run-log-first; sleep 4; echo run-log-last')
    // picked by default as the newest running job, and read on while it runs
    await page.locator('#run-log', { hasText: 'run-log-first' }).waitFor({ timeout: 30_000 })
    assert.match(await page.textContent('#run-log-box') ?? '', /\(live\)/)
    assert.equal(await page.locator(`tr.selected[data-run="${job}"]`).count(), 1)
    await page.locator('#run-log', { hasText: 'run-log-last' }).waitFor({ timeout: 30_000 })
    await settled(job)
    await page.locator('#run-log-box', { hasText: '(complete)' }).waitFor({ timeout: 15_000 })
    // the route itself: the token, a known job, and a 404 for a job this node never ran
    const logs = await provider.api<{ text: string, next: number, done: boolean }>('/v1/market/logs', { id: job, from: '0' })
    assert.equal(logs.text, 'run-log-first\nrun-log-last\n')
    assert.equal(logs.next, Buffer.byteLength(logs.text))
    assert.equal((await provider.api<{ text: string }>('/v1/market/logs', { id: job, from: '14' })).text, 'run-log-last\n')
    assert.deepEqual(pageErrors, [])
  })
})
