import juice from 'juice'

/**
 * Moves <style> rules onto the elements (mail clients drop <style> blocks); done once per template, before
 * merge tags are rendered per recipient. Media queries stay in a <style> block, where clients that know them
 * read them.
 */
export function inlineCss(html: string): string {
  if (!/<style[\s>]/i.test(html)) return html
  return juice(html, { preserveMediaQueries: true, removeStyleTags: true, applyWidthAttributes: true })
}
