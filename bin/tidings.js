#!/usr/bin/env node
// The CLI is TypeScript run through tsx, like `npm start`; no build step to forget.
import { register } from 'tsx/esm/api'

register()
await import('../src/cli.ts')
