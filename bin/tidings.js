#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx: its commands are short and need no build step to forget.
// `npm start` runs the compiled dist/main.js instead, which a long-running server wants for its memory (README,
// Memory); `tidings serve` is the same server through tsx, about 75 MB larger.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli.ts')
