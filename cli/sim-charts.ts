/**
 * Renders the simulator's charts (simulations/report/charts.ts: vega-lite specs) to SVG and PNG files.
 *
 * vega-lite 5.23 compiles a spec to vega (vega-lite 6 needs Node 22; gpumesh runs on Node 20), vega 5
 * renders it headless (`renderer: 'none'`, text measured by vega's own estimate, no canvas), so the SVG
 * is the same bytes for the same spec; @resvg/resvg-js (Rust, prebuilt per platform in the npm package)
 * turns the SVG into a PNG without a browser. resvg draws text only with a font it is given: we load one
 * font file and no system fonts, so a PNG does not depend on what else is installed — DejaVu Sans
 * (Bitstream Vera licence, free to use and redistribute) from Debian's fonts-dejavu-core, found at the
 * usual paths, or the file the caller passes. With no font found rendering fails closed (ChartFontError)
 * instead of writing PNGs without text.
 */
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'
import * as vega from 'vega'
import { compile } from 'vega-lite'
import { CHART_FONT, type VegaLiteSpec } from '../simulations/report/charts.js'
import { ChartFontError, ChartSpecError } from './chart-errors.js'

export { ChartFontError, ChartSpecError } from './chart-errors.js'

/** Where DejaVu Sans lies on Debian/Ubuntu (fonts-dejavu-core), Arch, Fedora and Alpine. */
export const DEFAULT_FONT_FILES = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/TTF/DejaVuSans.ttf',
  '/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf',
  '/usr/share/fonts/dejavu/DejaVuSans.ttf'
] as const

/** The given font file (which must exist), else the first of DEFAULT_FONT_FILES that exists. */
export function findChartFont (given?: string, candidates: readonly string[] = DEFAULT_FONT_FILES): string {
  const tried = given !== undefined ? [given] : [...candidates]
  const found = tried.find((f) => existsSync(f))
  if (found === undefined) throw new ChartFontError(tried)
  return found
}

/** The chart as SVG text (deterministic for a spec). */
export async function renderSvg (spec: VegaLiteSpec, name = 'chart'): Promise<string> {
  let view: vega.View
  try {
    // vega tags the data objects it ingests (a symbol per row): hand it a copy, never the caller's spec
    const compiled = compile(structuredClone(spec) as unknown as Parameters<typeof compile>[0]).spec
    view = new vega.View(vega.parse(compiled), { renderer: 'none' })
  } catch (err) {
    throw new ChartSpecError(name, err)
  }
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

/** The SVG as PNG bytes, its text drawn with `fontFile` only. */
export function svgToPng (svg: string, fontFile: string): Uint8Array {
  const resvg = new Resvg(svg, {
    background: 'white',
    font: { fontFiles: [fontFile], loadSystemFonts: false, defaultFontFamily: CHART_FONT, sansSerifFamily: CHART_FONT }
  })
  return resvg.render().asPng()
}

export interface WriteChartsOptions {
  /** The font for PNG text; default: DejaVu Sans at its usual paths (DEFAULT_FONT_FILES). */
  fontFile?: string
}

/**
 * Writes `<name>.vl.json` (the spec), `<name>.svg` and `<name>.png` for each chart into `dir` (created
 * if missing); returns the paths written, in order. The font is found before anything is written.
 */
export async function writeCharts (dir: string, specs: Record<string, VegaLiteSpec>, options: WriteChartsOptions = {}): Promise<string[]> {
  const font = findChartFont(options.fontFile)
  await mkdir(dir, { recursive: true })
  const written: string[] = []
  for (const [name, spec] of Object.entries(specs)) {
    const svg = await renderSvg(spec, name)
    const files: Array<[string, string | Uint8Array]> = [
      [`${name}.vl.json`, `${JSON.stringify(spec, null, 2)}\n`],
      [`${name}.svg`, svg],
      [`${name}.png`, svgToPng(svg, font)]
    ]
    for (const [file, data] of files) {
      const path = join(dir, file)
      await writeFile(path, data)
      written.push(path)
    }
  }
  return written
}
