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
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from 'pino';
import { claimWaitOutcome, showsHolder } from '../k8s/node-claim.js';
import type { WatchCache } from '../k8s/watch-cache.js';
import { activityWaits } from './context.js';
import {
  DEFAULT_FIRST_HEARTBEAT_MS,
  SYNC_TIMEOUT_MS,
  isPermanentError,
  throwIfNotSynced,
} from './observe.js';
import type { ClaimWaitResult, DrainActivities, WaitClaimInput } from './types.js';

/**
 * How long the worker's watch cache may lag behind the API server, ms: a node whose cached claim does
 * not name the holder counts as released only after this long (unless the cache showed the claim).
 */
export const CACHE_LAG_MS = 5_000;

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
 *    `heldBy` (`Released`, see {@link claimWaitOutcome}) — the latter only once the cache has shown
 *    `heldBy`'s claim, or {@link CACHE_LAG_MS} after the start (a cache that lags behind the claim
 *    the caller's cordon just read must not answer `Released` for a claim it has not seen yet);
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
    const waits = activityWaits(`waitClaimReleased ${node}`, heartbeats);
    try {
      waits.throwIfCancelled();
      if (!watch.isSynced()) {
        const limit = startedAt + Math.max(input.maxWaitSeconds * 1000, SYNC_TIMEOUT_MS);
        await waits.until(limit, (signal) => watch.waitSynced(signal, isPermanentError));
        throwIfNotSynced(watch, `waitClaimReleased ${node}`, startedAt);
      }
      // The cache may not show the holder's claim yet (written a moment before this plan's cordon
      // read it): a node without it counts as released only once the cache has shown it, or after
      // CACHE_LAG_MS.
      let seenHeld = false;
      const lagOverAt = startedAt + CACHE_LAG_MS;
      for (;;) {
        const seen = watch.changes;
        const current = watch.getNode();
        if (showsHolder(current, plan, heldBy)) seenHeld = true;
        const confirmed = seenHeld || Date.now() >= lagOverAt;
        const outcome = claimWaitOutcome(current, plan, heldBy, confirmed);
        if (outcome !== undefined) {
          deps.logger.debug({ node, plan: plan.name, heldBy, outcome }, 'waitClaimReleased: answered');
          return { outcome };
        }
        const wakeAt = confirmed ? deadline : Math.min(deadline, lagOverAt);
        await waits.until(wakeAt, (signal) => watch.waitForChange(seen, signal));
        if (Date.now() >= deadline) return { outcome: 'StillHeld' };
      }
    } finally {
      waits.close();
      watch.release();
    }
  };
}
