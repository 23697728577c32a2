/** The page a confirm link ends on when the list has no sub_confirmed_page: static, so it reveals nothing. */
export const CONFIRMED_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Subscription confirmed</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style>
</head>
<body>
<h1>Your subscription is confirmed</h1>
<p>Thank you. You will now receive our mail; every message has a link to unsubscribe.</p>
</body>
</html>
`
