/**
 * GPU detection with nvidia-smi (DESIGN §6): one CSV query, each line parsed strictly. A line that
 * cannot be read is skipped and reported by its line number, and the GPUs on the other lines are kept;
 * a GPU whose driver reports no memory size (unified-memory parts: GB10, Jetson) is kept with its memory
 * unknown — never guessed. Every failure, from a missing binary to output nobody expected, becomes a
 * GpuDetectionError whose message tells the owner what happened and that GPUs can be declared instead.
 */
import { execFile, type ExecFileException } from 'node:child_process'
import type { GpuInfo } from '../../protocol/index.js'
import { modelSlug } from '../../protocol/index.js'

/** The columns asked of nvidia-smi, in the order it prints them. */
export const NVIDIA_SMI_FIELDS = [
  'index', 'uuid', 'name', 'memory.total', 'driver_version', 'power.limit', 'temperature.gpu', 'utilization.gpu'
] as const

/** argv for nvidia-smi (no shell): one CSV line per GPU, no header, no units. */
export const NVIDIA_SMI_ARGS: readonly string[] = [
  `--query-gpu=${NVIDIA_SMI_FIELDS.join(',')}`, '--format=csv,noheader,nounits'
]

export const DEFAULT_NVIDIA_SMI_COMMAND = 'nvidia-smi'
export const DEFAULT_DETECT_TIMEOUT_MS = 10_000

/** nvidia-smi prints one short line per GPU; anything bigger is not its output. */
const MAX_OUTPUT_BYTES = 1024 * 1024

/** A GPU as nvidia-smi reports it. Optional fields are absent when the driver reports no value. */
export interface DetectedGpu {
  index: number
  uuid: string
  name: string
  /** Absent when the driver reports no size (`[N/A]`, `[Not Supported]`: unified-memory parts). */
  memoryMiB?: number
  driver: string
  /** Rounded to whole watts. */
  powerLimitW?: number
  temperatureC?: number
  utilizationPct?: number
}

export type GpuDetectionErrorCode = 'NVIDIA_SMI_MISSING' | 'NVIDIA_SMI_FAILED' | 'NVIDIA_SMI_TIMEOUT' | 'NVIDIA_SMI_UNPARSEABLE'

const FALLBACK = 'Declare GPUs in the config to sell without detection.'

export class GpuDetectionError extends Error {
  override readonly name = 'GpuDetectionError'
  readonly code: GpuDetectionErrorCode
  /** 1-based line of nvidia-smi's output that could not be read (NVIDIA_SMI_UNPARSEABLE only). */
  readonly line: number | undefined

  constructor (code: GpuDetectionErrorCode, message: string, options: { line?: number, cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.line = options.line
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

/** Highest GPU index a capability ad can carry (GpuInfo.index). */
const MAX_INDEX = 63

/** Longest stretch of an offending line quoted back in an error message. */
const QUOTE_LIMIT = 120

/** `text` in quotes, cut short when long, so a message stays one readable line. */
function quote (text: string): string {
  const shown = text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT)}…` : text
  return JSON.stringify(shown)
}

/** True for the placeholders nvidia-smi prints instead of a value: `[N/A]`, `[Not Supported]`, `N/A`, … */
function isUnavailable (value: string): boolean {
  return value === '' || value.toUpperCase() === 'N/A' || /^\[[^\]]*\]$/.test(value)
}

/** The NVIDIA_SMI_UNPARSEABLE error for `line` of the output. */
function unparseable (line: number, detail: string): GpuDetectionError {
  return new GpuDetectionError('NVIDIA_SMI_UNPARSEABLE', `nvidia-smi printed output that gpumesh cannot read: line ${line}: ${detail}. ${FALLBACK}`, { line })
}

/** A required column, or an error saying the driver reported no value for it. */
function required (field: string, value: string, line: number): string {
  if (isUnavailable(value)) {
    throw unparseable(line, `${field} is ${value === '' ? 'empty' : quote(value)}, and gpumesh needs it to sell this GPU`)
  }
  return value
}

/** A whole number within [0, max], or an error naming the column. */
function wholeNumber (field: string, value: string, line: number, max = Number.MAX_SAFE_INTEGER): number {
  const parsed = /^\d{1,15}$/.test(value) ? Number(value) : NaN
  if (!(parsed <= max)) throw unparseable(line, `${field} is ${quote(value)}, expected a whole number${max < Number.MAX_SAFE_INTEGER ? ` up to ${max}` : ''}`)
  return parsed
}

/** An optional numeric column (`700.00`, `-5`), rounded; undefined when the driver has no value. */
function optionalNumber (field: string, value: string, line: number, allowNegative = false): number | undefined {
  if (isUnavailable(value)) return undefined
  const pattern = allowNegative ? /^-?\d{1,9}(\.\d{1,6})?$/ : /^\d{1,9}(\.\d{1,6})?$/
  if (!pattern.test(value)) throw unparseable(line, `${field} is ${quote(value)}, expected a number or [N/A]`)
  return Math.round(Number(value)) + 0
}

/** UTF-8 byte length (GpuInfo's text limits count bytes). */
function utf8Bytes (text: string): number {
  return new TextEncoder().encode(text).length
}

/** One CSV line (already known to be non-blank) as a DetectedGpu. */
function parseLine (text: string, line: number): DetectedGpu {
  const fields = text.split(',').map((field) => field.trim())
  if (fields.length !== NVIDIA_SMI_FIELDS.length) {
    throw unparseable(line, `expected ${NVIDIA_SMI_FIELDS.length} comma-separated fields (${NVIDIA_SMI_FIELDS.join(', ')}), found ${fields.length} in ${quote(text.trim())}`)
  }
  const [index, uuid, name, memory, driver, power, temperature, utilization] = fields as [string, string, string, string, string, string, string, string]
  const gpu: DetectedGpu = {
    index: wholeNumber('index', required('index', index, line), line, MAX_INDEX),
    uuid: required('uuid', uuid, line),
    name: required('name', name, line),
    driver: required('driver_version', driver, line)
  }
  // unified-memory parts report no framebuffer size: the GPU is kept, its memory unknown
  if (!isUnavailable(memory)) gpu.memoryMiB = wholeNumber('memory.total', memory, line)
  if (!/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/.test(gpu.uuid)) throw unparseable(line, `uuid is ${quote(gpu.uuid)}, expected a GPU UUID like GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7`)
  if (modelSlug(gpu.name) === '' || utf8Bytes(gpu.name) > 96) throw unparseable(line, `name is ${quote(gpu.name)}, expected a GPU model name`)
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/.test(gpu.driver)) throw unparseable(line, `driver_version is ${quote(gpu.driver)}, expected a version like 550.90.07`)
  const powerLimitW = optionalNumber('power.limit', power, line)
  const temperatureC = optionalNumber('temperature.gpu', temperature, line, true)
  const utilizationPct = isUnavailable(utilization) ? undefined : wholeNumber('utilization.gpu', utilization, line, 100)
  if (powerLimitW !== undefined) gpu.powerLimitW = powerLimitW
  if (temperatureC !== undefined) gpu.temperatureC = temperatureC
  if (utilizationPct !== undefined) gpu.utilizationPct = utilizationPct
  return gpu
}

/** What one run of nvidia-smi yielded: the GPUs it could read, and the lines it could not (each with its line number). */
export interface GpuDetection {
  gpus: DetectedGpu[]
  skipped: GpuDetectionError[]
}

/**
 * Read the output of `nvidia-smi --query-gpu=<NVIDIA_SMI_FIELDS> --format=csv,noheader,nounits`, line by
 * line: blank lines are skipped (no output at all means no GPUs); CRLF and padding are tolerated. A line
 * that cannot be read, or repeats an earlier GPU's index or UUID, goes to `skipped` as a
 * GpuDetectionError(NVIDIA_SMI_UNPARSEABLE) naming its line; the other lines' GPUs are kept. Never throws.
 */
export function readNvidiaSmiCsv (text: string): GpuDetection {
  const gpus: DetectedGpu[] = []
  const skipped: GpuDetectionError[] = []
  const seenIndex = new Set<number>()
  const seenUuid = new Set<string>()
  const lines = text.split(/\r\n|\r|\n/)
  for (const [i, raw] of lines.entries()) {
    if (raw.trim() === '') continue
    const line = i + 1
    try {
      const gpu = parseLine(raw, line)
      if (seenIndex.has(gpu.index)) throw unparseable(line, `index ${gpu.index} appears twice`)
      if (seenUuid.has(gpu.uuid)) throw unparseable(line, `uuid ${gpu.uuid} appears twice`)
      seenIndex.add(gpu.index)
      seenUuid.add(gpu.uuid)
      gpus.push(gpu)
    } catch (err) {
      if (!(err instanceof GpuDetectionError)) throw err
      skipped.push(err)
    }
  }
  return { gpus, skipped }
}

/**
 * The same, all or nothing: the GPUs when every line reads, else throws the first line's
 * GpuDetectionError(NVIDIA_SMI_UNPARSEABLE). Throws nothing else.
 */
export function parseNvidiaSmiCsv (text: string): DetectedGpu[] {
  const { gpus, skipped } = readNvidiaSmiCsv(text)
  if (skipped[0] !== undefined) throw skipped[0]
  return gpus
}

// ---------------------------------------------------------------------------------------------
// Running nvidia-smi
// ---------------------------------------------------------------------------------------------

export interface DetectOptions {
  /** Path or name of nvidia-smi, looked up on PATH (default `nvidia-smi`). */
  command?: string
  /** Give up after this long (default 10 s). */
  timeoutMs?: number
  signal?: AbortSignal
}

/** What nvidia-smi prints when it finds no GPU (with exit code 6, NVML's NOT_FOUND). */
const NO_DEVICES = /^No devices were found\s*$/i

/** First non-blank line of `text`, trimmed, or undefined. */
function firstLine (text: string): string | undefined {
  return text.split(/\r\n|\r|\n/).map((l) => l.trim()).find((l) => l !== '')
}

/** The error for a child that ran and did not succeed. */
function failure (command: string, error: ExecFileException, stdout: string, stderr: string): GpuDetectionError {
  if (error.code === 'ENOENT') {
    return new GpuDetectionError('NVIDIA_SMI_MISSING', `${command} was not found, so this machine has no NVIDIA driver or it is not on PATH. ${FALLBACK}`, { cause: error })
  }
  if (error.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') {
    return new GpuDetectionError('NVIDIA_SMI_UNPARSEABLE', `${command} printed more than ${MAX_OUTPUT_BYTES} bytes, which is not the GPU list gpumesh asked for. ${FALLBACK}`, { cause: error })
  }
  if (error.name === 'AbortError') {
    return new GpuDetectionError('NVIDIA_SMI_FAILED', `GPU detection was cancelled before ${command} finished.`, { cause: error })
  }
  const said = (firstLine(stderr) ?? firstLine(stdout))?.replace(/[.\s]+$/, '')
  const how = typeof error.code === 'number'
    ? `exited with code ${error.code}`
    : error.signal != null ? `was killed by ${error.signal}` : `could not be run (${String(error.code ?? error.message)})`
  return new GpuDetectionError('NVIDIA_SMI_FAILED', `${command} ${how}${said === undefined ? '' : `: ${said}`}. ${FALLBACK}`, { cause: error })
}

/**
 * Run nvidia-smi (no shell) and return the GPUs it reports (none when it finds none) with the lines it
 * could not read. Rejects only with GpuDetectionError: NVIDIA_SMI_MISSING (not installed / not on PATH),
 * NVIDIA_SMI_FAILED (non-zero exit, e.g. the driver is not loaded; or cancelled through `signal`),
 * NVIDIA_SMI_TIMEOUT, NVIDIA_SMI_UNPARSEABLE (not one line could be read).
 */
export async function detectGpus (options: DetectOptions = {}): Promise<GpuDetection> {
  const command = options.command ?? DEFAULT_NVIDIA_SMI_COMMAND
  const timeoutMs = options.timeoutMs ?? DEFAULT_DETECT_TIMEOUT_MS
  if (options.signal?.aborted === true) {
    throw new GpuDetectionError('NVIDIA_SMI_FAILED', `GPU detection was cancelled before ${command} started.`)
  }
  const output = await run(command, timeoutMs, options.signal)
  const detection = readNvidiaSmiCsv(output)
  if (detection.gpus.length === 0 && detection.skipped[0] !== undefined) throw detection.skipped[0]
  return detection
}

/** stdout of `command NVIDIA_SMI_ARGS`, or the GpuDetectionError that explains why not. */
async function run (command: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<string> {
  return await new Promise<string>((resolve, reject) => {
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const settle = (fn: () => void): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      fn()
    }
    let child: ReturnType<typeof execFile>
    try {
      child = execFile(command, NVIDIA_SMI_ARGS, {
        encoding: 'utf8', maxBuffer: MAX_OUTPUT_BYTES, windowsHide: true, ...(signal !== undefined ? { signal } : {})
      }, (error, stdout, stderr) => {
        settle(() => {
          if (error === null) { resolve(stdout); return }
          if (typeof error.code === 'number' && NO_DEVICES.test(`${stdout}${stderr}`.trim())) { resolve(''); return }
          reject(failure(command, error, stdout, stderr))
        })
      })
    } catch (err) {
      // execFile throws synchronously for arguments it cannot pass (e.g. a NUL in the command)
      reject(new GpuDetectionError('NVIDIA_SMI_FAILED', `${command} could not be run (${(err as Error).message}). ${FALLBACK}`, { cause: err }))
      return
    }
    // Our own timer rather than execFile's: the callback waits for stdout to close, which a
    // grandchild holding the pipe can delay long after nvidia-smi itself is gone.
    timer = setTimeout(() => {
      settle(() => {
        child.kill('SIGKILL')
        child.stdout?.destroy()
        child.stderr?.destroy()
        reject(new GpuDetectionError('NVIDIA_SMI_TIMEOUT', `${command} did not answer within ${timeoutMs} ms; the driver may be hung or a GPU may have fallen off the bus. ${FALLBACK}`))
      })
    }, timeoutMs)
  })
}

// ---------------------------------------------------------------------------------------------
// Into the protocol
// ---------------------------------------------------------------------------------------------

/**
 * A detected GPU as the capability ad carries it (DESIGN §4, provenance `detected`). Its memory is the
 * driver's; when the driver reports none, the owner's `declaredVramMiB` entry for its UUID or index
 * (config `provider.gpuVramMiB`), else 0: unknown, which claims no VRAM bucket (protocol/README.md §5.2).
 */
export function toGpuInfo (gpu: DetectedGpu, declaredVramMiB: Readonly<Record<string, number>> = {}): GpuInfo {
  return {
    index: gpu.index,
    uuid: gpu.uuid,
    name: gpu.name,
    model: modelSlug(gpu.name),
    vramMiB: gpu.memoryMiB ?? declaredVramMiB[gpu.uuid] ?? declaredVramMiB[String(gpu.index)] ?? 0,
    driver: gpu.driver,
    ...(gpu.powerLimitW !== undefined ? { powerLimitW: gpu.powerLimitW } : {}),
    provenance: 'detected'
  }
}
