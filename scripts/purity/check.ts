/**
 * The purity and layering check (DESIGN §1), on the TypeScript compiler API, never on source text.
 *
 * One program over the pure folders (crypto/, protocol/, simulations/), with their tsconfig.json
 * (tsconfig.pure.json: ECMAScript lib only, no Node types, no DOM), so the whole import closure is
 * type-checked as pure code: a node: module, process.*, console.*, setTimeout, Buffer… do not compile,
 * wherever they hide (a re-export, a dynamic import, a barrel). On top of the compiler's errors it checks
 * what a type checker accepts but a deterministic program must not do: the wall clock (Date.now,
 * Date['now'], new Date(), Date(), DateTimeFormat#format()), Math.random, host escapes (globalThis,
 * eval, Function, import.meta), GC-dependent WeakRef/FinalizationRegistry, ambient declarations, the
 * dependency direction, packages off the allowlist and packages whose types pull in Node. Symbols are
 * resolved, so a local named `Date` is fine and an alias of the global is not.
 * node/ and bootstrap/ get the dependency-direction part (from the compiler's import scanner).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'
import { ALLOWED_LAYERS, HINTS, PURE_LAYERS, PURE_PACKAGES, type PurityRule } from './rules.js'

export interface PurityViolation {
  /** Path relative to the checked root (packages: from their node_modules/ on). */
  readonly file: string
  readonly line: number
  readonly column: number
  readonly rule: PurityRule
  readonly message: string
}

export interface PurityReport {
  readonly violations: PurityViolation[]
  /** Source files of the pure layers that were checked (relative paths). */
  readonly checked: string[]
}

const BUILTINS = new Set(builtinModules)
const NODE_MODULES = `${sep}node_modules${sep}`
const PURE_GLOBALS = join('scripts', 'purity', 'pure-globals.d.ts')

export function formatViolation (v: PurityViolation): string {
  return `${v.file}:${v.line}:${v.column} ${v.rule} ${v.message}\n    → ${HINTS[v.rule]}`
}

function packageName (specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] ?? specifier
}

/** The package a node_modules path belongs to, and its path from node_modules/ on. */
function packageFile (fileName: string): { name: string, shown: string } {
  const shown = fileName.slice(fileName.lastIndexOf(NODE_MODULES) + 1)
  return { name: packageName(shown.slice('node_modules/'.length)), shown }
}

function isBuiltin (specifier: string): boolean {
  return specifier.startsWith('node:') || BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0] ?? '')
}

class Collector {
  readonly violations: PurityViolation[] = []
  private readonly seen = new Set<string>()

  constructor (private readonly root: string) {}

  rel (fileName: string): string {
    return fileName.includes(NODE_MODULES) ? packageFile(fileName).shown : relative(this.root, fileName).split(sep).join('/')
  }

  add (sf: ts.SourceFile, pos: number, rule: PurityRule, message: string): void {
    const { line, character } = sf.getLineAndCharacterOfPosition(pos)
    const v = { file: this.rel(sf.fileName), line: line + 1, column: character + 1, rule, message }
    const key = `${v.file}:${v.line}:${v.column}:${rule}:${message}`
    if (this.seen.has(key)) return
    this.seen.add(key)
    this.violations.push(v)
  }
}

/** Every module specifier a file names: imports, re-exports, import(), import types, import = require. */
function moduleReferences (sf: ts.SourceFile): Array<{ node: ts.Node, specifier: string | undefined }> {
  const out: Array<{ node: ts.Node, specifier: string | undefined }> = []
  const literal = (e: ts.Node | undefined): string | undefined => e !== undefined && ts.isStringLiteralLike(e) ? e.text : undefined
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      out.push({ node, specifier: literal(node.moduleSpecifier) })
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      out.push({ node, specifier: literal(node.moduleReference.expression) })
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      out.push({ node, specifier: literal(node.arguments[0]) })
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      out.push({ node, specifier: literal(node.argument.literal) })
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return out
}

function layerOf (root: string, fileName: string): string | undefined {
  const path = relative(root, fileName)
  if (path.startsWith('..') || fileName.includes(NODE_MODULES)) return undefined
  return path.split(sep)[0]
}

const HOST_ESCAPES = new Set(['globalThis', 'eval', 'Function'])
const GC_DEPENDENT = new Set(['WeakRef', 'FinalizationRegistry'])
const DATE_STATICS_ALLOWED = new Set(['UTC', 'parse'])
/** Date methods that read or write the host's local time zone (their getUTC…/setUTC…/toISOString twins do not). */
const DATE_LOCAL_METHODS = new Set([
  'getFullYear', 'getYear', 'getMonth', 'getDate', 'getDay', 'getHours', 'getMinutes', 'getSeconds', 'getMilliseconds',
  'getTimezoneOffset', 'setFullYear', 'setYear', 'setMonth', 'setDate', 'setHours', 'setMinutes', 'setSeconds',
  'setMilliseconds', 'toString', 'toDateString', 'toTimeString'
])
const LOCALE_METHODS = new Set(['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString'])

/** The host-locale rule for one call or `new`: returns the message, or undefined when it is fine. */
function hostLocale (node: ts.CallExpression | ts.NewExpression, checker: ts.TypeChecker): string | undefined {
  const callee = node.expression
  const args = node.arguments ?? []
  if (!ts.isPropertyAccessExpression(callee)) return undefined
  const method = callee.name.text
  const receiver = checker.getTypeAtLocation(callee.expression).getSymbol()?.getName()
  if (ts.isCallExpression(node) && receiver === 'Date' && DATE_LOCAL_METHODS.has(method)) return `Date#${method}() uses the host's time zone`
  if (ts.isCallExpression(node) && LOCALE_METHODS.has(method) && args.length < (receiver === 'Date' ? 2 : 1)) {
    return `${method}() without ${receiver === 'Date' ? 'a locale and a timeZone' : 'a locale'} uses the host's`
  }
  if (ts.isCallExpression(node) && method === 'localeCompare' && args.length < 2) return 'localeCompare() without a locale uses the host\'s'
  if (ts.isIdentifier(callee.expression) && callee.expression.text === 'Intl') {
    const locale = args[0]
    if (locale === undefined || (ts.isIdentifier(locale) && locale.text === 'undefined')) return `Intl.${method} without a locale uses the host's`
    if (method === 'DateTimeFormat') {
      const options = args[1]
      const named = options !== undefined && ts.isObjectLiteralExpression(options) &&
        options.properties.some((p) => p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === 'timeZone')
      if (!named) return 'Intl.DateTimeFormat without a timeZone in its options literal uses the host\'s'
    }
  }
  return undefined
}

function accessedName (parent: ts.Node, id: ts.Identifier): string | null | undefined {
  if (ts.isPropertyAccessExpression(parent) && parent.expression === id) return parent.name.text
  if (ts.isElementAccessExpression(parent) && parent.expression === id) {
    return ts.isStringLiteralLike(parent.argumentExpression) ? parent.argumentExpression.text : null
  }
  return undefined // not a member access
}

/** The wall-clock, randomness and host-escape rules for one pure file. */
function checkApis (sf: ts.SourceFile, program: ts.Program, out: Collector): void {
  const checker = program.getTypeChecker()
  const isHostGlobal = (id: ts.Identifier): boolean => {
    const symbol = checker.getSymbolAtLocation(id)
    if (symbol === undefined) return false
    const declarations = symbol.declarations ?? []
    return declarations.every((d) => program.isSourceFileDefaultLibrary(d.getSourceFile()) || d.getSourceFile().fileName.endsWith(PURE_GLOBALS))
  }
  const visit = (node: ts.Node): void => {
    if (ts.isTypeNode(node) && !ts.isExpressionWithTypeArguments(node)) return // types read no clock
    if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
      out.add(sf, node.getStart(sf), 'HOST_ESCAPE', 'import.meta reads the host environment')
    }
    if (ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.DeclareKeyword) === true) {
      out.add(sf, node.getStart(sf), 'AMBIENT', 'an ambient declaration (declare …) in pure code')
    }
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) &&
        ['format', 'formatToParts'].includes(node.expression.name.text) && node.arguments.length === 0 &&
        checker.getTypeAtLocation(node.expression.expression).getSymbol()?.getName() === 'DateTimeFormat') {
      out.add(sf, node.getStart(sf), 'WALL_CLOCK', `DateTimeFormat#${node.expression.name.text}() with no date formats the current time`)
    }
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const message = hostLocale(node, checker)
      if (message !== undefined) out.add(sf, node.getStart(sf), 'HOST_LOCALE', message)
    }
    if (ts.isIdentifier(node)) checkIdentifier(node)
    ts.forEachChild(node, visit)
  }
  const checkIdentifier = (id: ts.Identifier): void => {
    const name = id.text
    if (name !== 'Date' && name !== 'Math' && !HOST_ESCAPES.has(name) && !GC_DEPENDENT.has(name)) return
    const parent = id.parent
    // a declaration's own name, or a property named Date/Math on some other object
    if (ts.isPropertyAccessExpression(parent) && parent.name === id) return
    if (!isHostGlobal(id)) return
    const at = id.getStart(sf)
    if (HOST_ESCAPES.has(name)) { out.add(sf, at, 'HOST_ESCAPE', `${name} reaches host globals around the type checker`); return }
    if (GC_DEPENDENT.has(name)) { out.add(sf, at, 'NONDETERMINISM', `${name} depends on the garbage collector`); return }
    const member = accessedName(parent, id)
    if (name === 'Math') {
      if (member === undefined) out.add(sf, at, 'RANDOM', 'Math used as a value (an alias could call Math.random)')
      else if (member === null) out.add(sf, at, 'RANDOM', 'computed member of Math (could be Math.random)')
      else if (member === 'random') out.add(sf, at, 'RANDOM', 'Math.random draws unseeded randomness')
      return
    }
    // Date
    if (member === null) { out.add(sf, at, 'WALL_CLOCK', 'computed member of Date (could be Date.now)'); return }
    if (member !== undefined) {
      if (!DATE_STATICS_ALLOWED.has(member)) out.add(sf, at, 'WALL_CLOCK', `Date.${member} ${member === 'now' ? 'reads the wall clock' : 'is not one of Date.UTC, Date.parse'}`)
      return
    }
    if (ts.isNewExpression(parent) && parent.expression === id) {
      const args = parent.arguments ?? []
      if (args.length === 0) out.add(sf, at, 'WALL_CLOCK', 'new Date() with no argument reads the wall clock')
      else if (args.some(ts.isSpreadElement)) out.add(sf, at, 'WALL_CLOCK', 'new Date(...spread) may have no argument and read the wall clock')
      return
    }
    if (ts.isCallExpression(parent) && parent.expression === id) { out.add(sf, at, 'WALL_CLOCK', 'Date() returns the current time'); return }
    if (ts.isBinaryExpression(parent) && parent.right === id && parent.operatorToken.kind === ts.SyntaxKind.InstanceOfKeyword) return
    out.add(sf, at, 'WALL_CLOCK', 'Date used as a value (an alias could call Date.now)')
  }
  visit(sf)
}

function checkImports (root: string, sf: ts.SourceFile, layer: string, options: ts.CompilerOptions, out: Collector, flagged: Set<string>, packages: Set<string>): void {
  for (const { node, specifier } of moduleReferences(sf)) {
    const at = node.getStart(sf)
    if (specifier === undefined) { out.add(sf, at, 'COMPUTED_IMPORT', 'an import whose specifier is not a string literal'); continue }
    const resolved = ts.resolveModuleName(specifier, sf.fileName, options, ts.sys).resolvedModule
    const mark = (): void => { flagged.add(`${sf.fileName}:${sf.getLineAndCharacterOfPosition(at).line}`) }
    if (resolved === undefined) {
      if (isBuiltin(specifier)) { out.add(sf, at, 'BUILTIN', `imports the Node built-in '${specifier}'`); mark() }
      else if (!specifier.startsWith('.') && !PURE_PACKAGES.includes(packageName(specifier))) {
        out.add(sf, at, 'PACKAGE', `imports '${specifier}', not a vetted pure package`); mark()
      }
      continue
    }
    if (resolved.isExternalLibraryImport === true || resolved.resolvedFileName.includes(NODE_MODULES)) {
      packages.add(packageName(specifier))
      if (!PURE_PACKAGES.includes(packageName(specifier))) out.add(sf, at, 'PACKAGE', `imports '${specifier}', not a vetted pure package`)
      continue
    }
    const target = layerOf(root, resolved.resolvedFileName)
    if (target === undefined || !(ALLOWED_LAYERS[layer] ?? []).includes(target)) {
      out.add(sf, at, 'LAYER', `${layer}/ must not import ${target ?? '(outside the tree)'}/ ('${specifier}' → ${out.rel(resolved.resolvedFileName)})`)
    }
  }
}

/**
 * Packages and files in the closure whose types need Node or the DOM. Only the packages pure files import
 * are scanned (what they pull in, e.g. all of @types/node, is that one package's fault); if Node's types
 * got in some other way, that is reported once.
 */
function checkTypeEnvironment (program: ts.Program, imported: Set<string>, out: Collector): void {
  let found = false
  let nodeTypes: ts.SourceFile | undefined
  for (const sf of program.getSourceFiles()) {
    if (program.isSourceFileDefaultLibrary(sf)) continue
    if (sf.fileName.includes(`${NODE_MODULES}@types${sep}`)) {
      if (sf.fileName.includes(`${NODE_MODULES}@types${sep}node${sep}`)) nodeTypes ??= sf
      continue
    }
    const inPackage = sf.fileName.includes(NODE_MODULES)
    if (inPackage && !imported.has(packageFile(sf.fileName).name)) continue
    const add = (pos: number, message: string): void => { found = true; out.add(sf, pos, 'NODE_TYPES', message) }
    for (const ref of sf.typeReferenceDirectives) {
      if (ref.fileName === 'node') add(ref.pos, `${where(sf)} references the Node types (/// <reference types="node" />)`)
    }
    for (const ref of sf.libReferenceDirectives) {
      const lib = ref.fileName.toLowerCase()
      if (lib.startsWith('dom') || lib.startsWith('webworker') || lib === 'scripthost') add(ref.pos, `${where(sf)} pulls in the ${ref.fileName} lib`)
    }
    if (inPackage && sf.isDeclarationFile) {
      for (const file of ts.preProcessFile(sf.text, true, true).importedFiles) {
        if (isBuiltin(file.fileName)) add(file.pos, `${where(sf)} imports types from the Node built-in '${file.fileName}'`)
      }
    }
  }
  if (!found && nodeTypes !== undefined) out.add(nodeTypes, 0, 'NODE_TYPES', '@types/node is in the pure program (check each package the pure folders import)')
}

function where (sf: ts.SourceFile): string {
  return sf.fileName.includes(NODE_MODULES) ? `package ${packageFile(sf.fileName).name}` : 'this file'
}

/** Check the pure layers under `root` (each folder that exists must have its tsconfig.json). */
export function checkPurity (root: string): PurityReport {
  root = resolve(root)
  const out = new Collector(root)
  const rootNames = new Set<string>()
  let options: ts.CompilerOptions | undefined
  for (const layer of PURE_LAYERS) {
    const dir = join(root, layer)
    if (!existsSync(dir)) continue
    const configPath = join(dir, 'tsconfig.json')
    const configFile = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p))
    if (configFile.error !== undefined) {
      out.violations.push({ file: `${layer}/tsconfig.json`, line: 1, column: 1, rule: 'COMPILE', message: `${layer}/ is a pure folder and needs a tsconfig.json extending ../tsconfig.pure.json` })
      continue
    }
    const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, dir, undefined, configPath)
    for (const d of parsed.errors) {
      out.violations.push({ file: `${layer}/tsconfig.json`, line: 1, column: 1, rule: 'COMPILE', message: ts.flattenDiagnosticMessageText(d.messageText, '\n') })
    }
    for (const f of parsed.fileNames) rootNames.add(resolve(f))
    options ??= parsed.options
  }
  if (options === undefined) return { violations: out.violations, checked: [] }
  const program = ts.createProgram({ rootNames: [...rootNames], options })
  const flagged = new Set<string>()
  const packages = new Set<string>()
  const checked: string[] = []
  for (const sf of program.getSourceFiles()) {
    const layer = layerOf(root, sf.fileName)
    if (layer === undefined || !(PURE_LAYERS as readonly string[]).includes(layer) || sf.fileName.endsWith(PURE_GLOBALS)) continue
    checked.push(out.rel(sf.fileName))
    checkImports(root, sf, layer, options, out, flagged, packages)
    checkApis(sf, program, out)
  }
  checkTypeEnvironment(program, packages, out)
  for (const d of ts.getPreEmitDiagnostics(program)) {
    if (d.category !== ts.DiagnosticCategory.Error) continue
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    if (d.file === undefined) { out.violations.push({ file: '(program)', line: 1, column: 1, rule: 'COMPILE', message: text }); continue }
    const layer = layerOf(root, d.file.fileName)
    // errors inside node/ files reached by a LAYER violation are that violation's consequence
    if (layer === undefined || !(PURE_LAYERS as readonly string[]).includes(layer)) continue
    const line = d.file.getLineAndCharacterOfPosition(d.start ?? 0).line
    if ((d.code === 2307 || d.code === 2792) && flagged.has(`${d.file.fileName}:${line}`)) continue
    // the compiler's advice ("install @types/node", "include 'dom'") is the wrong fix here
    const advice = text.search(/ Do you need to | Try changing the 'lib'/)
    const message = advice === -1 ? text : `${text.slice(0, advice)} (a host global: not available to pure code)`
    out.add(d.file, d.start ?? 0, 'COMPILE', `TS${d.code}: ${message}`)
  }
  return { violations: out.violations, checked: checked.sort() }
}

function tsFiles (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
}

/** The dependency direction for the impure layers with rules (node/, bootstrap/), from the compiler's import scanner. */
export function checkLayering (root: string): PurityViolation[] {
  root = resolve(root)
  const out = new Collector(root)
  for (const layer of Object.keys(ALLOWED_LAYERS).filter((l) => !(PURE_LAYERS as readonly string[]).includes(l))) {
    for (const file of tsFiles(join(root, layer))) {
      const text = readFileSync(file, 'utf8')
      const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false)
      for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
        if (!imported.fileName.startsWith('.')) continue
        const target = layerOf(root, resolve(dirname(file), imported.fileName))
        if (target !== undefined && !(ALLOWED_LAYERS[layer] ?? []).includes(target)) {
          out.add(sf, imported.pos, 'LAYER', `${layer}/ must not import ${target}/ ('${imported.fileName}')`)
        }
      }
    }
  }
  return out.violations
}
