/**
 * Waiting for one named object to reach a state: list (the truth), then watch from the list's
 * resourceVersion; any end of the watch (server timeout, `ERROR` event such as 410 Gone, dropped
 * connection) re-lists, so no change is missed. The Kubernetes client-go pattern
 * (`cache.ListWatch` / `watchtools.UntilWithSync`) reduced to one object.
 */
import type { Watch } from '@kubernetes/client-node';
import { CancelledFailure } from '@temporalio/common';
import type { Logger } from 'pino';
import { TransientKubernetesError, classifyError } from './errors.js';

/** Server-side timeout of one watch request, in seconds; the wait then re-lists and re-watches. */
export const WATCH_TIMEOUT_SECONDS = 60;

/** Minimal shape of the objects a wait evaluates (typed client objects and raw watch JSON alike). */
export interface WatchedObject {
  metadata?: { uid?: string; generation?: number; resourceVersion?: string };
  status?: { observedGeneration?: number; disruptionsAllowed?: number };
}

/** When a wait is over: the caller's rule, independent of how the object is read. */
export interface WaitCondition<R> {
  /** The result when the wait is over for this state (`undefined`: the object is absent), `undefined` to keep waiting. */
  evaluate(item: WatchedObject | undefined): R | undefined;
  /** The result when `timeoutSeconds` passed. */
  onTimeout(): R;
  /** Longest wait, seconds. */
  timeoutSeconds: number;
}

/** Heartbeats and cancellation of a wait (a Temporal activity's, or none). */
export interface WaitControl {
  /** Aborts the wait; its `reason` is thrown (a `CancelledFailure` when it has none). */
  signal?: AbortSignal | undefined;
  /** Called at once and every `heartbeatIntervalMs` while waiting. */
  heartbeat?: (() => void) | undefined;
  /** Interval of `heartbeat`, ms. */
  heartbeatIntervalMs: number;
}

/** What {@link waitForObject} needs to follow one named object. */
export interface WaitSpec<R> extends WaitCondition<R> {
  /** For logs and errors, e.g. `pod ns/name`. */
  what: string;
  /** Collection path to watch, e.g. `/api/v1/namespaces/ns/pods`. */
  collectionPath: string;
  /** metadata.name of the object. */
  name: string;
  /** Reads the object: its current state (undefined when absent) and the list's resourceVersion to watch from. */
  list(): Promise<{ item: WatchedObject | undefined; resourceVersion: string | undefined }>;
}

/** A promise resolved after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Follows one object until `spec.evaluate` says the wait is over, `spec.timeoutSeconds` pass or
 * `control.signal` aborts: list, then watch (`fieldSelector metadata.name=<name>`, bookmarks,
 * {@link WATCH_TIMEOUT_SECONDS}) from the list's resourceVersion; a watch that ends re-lists after a
 * pause. A list that fails transiently is retried after 0.5 s, doubling up to 5 s.
 *
 * @throws the signal's reason (a `CancelledFailure` when it has none) when aborted;
 *   a {@link PermanentKubernetesError} when the list is refused with a 4xx.
 */
export async function waitForObject<R>(
  watcher: Watch,
  log: Logger,
  spec: WaitSpec<R>,
  control: WaitControl,
): Promise<R> {
  const cancel = control.signal;
  const stop = new AbortController();
  const deadline = Date.now() + Math.max(0, spec.timeoutSeconds) * 1000;
  let result: { value: R } | undefined;
  let failure: unknown;
  const settle = (value: R): void => {
    if (result === undefined && failure === undefined) result = { value };
    stop.abort();
  };
  const onCancel = (): void => {
    failure ??= cancel?.reason ?? new CancelledFailure(`wait for ${spec.what} cancelled`);
    stop.abort();
  };
  cancel?.addEventListener('abort', onCancel, { once: true });
  if (cancel?.aborted) onCancel();
  const beat = setInterval(() => control.heartbeat?.(), control.heartbeatIntervalMs);
  const timer = setTimeout(() => settle(spec.onTimeout()), Math.max(0, deadline - Date.now()));
  control.heartbeat?.();
  let retryDelayMs = 500;
  try {
    while (!stop.signal.aborted) {
      let listed: Awaited<ReturnType<WaitSpec<R>['list']>>;
      try {
        listed = await spec.list();
      } catch (err) {
        const e = classifyError(err, `get ${spec.what}`);
        if (!(e instanceof TransientKubernetesError)) throw e;
        log.warn({ err: e.message }, `wait: list of ${spec.what} failed, retrying`);
        await pause(retryDelayMs, stop.signal);
        retryDelayMs = Math.min(retryDelayMs * 2, 5000);
        continue;
      }
      const now = spec.evaluate(listed.item);
      if (now !== undefined) {
        settle(now);
        break;
      }
      // Watch from the list's resourceVersion until the stream ends, then loop to re-list.
      await new Promise<void>((resolve) => {
        let controller: AbortController | undefined;
        const end = (): void => {
          stop.signal.removeEventListener('abort', end);
          controller?.abort();
          resolve();
        };
        stop.signal.addEventListener('abort', end, { once: true });
        watcher
          .watch(
            spec.collectionPath,
            {
              fieldSelector: `metadata.name=${spec.name}`,
              resourceVersion: listed.resourceVersion,
              allowWatchBookmarks: true,
              timeoutSeconds: WATCH_TIMEOUT_SECONDS,
            },
            (type: string, obj: WatchedObject) => {
              if (type === 'ERROR') return end(); // e.g. 410 Gone: re-list
              if (type === 'BOOKMARK') return;
              const value = spec.evaluate(type === 'DELETED' ? undefined : obj);
              if (value !== undefined) settle(value);
            },
            (err: unknown) => {
              if (err && !stop.signal.aborted) {
                log.debug({ err: String(err) }, `wait: watch of ${spec.what} ended, re-listing`);
              }
              end();
            },
          )
          .then(
            (c) => {
              controller = c;
              if (stop.signal.aborted) c.abort();
            },
            () => end(),
          );
      });
      if (!stop.signal.aborted) await pause(retryDelayMs, stop.signal);
    }
  } finally {
    clearInterval(beat);
    clearTimeout(timer);
    cancel?.removeEventListener('abort', onCancel);
    stop.abort();
  }
  if (failure !== undefined) throw failure;
  if (result === undefined)
    throw new TransientKubernetesError(`wait for ${spec.what} ended without a result`);
  return result.value;
}
