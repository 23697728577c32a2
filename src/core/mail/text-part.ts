import { loadOnFirstUse, onFirstUse } from '../load-on-first-use.js'

const htmlToText = loadOnFirstUse<typeof import('html-to-text')>('html-to-text')

/**
 * Compiled once, on first use: campaign sending derives a text part per message when a template has none. Loaded
 * then too: html-to-text and its HTML parser are some 70 files that a process answering API calls, and most test
 * files, never need.
 */
const convert = onFirstUse(() =>
  htmlToText().compile({
    wordwrap: 78,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true, linkBrackets: ['(', ')'] } },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable' },
    ],
  }),
)

/** The text/plain alternative of an HTML mail. */
export function htmlToTextPart(html: string): string {
  return convert()(html).trim()
}
