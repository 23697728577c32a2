import { fileURLToPath } from 'node:url'

// What a race run talks to and how long it runs (the env variables: scripts/race.ts).

/** The repository, whose dist/main.js the processes run. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const SECONDS = Number(process.env.RACE_SECONDS ?? 90)
export const LOOPS = Number(process.env.RACE_LOOPS ?? 24)
export const SETTLE_SECONDS = Number(process.env.RACE_SETTLE_SECONDS ?? 30)
export const BULK_CONCURRENCY = Number(process.env.RACE_BULK_CONCURRENCY ?? 0)
export const KEY = 'racekey-0123456789abcdef'
export const ADMIN_KEY = 'adminkey-0123456789abcdef'
export const PORT_ALL = 4101
export const PORT_API = 4102
export const PORT_WORKER = 4103
export const API_PORTS = [PORT_ALL, PORT_API]
export const DB = `race_${Date.now()}`
export const PG_HOST = '127.0.0.1'
export const PG_USER = process.env.RACE_PG_USER ?? 'postgres'
export const DATABASE_URL = `postgres://${PG_USER}@${PG_HOST}:5432/${DB}`
export const PUBLIC_URL = `http://127.0.0.1:${PORT_ALL}`
export const DOMAIN = 'race.example'
export const FROM = `news@${DOMAIN}`
export const REQUEST_TIMEOUT_MS = 30_000
