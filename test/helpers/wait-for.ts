/** Polls until check() holds; rejects after timeoutMs. Bounded: every loop of a test is (design.md, Tests). */
export async function waitFor(check: () => boolean, timeoutMs: number, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
