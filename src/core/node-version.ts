/**
 * The oldest Node.js the code runs on: `import.meta.dirname` came in 20.11. Entry points (`npm start`, the
 * CLI, `npm test`) import this module first, so an older Node stops here with a message that says why,
 * instead of failing later inside some module with "path must be a string".
 */
export const MIN_NODE = '20.11.0'

/** Whether `version` (as in process.versions.node) is older than MIN_NODE. */
export function nodeTooOld(version: string): boolean {
  const have = version.split('.').map(Number)
  const need = MIN_NODE.split('.').map(Number)
  for (let i = 0; i < need.length; i++) {
    const h = have[i] ?? 0
    const n = need[i]!
    if (h !== n) return h < n
  }
  return false
}

if (nodeTooOld(process.versions.node)) {
  process.stderr.write(
    `Tidings needs Node.js ${MIN_NODE} or newer; this is Node.js ${process.versions.node}.\n`,
  )
  process.exit(1)
}
