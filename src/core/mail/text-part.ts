import { compile } from 'html-to-text'

// Compiled once: campaign sending derives a text part per message when a template has none.
const convert = compile({
  wordwrap: 78,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true, linkBrackets: ['(', ')'] } },
    { selector: 'h1', options: { uppercase: false } },
    { selector: 'h2', options: { uppercase: false } },
    { selector: 'h3', options: { uppercase: false } },
    { selector: 'table', format: 'dataTable' },
  ],
})

/** The text/plain alternative of an HTML mail. */
export function htmlToTextPart(html: string): string {
  return convert(html).trim()
}
