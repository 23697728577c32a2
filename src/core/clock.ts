/** Time source; tests inject a controllable one so waits never need real sleeping. */
export interface Clock {
  now(): Date
}

/** Milliseconds in a day of UTC, which has no daylight saving: the unit of day-long windows and waits. */
export const DAY_MS = 86_400_000

export const systemClock: Clock = { now: () => new Date() }

export class ManualClock implements Clock {
  constructor(private current = new Date()) {}
  now(): Date {
    return new Date(this.current)
  }
  set(date: Date): void {
    this.current = new Date(date)
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms)
  }
}
