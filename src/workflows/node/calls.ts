/**
 * The node's calls in flight: `evictPod` activities (one Eviction API call each, start-to-close
 * `eviction.callTimeoutSeconds`, no automatic retry, cancelled together on abort) and, under
 * onDeadline DeletePods, `deletePod` activities. Each answer (or failure) goes to the loop's inbox.
 * Deterministic: workflow code.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  TimeoutFailure,
} from '@temporalio/workflow';
import { DeadlineReason } from '../../api/reasons.js';
import { activitySummary } from '../../drain/summaries.js';
import type { NodeActivities } from './activities.js';
import type { EventRecorder } from './events.js';
import type { LoopInput } from './inbox.js';
import { errorMessage, type NodeRun } from './run.js';

/** Whether a failure is non-retryable: not an answer of the API server that waiting may change. */
const nonRetryable = (err: unknown): boolean =>
  err instanceof ActivityFailure &&
  err.cause instanceof ApplicationFailure &&
  err.cause.nonRetryable === true;

/** See the module comment. */
export class Calls {
  /** Calls in flight by pod UID. */
  readonly inFlight = new Map<string, Promise<void>>();
  private readonly evictions = new CancellationScope();
  private evictionsCancelled = false;

  constructor(
    private readonly run: NodeRun,
    private readonly acts: NodeActivities,
    private readonly inbox: LoopInput[],
    private readonly events: EventRecorder,
  ) {}

  /** Cancels the evictions in flight (once, on abort). */
  cancelEvictions(): void {
    if (this.evictionsCancelled || this.inFlight.size === 0) return;
    this.evictionsCancelled = true;
    this.evictions.cancel();
  }

  /** Evicts the pod `uid`. */
  evict(uid: string): void {
    const { s, spec } = this.run;
    const p = s.pods[uid]!;
    const call = this.evictions
      .run(() =>
        this.acts.evictor.evictPod.executeWithOptions({ summary: activitySummary.evict(p.key) }, [
          {
            namespace: p.namespace,
            name: p.name,
            uid: p.uid,
            ...(spec.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: spec.gracePeriodSeconds } : {}),
          },
        ]),
      )
      .then(
        (answer) => {
          this.inbox.push({ kind: 'answered', uid, answer });
        },
        (err: unknown) => {
          const cancelled = isCancellation(err);
          const timedOut = err instanceof ActivityFailure && err.cause instanceof TimeoutFailure;
          // A non-retryable failure ends the node Failed naming it. The pod is still checked first.
          if (nonRetryable(err))
            this.inbox.push({ kind: 'fatal', message: `evict ${p.key}: ${errorMessage(err)}` });
          this.inbox.push({
            kind: 'answered',
            uid,
            answer: {
              outcome: 'CallFailed',
              timedOut,
              cancelled,
              message: timedOut
                ? `eviction of ${p.key} timed out`
                : `eviction of ${p.key} failed: ${errorMessage(err)}`,
            },
          });
        },
      )
      .finally(() => {
        this.inFlight.delete(uid);
      });
    this.inFlight.set(uid, call);
  }

  /** onDeadline DeletePods: deletes the pod `uid` with the grace period given. */
  delete(uid: string, gracePeriodSeconds: number): void {
    const p = this.run.s.pods[uid]!;
    const node = this.run.s.node;
    const call = this.acts.deleter.deletePod
      .executeWithOptions({ summary: activitySummary.deleteAtDeadline(p.key) }, [
        { namespace: p.namespace, name: p.name, uid: p.uid, gracePeriodSeconds },
      ])
      .then(
        (answer) => {
          this.inbox.push({ kind: 'deleted', uid, answer });
          if (answer.outcome === 'Deleted')
            this.events.record(
              DeadlineReason.PodDeletedAtDeadline,
              `node ${node}: pod ${p.key} deleted without the Eviction API at the deadline (PodDisruptionBudgets bypassed), grace period ${gracePeriodSeconds} s`,
            );
        },
        (err: unknown) => {
          // As for evictions: a non-retryable failure ends the node Failed naming it (a deletion
          // the API server refused is a result, `Failed`, and a blocker retried after the backoff).
          if (nonRetryable(err))
            this.inbox.push({ kind: 'fatal', message: `delete ${p.key}: ${errorMessage(err)}` });
          this.inbox.push({
            kind: 'deleted',
            uid,
            answer: { outcome: 'CallFailed', message: `deletion of ${p.key} failed: ${errorMessage(err)}` },
          });
        },
      )
      .finally(() => {
        this.inFlight.delete(uid);
      });
    this.inFlight.set(uid, call);
  }
}
