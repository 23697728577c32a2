import type { Tx } from '../../core/db/client.js'
import { insertSignal, type NewSignal } from './signals.repo.js'

export { pseudonymiseSignals } from './signals.repo.js'
export { isSignalKind, listenedFor, setListener as setSignalListener } from './signal-listeners.repo.js'

export { signals, type SignalKind } from './signals.table.js'
export type { NewSignal } from './signals.repo.js'

/**
 * Records that something happened to a subscriber (a purchase, a tracker event) for the automation engine
 * to act on, when one of the account's automations listens for it; whether it was recorded. Takes the open
 * transaction of the change itself, never the bare database: the signal and the change commit together or
 * not at all, so a crash between them loses nothing and invents nothing.
 */
export function emitSignal(tx: Tx, signal: NewSignal): Promise<boolean> {
  return insertSignal(tx, signal)
}
