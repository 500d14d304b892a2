/**
 * Build step: tsc compiles only TypeScript, so copy the dashboard's static files (node/api/dashboard/: HTML,
 * CSS, plain JS) to dist/node/api/dashboard/, where the daemon serves them from (node/api/dashboard-assets.ts).
 * Run from the repository root after tsc (package.json `build`); the old copy is replaced, not merged.
 */
import { cpSync, rmSync } from 'node:fs'

const from = 'node/api/dashboard'
const to = 'dist/node/api/dashboard'
rmSync(to, { recursive: true, force: true })
cpSync(from, to, { recursive: true })
