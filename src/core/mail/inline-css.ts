import { loadOnFirstUse } from '../load-on-first-use.js'

/**
 * juice, with cheerio, parse5, undici and web-resource-inliner (some 200 files), loads with the first template
 * that has a <style> block, not at start: it cost every process and signing thread 0.1-0.2 s of start-up and
 * its memory, most of which never inline a stylesheet.
 */
const juice = loadOnFirstUse<typeof import('juice')>('juice')

/** Loads juice now, ahead of the first template that needs it (a campaign being prepared). */
export const preloadInlineCss = (): void => void juice()

/**
 * Moves <style> rules onto the elements (mail clients drop <style> blocks); done once per template, before
 * merge tags are rendered per recipient. Media queries stay in a <style> block, where clients that know them
 * read them.
 */
export function inlineCss(html: string): string {
  if (!/<style[\s>]/i.test(html)) return html
  return juice()(html, { preserveMediaQueries: true, removeStyleTags: true, applyWidthAttributes: true })
}
