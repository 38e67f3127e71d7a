/**
 * A workflow's alarm clock: durable timers that wake a loop at or before a given time, started only
 * when no earlier timer is already pending. A loop that waits with `condition(fn, timeout)` starts
 * (and cancels) one timer per iteration, two history events each time; this one starts a timer
 * only when the wake time moves earlier, so a loop woken by many signals or activity results adds
 * no timer events for them.
 *
 * Deterministic: only `@temporalio/workflow` timers and the workflow clock.
 */
import { condition, sleep } from '@temporalio/workflow';

/** See the module comment. */
export class WakeTimer {
  /** Wake times (ms since epoch) with a timer running. */
  private readonly pending = new Set<number>();
  /** Set when a timer fired; the loop clears it when it wakes. */
  fired = false;

  /**
   * Makes sure the loop is woken at or before `atMs` (ms since epoch); at once when it has passed.
   * `summary` says why the loop wakes then (src/drain/summaries.ts): the timer started, if one is,
   * carries it (the Temporal UI shows it beside the timer).
   */
  ensure(atMs: number, summary: string): void {
    const now = Date.now();
    if (atMs <= now) {
      this.fired = true;
      return;
    }
    for (const t of this.pending) if (t <= atMs) return;
    this.pending.add(atMs);
    sleep(atMs - now, { summary }).then(
      () => {
        this.pending.delete(atMs);
        this.fired = true;
      },
      // Cancelled with the workflow: nothing to wake any more.
      () => this.pending.delete(atMs),
    );
  }
}

/**
 * `condition(fn)` bounded by a timer that fires at `untilMs` (ms since epoch; at least 1 ms from
 * now) when given and finite; the timer carries `summary(untilMs)`. Without a bound, no timer. The
 * same commands as `condition(fn, timeout)`, with the timer's summary added.
 * @returns whether `fn` held before the timer fired (true without a bound).
 */
export async function conditionUntil(
  fn: () => boolean,
  untilMs: number | undefined,
  summary: (atMs: number) => string,
): Promise<boolean> {
  if (untilMs === undefined || untilMs === Infinity) {
    await condition(fn);
    return true;
  }
  return condition(fn, Math.max(1, untilMs - Date.now()), { summary: summary(untilMs) });
}
