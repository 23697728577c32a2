/**
 * `npm run build` (run by `npm start` first): compiles src/ to plain JavaScript in dist/, one file per source
 * file, so production runs `node dist/main.js` without a TypeScript loader. tsx costs memory in every thread that
 * runs it (a loader thread with its own V8 heap, the transpiled sources and their source maps): about 75 MB in the
 * main process and 15 MB in each signing thread (README, Memory). Tests keep running the sources through tsx.
 *
 * dist/ mirrors src/ (dist/core/context.js beside dist/modules/...), so paths computed from import.meta.url, such
 * as the migrations folder two levels up, hold in both. A file is written only when its content changed, by a
 * rename: two processes started at once from one folder (ROLE=api and ROLE=worker) never see a half-written file,
 * and a server already running keeps loading a consistent tree.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

// Not import.meta.dirname: on a Node.js older than 20.11 the build still runs, and dist/main.js then says why it
// cannot (src/core/node-version.ts).
const root = fileURLToPath(new URL('..', import.meta.url))
export const SRC_DIR = path.join(root, 'src')
export const DIST_DIR = path.join(root, 'dist')

/** Tests and their helpers stay TypeScript: they only ever run through tsx. */
function isSource(file: string): boolean {
  return file.endsWith('.ts') && !file.endsWith('.d.ts') && !/\.test(-helpers)?\.ts$/.test(file)
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return sourceFiles(p)
    return isSource(p) ? [p] : []
  })
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? filesUnder(p) : [p]
  })
}

/** Writes through a temporary file and a rename, and only when the content differs. */
function writeIfChanged(file: string, contents: Uint8Array): boolean {
  try {
    if (Buffer.from(contents).equals(fs.readFileSync(file))) return false
  } catch {
    // not there yet
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, contents)
  fs.renameSync(tmp, file)
  return true
}

/** Compiles src/ into dist/; returns how many files it wrote and removed. */
export async function buildDist(): Promise<{ written: number; removed: number; files: number }> {
  const result = await build({
    entryPoints: sourceFiles(SRC_DIR),
    outdir: DIST_DIR,
    outbase: SRC_DIR,
    // One output file per source file, imports left as they are ('./x.js' already names the compiled file).
    bundle: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Linked maps cost nothing at run time; NODE_OPTIONS=--enable-source-maps turns stack traces back to src/.
    sourcemap: 'linked',
    write: false,
    logLevel: 'warning',
  })
  let written = 0
  const wanted = new Set<string>()
  for (const out of result.outputFiles) {
    wanted.add(out.path)
    if (writeIfChanged(out.path, out.contents)) written++
  }
  // A source file deleted or renamed since the last build leaves nothing behind to be imported by mistake.
  let removed = 0
  for (const file of filesUnder(DIST_DIR)) {
    if (wanted.has(file) || file.endsWith('.tmp')) continue
    fs.rmSync(file, { force: true })
    removed++
  }
  return { written, removed, files: result.outputFiles.length }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { written, removed, files } = await buildDist()
  if (written || removed)
    process.stderr.write(`build: ${files} files in dist/, ${written} written, ${removed} removed\n`)
}
