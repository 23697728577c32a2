import { loadOnFirstUse, onFirstUse } from '../load-on-first-use.js'

const htmlToText = loadOnFirstUse<typeof import('html-to-text')>('html-to-text')

/**
 * Compiled once, on first use: campaign sending derives a text part per message when a template has none. Loaded
 * then too: html-to-text and its HTML parser are some 70 files that a process answering API calls, and most test
 * files, never need.
 */
const convert = onFirstUse(() =>
  htmlToText().compile({
    // 75, not the usual 78: quoted-printable (quoted-printable.ts) soft-breaks a line longer than 75, and at 78
    // every wrapped line of 76-78 characters came out cut mid-word in the raw source (`collectio=` / `n,`),
    // three bytes more each and odd to read in a message's source.
    wordwrap: 75,
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

/** Loads html-to-text now, ahead of the first mail that needs it (a signing thread warming up). */
export const preloadTextPart = (): void => void convert()

/** The text/plain alternative of an HTML mail. */
export function htmlToTextPart(html: string): string {
  return convert()(html).trim()
}
