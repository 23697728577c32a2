import { queueOptionsSymbol } from 'piscina'
import type { TaskQueue } from 'piscina'

/** A queued task as piscina hands it over (its own type is not exported). */
type Task = Parameters<TaskQueue['push']>[0]

/** What a task tells the signing queue besides its content (piscina hands it over under queueOptionsSymbol). */
export interface SignQueueOptions {
  /** Taken before every task queued without it: mail a person is waiting for. */
  ahead: boolean
}

const isAhead = (task: Task) => (task[queueOptionsSymbol] as Partial<SignQueueOptions> | null)?.ahead

/**
 * The signing threads' queue: tasks marked `ahead` first, in the order they came, then the others in theirs.
 *
 * Beside a campaign, piscina's first-in-first-out queue held a shop's order confirmation behind the campaign tasks
 * already waiting (both lanes' batches, up to ten tasks of 50 messages), about a batch's signing time. The lanes
 * still bound how much body mail goes ahead: each hands over at most one body batch before its next campaign
 * batch, so the campaign keeps its share.
 */
export class AheadFirstQueue implements TaskQueue {
  private readonly ahead: Task[] = []
  private readonly rest: Task[] = []

  get size(): number {
    return this.ahead.length + this.rest.length
  }

  /**
   * Also how piscina gives back a task it could not hand to a thread (without `stricterFIFO`, which the signer
   * does not set, it never calls an `unshift`): such a task may come after others of its kind.
   */
  push(task: Task): void {
    ;(isAhead(task) ? this.ahead : this.rest).push(task)
  }

  shift(): Task | null {
    return this.ahead.shift() ?? this.rest.shift() ?? null
  }

  remove(task: Task): void {
    for (const list of [this.ahead, this.rest]) {
      const i = list.indexOf(task)
      if (i >= 0) {
        list.splice(i, 1)
        return
      }
    }
  }
}

/** `task` marked for the queue (a copy: the caller's object is left as it was). */
export function queuedAs<T extends object>(task: T, options: SignQueueOptions): T {
  return { ...task, [queueOptionsSymbol]: options }
}
