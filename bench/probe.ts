/**
 * npm run bench:probe — the probe task on this machine's CPU (protocol/trust/probe.ts): deriving A and
 * B, the JavaScript kernel's multiply-adds per second (the source of PROBE_CPU_MAC_PER_SEC), and the
 * challenger's Freivalds check, for n from 128 to 1024 (BENCH_MAX_N). One core, synchronous; print the
 * load beside the numbers.
 */
import '../node/polyfill.js'
import { loadavg } from 'node:os'
import { deriveMatrix, freivalds, freivaldsVectors, multiply } from '../protocol/trust/probe.js'
import { PROBE_CPU_MAC_PER_SEC } from '../protocol/trust/probe-throughput.js'
import { randomNonce } from '../node/random.js'

const MAX_N = Number(process.env.BENCH_MAX_N ?? 1024)

function timed<T> (fn: () => T): [T, number] {
  const start = performance.now()
  const value = fn()
  return [value, performance.now() - start]
}

console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; table CPU rate ${PROBE_CPU_MAC_PER_SEC.toExponential(1)} MAC/s`)
console.log('n      derive A+B ms   multiply ms   MAC/s      freivalds (2 rounds) ms')
for (let n = 128; n <= MAX_N; n *= 2) {
  const nonce = randomNonce()
  const [[a, b], deriveMs] = timed(() => [deriveMatrix(nonce, 'A', n), deriveMatrix(nonce, 'B', n)] as const)
  const [c, multiplyMs] = timed(() => multiply(a, b, n))
  const [ok, checkMs] = timed(() => freivalds(a, b, c, n, freivaldsVectors(randomNonce(32), n)))
  if (!ok) throw new Error('the product failed its own check')
  const rate = n ** 3 * 1000 / multiplyMs
  console.log(`${String(n).padEnd(6)} ${deriveMs.toFixed(1).padStart(13)} ${multiplyMs.toFixed(1).padStart(13)}   ${rate.toExponential(2).padEnd(10)} ${checkMs.toFixed(1).padStart(10)}`)
}
