/**
 * The text of protocol/README.md, for vector tests that check the spec's worked examples against the
 * reference code: a test computes the example with the code and asserts the spec shows the same line,
 * so neither can change without the other.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** protocol/README.md, read once (tests run from dist/test/helpers/, three levels below the root). */
export const SPEC_TEXT: string = readFileSync(fileURLToPath(new URL('../../../protocol/README.md', import.meta.url)), 'utf8')

/** The spec's text from the heading that starts with `heading` up to the next heading of any level. */
export function specSection (heading: string): string {
  const lines = SPEC_TEXT.split('\n')
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '').startsWith(heading))
  if (start < 0) throw new Error(`protocol/README.md has no heading "${heading}"`)
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l))
  return lines.slice(start, end < 0 ? undefined : end).join('\n')
}
