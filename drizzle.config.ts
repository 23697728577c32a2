import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: ['./src/core/db/*.table.ts', './src/modules/*/*.table.ts'],
  out: './migrations',
})
