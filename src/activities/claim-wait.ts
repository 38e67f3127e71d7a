/**
 * The `waitClaimReleased` activity ({@link DrainActivities.waitClaimReleased}): a node workflow whose
 * node is held by another plan waits here for that plan to let go, so it tries to claim the node as
 * soon as it is handed back instead of at its next backoff try (up to `retryBackoff.maxSeconds`
 * later).
 *
 * It reads the Node from the worker-wide {@link WatchCache} that `observeNode` reads (one
 * cluster-wide Node informer: list, then watch), so a waiting node costs no API call of its own;
 * acquiring the node also starts the node's Pod informer, which its drain reuses once it claims the
 * node. The answer is a hint, the claim is still `cordonNode`'s guarded write.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import type { Logger } from 'pino';
import { claimWaitOutcome } from '../k8s/node-claim.js';
import type { WatchCache } from '../k8s/watch-cache.js';
import { activityContext, startHeartbeats } from './context.js';
import {
  DEFAULT_FIRST_HEARTBEAT_MS,
  SYNC_TIMEOUT_MS,
  isPermanentError,
  throwIfNotSynced,
} from './observe.js';
import type { ClaimWaitResult, DrainActivities, WaitClaimInput } from './types.js';

/** Dependencies of {@link createWaitClaimReleased}. */
export interface WaitClaimDeps {
  /** The worker-wide cache to read (the one `observeNode` reads). */
  cache: WatchCache;
  /** Structured logger. */
  logger: Logger;
  /** How often to heartbeat, ms. */
  heartbeatIntervalMs: number;
  /** Delay of the first heartbeat, ms. Default {@link DEFAULT_FIRST_HEARTBEAT_MS}. */
  firstHeartbeatMs?: number;
}

/**
 * Builds the `waitClaimReleased` activity around `deps.cache`. For `input` ({@link WaitClaimInput}):
 *
 * 1. subscribes to the node in the cache and waits until its informers have synced (at most
 *    `max(maxWaitSeconds, 15 s)`);
 * 2. answers at once when the cached Node is gone (`NodeNotFound`) or its claim no longer names
 *    `heldBy` (`Released`, see {@link claimWaitOutcome});
 * 3. otherwise checks again on every change the cache sees for the node, and answers `StillHeld`
 *    after `maxWaitSeconds`.
 *
 * Heartbeats after `firstHeartbeatMs`, then every `heartbeatIntervalMs`; stops as soon as the
 * activity is cancelled (a cancellation request, or a heartbeat that finds the workflow closed).
 * Outside a Temporal activity it works the same, minus heartbeats and cancellation.
 *
 * @throws (from the activity) `CancelledFailure` when cancelled; a non-retryable `ApplicationFailure`
 *   of type `InvalidInput` for a bad input, or of type `KubernetesApiError` when the first list is
 *   refused with a 4xx (e.g. 403: missing RBAC); a retryable `TransientKubernetesError` when the
 *   cache cannot sync in time; `Error` when the cache is closed (worker shutdown).
 */
export function createWaitClaimReleased(deps: WaitClaimDeps): DrainActivities['waitClaimReleased'] {
  const heartbeats = {
    intervalMs: deps.heartbeatIntervalMs,
    firstAfterMs: deps.firstHeartbeatMs ?? DEFAULT_FIRST_HEARTBEAT_MS,
  };
  return async function waitClaimReleased(input: WaitClaimInput): Promise<ClaimWaitResult> {
    const { plan, node, heldBy } = input;
    if (
      typeof node !== 'string' ||
      node === '' ||
      !Number.isFinite(input.maxWaitSeconds) ||
      input.maxWaitSeconds < 0
    )
      throw ApplicationFailure.nonRetryable(
        `waitClaimReleased: need a node name and maxWaitSeconds >= 0, got ${JSON.stringify({
          node,
          maxWaitSeconds: input.maxWaitSeconds,
        })}`,
        'InvalidInput',
      );
    const startedAt = Date.now();
    const deadline = startedAt + input.maxWaitSeconds * 1000;
    const watch = deps.cache.acquire(node);
    const ctx = activityContext();
    const cancel = ctx?.cancellationSignal;
    const stop = new AbortController();
    let failure: unknown;
    const onCancel = (): void => {
      failure ??= cancel?.reason ?? new CancelledFailure(`waitClaimReleased ${node} cancelled`);
      stop.abort();
    };
    cancel?.addEventListener('abort', onCancel, { once: true });
    if (cancel?.aborted) onCancel();
    const stopHeartbeats = startHeartbeats(ctx, heartbeats);
    /** Waits for `wait` with a signal aborted at `at` or on cancellation; then throws if cancelled. */
    const until = async <T>(at: number, wait: (signal: AbortSignal) => Promise<T>): Promise<T> => {
      const ac = new AbortController();
      const t = setTimeout(() => ac.abort(), Math.max(0, at - Date.now()));
      const onStop = (): void => ac.abort();
      stop.signal.addEventListener('abort', onStop, { once: true });
      let result: T;
      try {
        result = await wait(ac.signal);
      } finally {
        clearTimeout(t);
        stop.signal.removeEventListener('abort', onStop);
      }
      if (failure !== undefined) throw failure;
      return result;
    };
    try {
      if (failure !== undefined) throw failure;
      if (!watch.isSynced()) {
        const limit = startedAt + Math.max(input.maxWaitSeconds * 1000, SYNC_TIMEOUT_MS);
        await until(limit, (signal) => watch.waitSynced(signal, isPermanentError));
        throwIfNotSynced(watch, `waitClaimReleased ${node}`, startedAt);
      }
      for (;;) {
        const seen = watch.changes;
        const outcome = claimWaitOutcome(watch.getNode(), plan, heldBy);
        if (outcome !== undefined) {
          deps.logger.debug({ node, plan: plan.name, heldBy, outcome }, 'waitClaimReleased: answered');
          return { outcome };
        }
        const woke = await until(deadline, (signal) => watch.waitForChange(seen, signal));
        if (!woke) return { outcome: 'StillHeld' };
      }
    } finally {
      stopHeartbeats();
      cancel?.removeEventListener('abort', onCancel);
      stop.abort();
      watch.release();
    }
  };
}
