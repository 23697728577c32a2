import { escapeHtml } from '../../core/mail/merge-tags.js'

/** What the open pixel answers: a 1×1 GIF89a of 42 bytes whose only pixel is the transparent colour. */
export const TRANSPARENT_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
)

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
button{font:inherit;padding:.5rem 1.25rem;cursor:pointer}</style>
</head>
<body>
${body}
</body>
</html>
`
}

/**
 * The page an unsubscribe link opens. Opening it changes nothing (link scanners open every link); the button
 * posts the same one-click body a mail client sends, and `from=page`, which only a person pressing it sends (a
 * list's unsub_page is where that person goes next). The form has no action, so it posts to the URL the page
 * was served from, whatever prefix PUBLIC_URL carries.
 */
export function unsubscribeFormPage(email: string): string {
  return page(
    'Unsubscribe',
    `<h1>Unsubscribe</h1>
<p>The address <strong>${escapeHtml(email)}</strong> will receive no more of this mail.</p>
<form method="post">
<input type="hidden" name="List-Unsubscribe" value="One-Click">
<input type="hidden" name="from" value="page">
<button type="submit">Unsubscribe</button>
</form>`,
  )
}

/** Static, so a repeated or scripted POST learns nothing beyond "done". */
export const UNSUBSCRIBED_PAGE_HTML = page(
  'Unsubscribed',
  `<h1>You have been unsubscribed</h1>
<p>You will receive no more of this mail.</p>`,
)
