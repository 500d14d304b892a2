/** The chart renderer's errors (cli/sim-charts.ts), apart from it so the CLI can name them without loading vega and resvg. */
/** No font file to draw the charts' text with. */
export class ChartFontError extends Error {
  readonly code = 'NO_CHART_FONT'
  constructor (readonly tried: readonly string[]) {
    super(`no font to draw chart text with (tried ${tried.join(', ')}): install fonts-dejavu-core, or pass a .ttf/.otf file`)
    this.name = 'ChartFontError'
  }
}

/** A chart spec vega-lite or vega refused. */
export class ChartSpecError extends Error {
  readonly code = 'BAD_CHART_SPEC'
  constructor (readonly chart: string, cause: unknown) {
    super(`chart ${chart}: ${cause instanceof Error ? cause.message : String(cause)}`)
    this.name = 'ChartSpecError'
  }
}
