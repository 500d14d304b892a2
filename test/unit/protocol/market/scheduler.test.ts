import assert from 'node:assert/strict'
import { VirtualScheduler } from '../../../../protocol/market/scheduler.js'
import { createRealScheduler } from '../../../../node/market/real-scheduler.js'

describe('VirtualScheduler', () => {
  it('runs calls in time order, ties in scheduling order, and moves the clock to each', () => {
    const s = new VirtualScheduler(1_000)
    const seen: Array<[string, number]> = []
    s.at(1_500, () => seen.push(['b', s.now()]))
    s.at(1_200, () => seen.push(['a', s.now()]))
    s.at(1_500, () => seen.push(['c', s.now()]))
    assert.equal(s.pending, 3)
    assert.equal(s.runAll(), 3)
    assert.deepEqual(seen, [['a', 1_200], ['b', 1_500], ['c', 1_500]])
    assert.equal(s.pending, 0)
  })

  it('never runs a call inside at(), and runs a past time at the current time', () => {
    const s = new VirtualScheduler(5_000)
    let ran = -1
    s.at(1, () => { ran = s.now() })
    assert.equal(ran, -1)
    s.step()
    assert.equal(ran, 5_000)
  })

  it('runUntil runs exactly what is due at t (calls scheduled meanwhile included) and stops the clock at t', () => {
    const s = new VirtualScheduler(0)
    const seen: number[] = []
    s.at(10, () => { seen.push(10); s.at(20, () => seen.push(20)) })
    s.at(21, () => seen.push(21))
    assert.equal(s.runUntil(20), 2)
    assert.deepEqual(seen, [10, 20])
    assert.equal(s.now(), 20)
    assert.equal(s.next(), 21)
    s.advance(1)
    assert.deepEqual(seen, [10, 20, 21])
  })

  it('cancel stops a call that has not run, once; cancelled calls are not pending', () => {
    const s = new VirtualScheduler(0)
    let runs = 0
    const cancel = s.at(10, () => runs++)
    s.at(10, () => runs++)
    cancel()
    cancel()
    assert.equal(s.pending, 1)
    s.runAll()
    assert.equal(runs, 1)
  })

  it('guards against a call that reschedules itself forever', () => {
    const s = new VirtualScheduler(0)
    const again = (): void => { s.at(s.now(), again) }
    s.at(0, again)
    assert.throws(() => s.runUntil(0, 100), /more than 100 calls/)
  })

  it('runs a series step by step, each step tied with other calls as its own at() made at the series\' start would be', () => {
    const s = new VirtualScheduler(0)
    const seen: string[] = []
    s.at(10, () => seen.push('before@10'))
    s.at(30, () => seen.push('before@30'))
    const times = [10, 20, 30]
    let i = 0
    s.series(times[0] as number, () => {
      const k = i
      seen.push(`step${k}@${s.now()}`)
      // a call a step schedules for its own instant runs after the step, before the series' next
      s.at(s.now(), () => seen.push(`follow${k}@${s.now()}`))
      i++
      return times[i]
    })
    s.at(10, () => seen.push('after@10'))
    s.at(20, () => seen.push('after@20'))
    assert.equal(s.pending, 5, 'the series is one pending call')
    assert.equal(s.runAll(), 10, 'each step is one call')
    assert.deepEqual(seen, [
      'before@10', 'step0@10', 'after@10', 'follow0@10',
      'step1@20', 'after@20', 'follow1@20',
      'before@30', 'step2@30', 'follow2@30'
    ])
    assert.equal(s.pending, 0)
  })

  it('takes a series\' next time in the past as now, and never runs a step due at Infinity', () => {
    const s = new VirtualScheduler(100)
    const at: number[] = []
    const next = [50, Infinity]
    s.series(100, () => { at.push(s.now()); return next.shift() })
    assert.equal(s.runAll(), 2)
    assert.deepEqual(at, [100, 100])
    assert.equal(s.pending, 1, 'the step due at Infinity stays pending')
    assert.equal(s.next(), Infinity)
  })

  it('keeps an infinitely late call pending without running it', () => {
    const s = new VirtualScheduler(0)
    let ran = false
    s.at(Infinity, () => { ran = true })
    assert.equal(s.runAll(), 0)
    assert.equal(ran, false)
    assert.equal(s.pending, 1)
  })
})

describe('createRealScheduler', () => {
  it('re-arms a timer that fires before the clock reaches t, so fn never runs early', async () => {
    // a clock that lags the timers by 40 ms, as a wall clock can after a jump
    let offset = -40
    const clock = (): number => Date.now() + offset
    const s = createRealScheduler(clock)
    const t = clock() + 20
    const ranAt = await new Promise<number>((resolve) => { s.at(t, () => { resolve(clock()) }) })
    offset = 0
    assert.ok(ranAt >= t, `ran at ${ranAt}, before ${t}`)
  })

  it('cancel stops a pending call', async () => {
    const s = createRealScheduler()
    let ran = false
    const cancel = s.at(s.now() + 5, () => { ran = true })
    cancel()
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.equal(ran, false)
  })
})
