/**
 * A seeded pseudo-random source (sfc32, seeded through splitmix32): the same seed gives the same
 * sequence on every machine, so a scenario replays exactly. `fork(label)` derives an independent
 * stream, so adding draws in one part of a scenario (e.g. one link's loss) does not shift another's.
 */
export type Seed = number | string

/** 32-bit FNV-1a of a string: turns a string seed or fork label into a number. */
export function hashString (s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

function splitmix32 (state: number): () => number {
  let s = state >>> 0
  return () => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
}

/**
 * A 32-bit hash of (seed, a, b) — counter-keyed, not sequential: the seed of one (message, receiver) pair's
 * draws (harness/keyed-delivery.ts), so a receiver's delay is the same whether or not any other receiver's was
 * drawn, and in whatever order. Each word goes through splitmix32's finalizer.
 */
export function keyedSeed (seed: number, a: number, b: number): number {
  let h = mix32((seed >>> 0) ^ 0x9e3779b9)
  h = mix32((h ^ (a >>> 0)) + 0x7f4a7c15)
  h = mix32((h ^ (b >>> 0)) + 0x632be5ab)
  return h >>> 0
}

function mix32 (x: number): number {
  let z = x >>> 0
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  return (z ^ (z >>> 16)) >>> 0
}

export class Prng {
  private a: number
  private b: number
  private c: number
  private d: number
  /** The numeric seed this stream started from (forks derive theirs from it; `reseed` changes it). */
  private current: number

  constructor (seed: Seed = 1) {
    this.current = 0
    this.a = this.b = this.c = this.d = 0
    this.reseed(typeof seed === 'string' ? hashString(seed) : (Math.floor(Math.abs(seed)) >>> 0))
  }

  get seed (): number {
    return this.current
  }

  /**
   * Start this stream again from `seed` (a 32-bit number): as `new Prng(seed)`, without the allocation. With
   * `warmup` below the constructor's 12 rounds, a cheaper start for a seed that is already a good hash
   * (keyedSeed: the keyed delivery draws one or two numbers per seed).
   */
  reseed (seed: number, warmup = 12): this {
    this.current = seed >>> 0
    const mix = splitmix32(this.current)
    this.a = mix()
    this.b = mix()
    this.c = mix()
    this.d = mix()
    for (let i = 0; i < warmup; i++) this.uint32()
    return this
  }

  /** A uniform 32-bit unsigned integer. */
  uint32 (): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0
    this.d = (this.d + 1) >>> 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) >>> 0
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0
    this.c = (this.c + t) >>> 0
    return t
  }

  /** Uniform in [0, 1). */
  next (): number {
    return this.uint32() / 4294967296
  }

  /** A uniform integer in [min, max] (both included). */
  int (min: number, max: number): number {
    if (!(max >= min)) throw new RangeError(`int: empty range ${min} … ${max}`)
    return min + Math.floor(this.next() * (Math.floor(max) - Math.ceil(min) + 1))
  }

  /** True with probability `p` (0 never, 1 always). */
  chance (p: number): boolean {
    return p > 0 && (p >= 1 || this.next() < p)
  }

  /** One item of a non-empty array. */
  pick<T> (items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick: empty array')
    return items[this.int(0, items.length - 1)] as T
  }

  /** An independent stream named `label` (the same label from the same seed gives the same stream). */
  fork (label: string): Prng {
    return new Prng((hashString(label) ^ Math.imul(this.seed, 0x9e3779b1)) >>> 0)
  }
}
