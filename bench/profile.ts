/**
 * A CPU profile of this process over a phase of a benchmark, through the inspector (no flags, no
 * restart), summed the two ways that answer "where does the time go": by package (node_modules/<pkg>,
 * node:internal, this project's dist/) and by function's own time. The raw profile can be written to a
 * .cpuprofile file for Chrome DevTools or speedscope. Used by bench/dht.ts under BENCH_PROFILE=1.
 */
import { Session } from 'node:inspector/promises'
import { writeFile } from 'node:fs/promises'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
export interface CpuProfile { nodes: ProfileNode[], samples: number[], startTime: number, endTime: number }

export interface ProfileSummary {
  samples: number
  /** Share of samples (0–1) per package, largest first. */
  byPackage: Array<[string, number]>
  /** Share of samples (0–1) per function's own time, largest first. */
  bySelf: Array<[string, number]>
}

/** Where a script URL belongs: the npm package, a Node internal module group, or this project. */
export function packageOf (url: string, functionName: string): string {
  if (url === '') return functionName === '' ? '(native)' : functionName
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/')
    return parts[0]?.startsWith('@') === true ? `${parts[0]}/${parts[1] ?? ''}` : parts[0] ?? url
  }
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/')
  const dist = url.indexOf('/dist/')
  return dist >= 0 ? `gpumesh ${url.slice(dist + '/dist/'.length).split('/').slice(0, 2).join('/')}` : url
}

function frameName (cf: CallFrame): string {
  const nm = cf.url.lastIndexOf('node_modules/')
  const where = nm >= 0 ? cf.url.slice(nm + 'node_modules/'.length) : cf.url.replace(/^.*\/dist\//, 'dist/')
  return `${cf.functionName === '' ? '(anonymous)' : cf.functionName} ${where}:${cf.lineNumber + 1}`
}

/** Sum the samples of a profile by package and by function (own time). */
export function summarize (profile: CpuProfile, top = 20): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const counts = new Map<number, number>()
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1)
  const byPackage = new Map<string, number>()
  const bySelf = new Map<string, number>()
  for (const [id, count] of counts) {
    const cf = (byId.get(id) as ProfileNode).callFrame
    const pkg = packageOf(cf.url, cf.functionName)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + count)
    const name = frameName(cf)
    bySelf.set(name, (bySelf.get(name) ?? 0) + count)
  }
  const total = Math.max(1, profile.samples.length)
  const ranked = (m: Map<string, number>): Array<[string, number]> =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, c]) => [k, c / total])
  return { samples: profile.samples.length, byPackage: ranked(byPackage), bySelf: ranked(bySelf) }
}

/** Start profiling now (1 ms sampling); the returned function stops it and returns the profile. */
export async function startProfile (): Promise<() => Promise<CpuProfile>> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 1000 })
  await session.post('Profiler.start')
  return async () => {
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    return profile as unknown as CpuProfile
  }
}

/** Print a summary as two short tables; write the raw profile to `file` when given. */
export async function report (title: string, profile: CpuProfile, file?: string): Promise<void> {
  const s = summarize(profile)
  const line = ([name, share]: [string, number]): string => `    ${(share * 100).toFixed(1).padStart(5)} %  ${name}`
  console.log(`  CPU profile, ${title} (${s.samples} samples at 1 ms):`)
  console.log('   by package:')
  for (const row of s.byPackage.slice(0, 12)) console.log(line(row))
  console.log('   by function (own time):')
  for (const row of s.bySelf.slice(0, 15)) console.log(line(row))
  if (file !== undefined) {
    await writeFile(file, JSON.stringify(profile))
    console.log(`   raw profile: ${file} (open in Chrome DevTools or speedscope)`)
  }
}
