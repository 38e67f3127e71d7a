/**
 * The node workflow's activity proxies, one per kind of call, with the timeouts, retries and
 * cancellation each call needs. Deterministic: type-only activity imports.
 */
import { ActivityCancellationType, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { DrainActivities } from '../../activities/types.js';
import { evictionTaskQueue } from '../../contract/names.js';
import type { NodeDrainSpec } from '../messages.js';

/** Short Kubernetes calls (cordon, hand back, Events), retried with a backoff. */
export const k8s = proxyActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});

/** The proxies whose timeouts come from the plan's spec. */
export function nodeActivities(spec: NodeDrainSpec) {
  const backoff = spec.retryBackoff;
  return {
    /** One Eviction API call each, on the eviction task queue, never retried, cancelled on abort. */
    evictor: proxyActivities<DrainActivities>({
      taskQueue: evictionTaskQueue(workflowInfo().taskQueue),
      startToCloseTimeout: `${spec.callTimeoutSeconds}s`,
      // Heartbeats carry the cancellation to the worker, which aborts the HTTP request.
      heartbeatTimeout: `${Math.max(2, Math.ceil(spec.callTimeoutSeconds / 2))}s`,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { maximumAttempts: 1 },
    }),
    /** onDeadline DeletePods: a few tries of each DELETE. */
    deleter: proxyActivities<DrainActivities>({
      startToCloseTimeout: `${spec.callTimeoutSeconds}s`,
      retry: { initialInterval: '1s', maximumInterval: '10s', backoffCoefficient: 2, maximumAttempts: 3 },
    }),
    /**
     * An observation the node stops waiting for (the node ends, continues as new, or - grants-only -
     * the plan changed its reporting set) is abandoned, not cancelled: no RequestCancelActivityTask
     * command, so none can cross the observation's answer or its start. The time-skipping test
     * server refuses such a task completion with ACTIVITY_UNKNOWN on every retry (a known bug of
     * that server; the real server takes it), which froze a node that ended while its observation
     * was scheduled. An abandoned observation holds nothing but a worker slot: it only reads the
     * worker's watch cache, and its next heartbeat (at most 16 s) finds a closed run and stops it,
     * or it answers within its bound (ignored).
     */
    observer: proxyActivities<DrainActivities>({
      startToCloseTimeout: `${backoff.maxSeconds + 60}s`,
      heartbeatTimeout: '20s',
      retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
      cancellationType: ActivityCancellationType.ABANDON,
    }),
    /**
     * The wait for a held node's hand-back (waitClaimReleased): at most until the next try, after
     * retryBackoff.maxSeconds, plus the cache's sync. Not retried: when it fails, the round's timer
     * ends the round as before. Abandoned like observations when the round ends without it.
     */
    claimWaiter: proxyActivities<DrainActivities>({
      startToCloseTimeout: `${backoff.maxSeconds + 60}s`,
      heartbeatTimeout: '20s',
      retry: { maximumAttempts: 1 },
      cancellationType: ActivityCancellationType.ABANDON,
    }),
  };
}

/** The proxies of {@link nodeActivities}. */
export type NodeActivities = ReturnType<typeof nodeActivities>;
