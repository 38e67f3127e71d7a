/**
 * The Temporal activity context (heartbeats, cancellation), optional: outside a worker (CLI
 * preflight, the operator's in-process hand-back, tests) the activities work the same, minus
 * heartbeats and cancellation.
 */
import { Context } from '@temporalio/activity';

/** The current activity context, or `undefined` when not running inside a Temporal activity. */
export function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** When a running activity heartbeats ({@link startHeartbeats}), ms. */
export interface HeartbeatTiming {
  /** Delay of the first heartbeat after the start. */
  firstAfterMs: number;
  /** Time between later heartbeats. */
  intervalMs: number;
}

/**
 * Heartbeats the activity of `ctx`: the first after `firstAfterMs`, then every `intervalMs`, until
 * the returned function is called (call it in a `finally`). Nothing when `ctx` is undefined.
 *
 * Why the first one waits: the Temporal worker sends an activity's first heartbeat to the server at
 * once and later ones at most once per throttle interval (80% of the heartbeat timeout). Each one
 * sent is a RecordActivityTaskHeartbeat call that updates the workflow's state on the server; an
 * activity that ends before its first heartbeat sends none. Heartbeats are needed only to keep the
 * activity's heartbeat timeout from firing and to learn of a cancellation (Temporal delivers it
 * with a heartbeat's answer), so a call that answers within `firstAfterMs` needs none. With Temporal
 * Cloud every heartbeat sent is also a billable Action. Measured on the local stack: 20 activities
 * of 300 ms that heartbeat at once sent 20 heartbeat calls, with the first after 1 s none; in the
 * `fleet` benchmark 1,248-1,270 heartbeat calls for about 810 evicted pods (one per activity),
 * 20-33 with the first heartbeat waiting.
 *
 * The first heartbeat never comes later than half the activity's heartbeat timeout
 * (`ctx.info.heartbeatTimeoutMs`), so a slow activity is not timed out.
 */
export function startHeartbeats(ctx: Context | undefined, timing: HeartbeatTiming): () => void {
  if (!ctx) return () => undefined;
  const timeoutMs = ctx.info.heartbeatTimeoutMs;
  const firstMs = timeoutMs ? Math.min(timing.firstAfterMs, timeoutMs / 2) : timing.firstAfterMs;
  let every: ReturnType<typeof setInterval> | undefined;
  const first = setTimeout(() => {
    ctx.heartbeat();
    every = setInterval(() => ctx.heartbeat(), timing.intervalMs);
  }, firstMs);
  return () => {
    clearTimeout(first);
    clearInterval(every);
  };
}
