import { parseJsonText } from './json-text.js'
import { noteBodyText } from './nul-characters.js'
import { textBodyParser } from './text-body.js'

/** The `application/json` body parser (any charset, any method, DELETE included). */
export const jsonBodyParser = textBodyParser((text, req) => {
  noteBodyText(req, text)
  const read = parseJsonText(text)
  if ('error' in read) return { refused: `The request body is ${read.error}.` }
  // A body of `[]` is PHP's json_encode of an empty array, which a PHP client sends for an update with nothing
  // in it: no route takes an array body, so it is the empty object it stands for (as EmptyArray is inside one).
  const parsed = read.value
  return { value: Array.isArray(parsed) && parsed.length === 0 ? {} : parsed }
})
