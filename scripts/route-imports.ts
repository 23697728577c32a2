/**
 * Routes never touch SQL (design.md): ESLint fails a `*.routes.ts` that imports a repo, a table or a SQL fragment
 * by its path, but not one that takes a repo function from a module's index.ts, which may re-export it for other
 * modules' services (they run it inside their own transactions). Whether a name is one is known only by following
 * the index's re-exports to where the name is declared, which this does by reading the files' syntax: the
 * exports of a module are plain `export … from` lists, and a type checker over the whole tree would cost the
 * lint several seconds for the same answer.
 */
import path from 'node:path'
import ts from 'typescript'

/** A file's text, or undefined when there is none (a reader over the disk, or over a test's files). */
export type ReadSource = (file: string) => string | undefined

/** The file SQL is written in (design.md): a repo, a table, a fragment other repos compose. */
export const SQL_FILE = /\.(repo|table|sql)\.ts$/

/** Each file parsed once per reader (an index is read for every route that imports from it). */
const parsedBy = new WeakMap<ReadSource, Map<string, ts.SourceFile | null>>()

function parse(file: string, read: ReadSource): ts.SourceFile | undefined {
  let parsed = parsedBy.get(read)
  if (!parsed) parsedBy.set(read, (parsed = new Map()))
  if (!parsed.has(file)) {
    const text = read(file)
    parsed.set(file, text === undefined ? null : ts.createSourceFile(file, text, ts.ScriptTarget.Latest))
  }
  return parsed.get(file) ?? undefined
}

const relativeTarget = (from: string, spec: ts.Expression | undefined): string | undefined =>
  spec && ts.isStringLiteral(spec) && spec.text.startsWith('.')
    ? path.resolve(path.dirname(from), spec.text).replace(/\.js$/, '.ts')
    : undefined

const exported = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

/** Whether a statement declares `name` itself (a function, class, variable, enum). */
function declares(st: ts.Statement, name: string): boolean {
  if (ts.isVariableStatement(st))
    return st.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === name)
  if (ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isEnumDeclaration(st))
    return st.name?.text === name
  return false
}

/** Where `name`, as imported into `file` by a value import, comes from (undefined for a package or a type). */
function importedInto(src: ts.SourceFile, name: string, read: ReadSource, seen: Set<string>) {
  for (const st of src.statements) {
    if (!ts.isImportDeclaration(st) || st.importClause?.isTypeOnly) continue
    const bindings = st.importClause?.namedBindings
    const target = relativeTarget(src.fileName, st.moduleSpecifier)
    if (!bindings || !target) continue
    // `import * as name from './x.repo.js'`: the value is that file's namespace, declared by the file itself.
    if (ts.isNamespaceImport(bindings)) {
      if (bindings.name.text === name) return target
      continue
    }
    const el = bindings.elements.find((e) => e.name.text === name && !e.isTypeOnly)
    if (el) return definingFile(target, (el.propertyName ?? el.name).text, read, seen)
  }
  return undefined
}

/**
 * The file that declares the value `file` exports as `name`, following `export { a as b } from`, `export *
 * from`, and `export { a }` of an imported `a`. A namespace (`export * as name from`, or `import * as name`
 * exported) is declared by the file it names. Undefined for a type-only export, a package's, or one not found.
 */
export function definingFile(
  file: string,
  name: string,
  read: ReadSource,
  seen = new Set<string>(),
): string | undefined {
  const key = `${file}#${name}`
  if (seen.has(key)) return undefined
  seen.add(key)
  const src = parse(file, read)
  if (!src) return undefined
  const stars: string[] = []
  for (const st of src.statements) {
    if (ts.isExportDeclaration(st)) {
      if (st.isTypeOnly) continue
      const target = relativeTarget(file, st.moduleSpecifier)
      if (!st.exportClause) {
        if (target) stars.push(target)
        continue
      }
      // `export * as name from './x.repo.js'`: that file's namespace.
      if (ts.isNamespaceExport(st.exportClause)) {
        if (st.exportClause.name.text === name && target) return target
        continue
      }
      const el = st.exportClause.elements.find((e) => e.name.text === name && !e.isTypeOnly)
      if (!el) continue
      const local = (el.propertyName ?? el.name).text
      if (target) return definingFile(target, local, read, seen)
      if (st.moduleSpecifier) return undefined
      return importedInto(src, local, read, seen) ?? file
    }
    if (exported(st) && declares(st, name)) return file
  }
  for (const star of stars) {
    const found = definingFile(star, name, read, seen)
    if (found) return found
  }
  return undefined
}

/** The names a file reads off the namespace `ns` (`ns.name`, `ns['name']`), once each, in order. */
function membersUsed(src: ts.SourceFile, ns: string): string[] {
  const names = new Set<string>()
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === ns
    )
      names.add(node.name.text)
    if (
      ts.isElementAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === ns &&
      ts.isStringLiteralLike(node.argumentExpression)
    )
      names.add(node.argumentExpression.text)
    ts.forEachChild(node, visit)
  }
  visit(src)
  return [...names]
}

/**
 * Each value a routes file imports from a module's index.ts (its own or another's) that is declared in a SQL
 * file: `routes file: name (declared in file)`, paths relative to `modulesDir`.
 */
export function routesReachingSql(routesFiles: string[], modulesDir: string, read: ReadSource): string[] {
  const out: string[] = []
  for (const file of routesFiles) {
    const src = parse(file, read)
    if (!src) continue
    for (const st of src.statements) {
      if (!ts.isImportDeclaration(st) || st.importClause?.isTypeOnly) continue
      const target = relativeTarget(file, st.moduleSpecifier)
      const bindings = st.importClause?.namedBindings
      if (!target || path.basename(target) !== 'index.ts' || !bindings) continue
      const report = (imported: string, as: string) => {
        const declared = definingFile(target, imported, read)
        if (declared && SQL_FILE.test(declared)) {
          const rel = (f: string) => path.relative(modulesDir, f)
          out.push(`${rel(file)}: ${as} (declared in ${rel(declared)})`)
        }
      }
      // `import * as a from '../a/index.js'`: each `a.name` the file uses.
      if (ts.isNamespaceImport(bindings)) {
        const ns = bindings.name.text
        for (const member of membersUsed(src, ns)) report(member, `${ns}.${member}`)
        continue
      }
      for (const el of bindings.elements)
        if (!el.isTypeOnly) report((el.propertyName ?? el.name).text, el.name.text)
    }
  }
  return out
}
