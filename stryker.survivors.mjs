// A Stryker reporter ("survivors"): every survived or uncovered mutant, by file, to survivors.txt beside the
// JSON report, one block each (where, mutator, the original line, the replacement), so a run's gaps can be
// read and triaged without the HTML report.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { PluginKind, commonTokens, declareClassPlugin } from '@stryker-mutator/api/plugin'

const LEFT = new Set(['Survived', 'NoCoverage'])

class SurvivorsReporter {
  static inject = [commonTokens.options]

  constructor (options) {
    this.dir = dirname(options.jsonReporter?.fileName ?? 'reports/mutation/mutation.json')
  }

  onMutationTestReportReady (report) {
    const out = []
    let count = 0
    for (const [file, result] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
      const lines = result.source.split('\n')
      const left = result.mutants.filter((m) => LEFT.has(m.status))
        .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)
      if (left.length === 0) continue
      out.push(`== ${file}: ${left.length} of ${result.mutants.length} mutants left`)
      for (const m of left) {
        const { line, column } = m.location.start
        out.push(`${file}:${line}:${column} ${m.status} ${m.mutatorName}`)
        out.push(`  - ${(lines[line - 1] ?? '').trim()}`)
        out.push(`  + ${(m.replacement ?? '').split('\n').join('\n    ')}`)
      }
      out.push('')
      count += left.length
    }
    mkdirSync(this.dir, { recursive: true })
    writeFileSync(join(this.dir, 'survivors.txt'), `${count} mutants survived or had no coverage\n\n${out.join('\n')}\n`)
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'survivors', SurvivorsReporter)]
