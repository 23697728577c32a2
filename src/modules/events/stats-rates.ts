import type { Counters } from './counters.repo.js'

/**
 * `part` of `whole` in per cent, rounded half up to 2 decimals, 0 when `whole` is 0 (contract §5). Integer
 * arithmetic throughout, so 1/3 is 33.33 and 1/8 is 12.5 exactly, with no binary-fraction drift.
 */
export function percent(part: number, whole: number): number {
  if (whole <= 0) return 0
  return Math.floor((2 * part * 10_000 + whole) / (2 * whole)) / 100
}

/** inject − unique bounces; never below 0, whatever order rows were counted in. */
export const deliveryOf = (c: Counters) => Math.max(0, c.inject - c.bounce)

/** The counts and rates of contract §5 that campaign, transactional and double opt-in statistics share. */
export function ratedStats(c: Counters) {
  const delivery = deliveryOf(c)
  return {
    inject: c.inject,
    delivery,
    delivery_rate: percent(delivery, c.inject),
    open: c.open,
    total_open: c.total_open,
    open_rate: percent(c.open, delivery),
    click: c.click,
    total_click: c.total_click,
    click_rate: percent(c.click, delivery),
    bounce: c.bounce,
    bounce_rate: percent(c.bounce, c.inject),
    spam: c.spam,
    spam_rate: percent(c.spam, delivery),
    unsub: c.unsub,
    unsub_rate: percent(c.unsub, delivery),
  }
}
