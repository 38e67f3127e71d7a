/**
 * The Temporal activity context (heartbeats, cancellation), optional: outside a worker (CLI
 * preflight, the operator's in-process hand-back, tests) the activities work the same, minus
 * heartbeats and cancellation.
 */
import { CancelledFailure, Context } from '@temporalio/activity';

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

/**
 * The waits of a long-polling activity (`observeNode`, `waitClaimReleased`): heartbeats while it
 * runs ({@link startHeartbeats}), and waits that end at a time or as soon as the activity is
 * cancelled (Temporal delivers a cancellation with a heartbeat's answer, or when the worker shuts
 * down). Outside a Temporal activity: no heartbeats, no cancellation.
 */
export interface ActivityWaits {
  /**
   * Runs `wait` with an AbortSignal aborted at `atMs` (epoch ms) or on cancellation.
   * @throws what `wait` throws; else the cancellation (see {@link ActivityWaits.throwIfCancelled})
   *   when the activity was cancelled meanwhile.
   */
  until<T>(atMs: number, wait: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /**
   * @throws the cancellation once the activity was cancelled: the context's reason, else a
   *   `CancelledFailure` naming the activity.
   */
  throwIfCancelled(): void;
  /** Stops the heartbeats and the listeners: call it in a `finally`. */
  close(): void;
}

/**
 * Starts the {@link ActivityWaits} of the current activity.
 * @param label the activity and its subject, for the cancellation's message (e.g. `observeNode n1`).
 * @param timing when to heartbeat.
 */
export function activityWaits(label: string, timing: HeartbeatTiming): ActivityWaits {
  const ctx = activityContext();
  const cancel = ctx?.cancellationSignal;
  const stop = new AbortController();
  let failure: unknown;
  const onCancel = (): void => {
    failure ??= cancel?.reason ?? new CancelledFailure(`${label} cancelled`);
    stop.abort();
  };
  cancel?.addEventListener('abort', onCancel, { once: true });
  if (cancel?.aborted) onCancel();
  const stopHeartbeats = startHeartbeats(ctx, timing);
  const throwIfCancelled = (): void => {
    if (failure !== undefined) throw failure;
  };
  return {
    async until<T>(atMs: number, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
      const ac = new AbortController();
      const t = setTimeout(() => ac.abort(), Math.max(0, atMs - Date.now()));
      const onStop = (): void => ac.abort();
      stop.signal.addEventListener('abort', onStop, { once: true });
      let result: T;
      try {
        result = await wait(ac.signal);
      } finally {
        clearTimeout(t);
        stop.signal.removeEventListener('abort', onStop);
      }
      throwIfCancelled();
      return result;
    },
    throwIfCancelled,
    close() {
      stopHeartbeats();
      cancel?.removeEventListener('abort', onCancel);
      stop.abort();
    },
  };
}
