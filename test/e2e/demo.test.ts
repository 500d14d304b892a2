import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.js'

describe('gpumesh demo (the README\'s main job)', function () {
  this.timeout(180_000)

  it('starts a local network, shows discovery and shuts down cleanly', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-demo-'))
    try {
      const result = await runCli(['demo', '--dir', dir, '--duration', '0'], { timeoutMs: 170_000 })
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, /4 providers announced \d+ capability keys/)
      const section = (flags: string): string => result.stdout.split(`$ gpumesh providers ${flags} `)[1]?.split('\n\n')[0] ?? ''
      assert.deepEqual(section('--min-vram 40').match(/provider-\w+/g)?.sort(), ['provider-a100', 'provider-h100', 'provider-l40s'])
      assert.deepEqual(section('--region eu --min-vram 80').match(/provider-\w+/g), ['provider-h100'])
      assert.deepEqual(section('--gpu 4090').match(/provider-\w+/g), ['provider-4090'])
      assert.match(result.stdout, /stopped\./)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
