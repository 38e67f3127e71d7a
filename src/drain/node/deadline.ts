/**
 * The node drain at its deadline: the wait for a view observed after it, the grace period of a
 * deadline deletion and the advance notice of one (onDeadline DeletePods).
 * PURE: imported by workflow code.
 */
import type { NodeDrainSettings, NodeDrainState } from './state.js';
import { byKey } from './state.js';
import { deletionWarningMessage } from './words.js';

/**
 * How long a node at its deadline waits for a view observed after the deadline before it decides
 * from the view it holds, ms, counted from the first decision at or after the deadline (a worker
 * that was down over the deadline decides first at its restart). The observation asked for waits
 * for nothing (`maxWaitSeconds` 0): it answers as soon as the worker's watch cache has synced
 * (at most `SYNC_TIMEOUT_MS`, 15 s, on a cold cache, src/activities/observe.ts), so the bound is
 * reached only when the API server cannot be read; the deadline's outcome then comes at most this
 * much later, from the old view.
 */
export const FRESH_VIEW_WAIT_MS = 30_000;

/**
 * After a DeletePods deadline, how long past the longest grace period given the drain waits for the
 * deleted pods to go before it ends Blocked/DeadlineExceeded naming them (a finalizer can hold a pod), ms.
 */
export const DELETE_WAIT_SLACK_MS = 120_000;

/**
 * Whether the drain, past its deadline, still waits for a view observed after the deadline: the
 * deadline was seen ({@link NodeDrainState.deadlineView} set by {@link decideNode} under
 * {@link NodeDrainSettings.freshDeadlineView}), the view it holds comes from an observation started
 * before (its `seq` is not above `afterSeq`; an unchanged answer of a later observation raises it
 * too, see {@link applyUnchangedObservation}), and the wait's bound `untilMs` has not passed.
 * A node decides its deadline's outcome (Blocked/DeadlineExceeded, SkipNode, DeletePods' deletions)
 * and lists deadline blockers ({@link nodeBlockers}) only once this is false.
 */
export function awaitsFreshView(s: NodeDrainState, nowMs: number): boolean {
  const d = s.deadlineView;
  return d !== undefined && s.view !== undefined && s.view.seq <= d.afterSeq && nowMs < d.untilMs;
}

/**
 * When the deadline's policy started to apply, ms since epoch: the first decision past the
 * deadline while not paused ({@link DeadlineView}; at the resume for a node paused over the
 * deadline), 0 before. DeletePods' wait for the pods it deleted counts from it too.
 */
export function policyAppliedAtMs(s: NodeDrainState): number {
  return s.deadlineView ? s.deadlineView.untilMs - FRESH_VIEW_WAIT_MS : 0;
}

/**
 * The grace period of a deadline deletion (onDeadline DeletePods), seconds: what is left until the
 * plan's deadline, rounded up, at least 1, at most the pod's own terminationGracePeriodSeconds.
 */
export function deletionGraceSeconds(
  planDeadlineMs: number,
  nowMs: number,
  podGraceSeconds: number | undefined,
): number {
  const left = Math.max(1, Math.ceil((planDeadlineMs - nowMs) / 1000));
  return podGraceSeconds !== undefined ? Math.max(1, Math.min(left, podGraceSeconds)) : left;
}

/** The advance notice of a DeletePods deadline (see {@link deletionWarning}). */
export interface DeletionWarning {
  /** When it is due, ms since epoch: deadlineWarningSeconds before the node's deadline. */
  atMs: number;
  /** The Event's message, naming the pods (capped). */
  message: string;
}

/**
 * The PodsWillBeDeleted Warning due now, if any: onDeadline DeletePods, not sent yet, before the
 * deadline, at or after `deadline − deadlineWarningSeconds` (at once when the deadline is closer),
 * the node observed and cordoned, not paused (a paused node deletes nothing at the deadline; the
 * notice goes out after the resume), not aborted, and pods still to leave. Does not mark it sent (the caller sets
 * {@link NodeDrainState.warned} once it recorded the Event).
 */
export function deletionWarning(
  s: NodeDrainState,
  nowMs: number,
  settings: NodeDrainSettings,
): DeletionWarning | undefined {
  if (settings.onDeadline !== 'DeletePods' || settings.deadlineWarningSeconds === undefined) return undefined;
  if (s.warned || s.aborted || s.paused || !s.view?.exists || !s.view.unschedulable || nowMs >= s.deadlineMs)
    return undefined;
  const atMs = s.deadlineMs - settings.deadlineWarningSeconds * 1000;
  if (nowMs < atMs) return undefined;
  const pods = Object.values(s.pods)
    .filter((p) => p.state !== 'Terminating')
    .sort(byKey)
    .map((p) => p.key);
  if (pods.length === 0) return undefined;
  return { atMs, message: deletionWarningMessage(s.node, pods, s.deadlineMs) };
}

/**
 * The plan's deadline moved later (signal nodeDeadline, src/drain/plan-extend.ts): the node's
 * deadline becomes `deadlineMs` (ms since epoch) when that is later than its own and it has not
 * begun applying its deadline policy yet (no decision at or after the deadline: its fresh view
 * decides the end). The DeletePods advance notice goes out again for the new deadline.
 * @returns whether the deadline moved.
 */
export function extendNodeDeadline(s: NodeDrainState, deadlineMs: number): boolean {
  if (!(deadlineMs > s.deadlineMs) || s.deadlineView !== undefined) return false;
  s.deadlineMs = deadlineMs;
  delete s.warned;
  return true;
}
