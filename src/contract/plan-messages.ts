/**
 * The plan workflow's messages: the controls (pause, resume, abort, release) as signals and as a
 * validated update, the per-node release and the progress query. The operator, the CLI, the tests
 * and the workflow share these objects.
 *
 * Ground floor (src/contract): `defineSignal`, `defineQuery` and `defineUpdate` only name a message
 * and its types (no I/O), so the operator and the CLI may import this module as well as workflow code.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { MaintenancePlanStatus } from '../api/plan.js';

/** Optional payload of the control signals: the plan generation that asked for it. */
export interface ControlArgs {
  /** metadata.generation of the plan whose spec change caused the signal (relayed by the operator). */
  generation?: number;
}

/** Stop starting new evictions (in-flight calls finish; every timer keeps running). */
export const pauseSignal = defineSignal<[ControlArgs?]>('pause');

/** Continue after pause. */
export const resumeSignal = defineSignal<[ControlArgs?]>('resume');

/** Stop evicting, hand back the nodes this plan cordoned (per spec.uncordon), end Aborted. */
export const abortSignal = defineSignal<[ControlArgs?]>('abort');

/** Maintenance is over: with uncordon OnRelease the nodes are uncordoned and the plan Completed. */
export const releaseSignal = defineSignal<[ControlArgs?]>('release');

/** The plan's status as the workflow sees it (same shape as MaintenancePlan.status). */
export const progressQuery = defineQuery<MaintenancePlanStatus>('progress');

/** Action of {@link controlUpdate}. */
export type ControlAction = 'pause' | 'resume' | 'abort' | 'release';

/**
 * Same as the signals, but returns the status after the workflow applied the action. Rejected
 * (validator) for an unknown action.
 */
export const controlUpdate = defineUpdate<MaintenancePlanStatus, [{ action: ControlAction } & ControlArgs]>(
  'control',
);

/**
 * uncordon AfterEachNode: hand back one node of the plan (uncordon it once drained, or at once when
 * it is drained already and waits). Returns the status once the workflow took it in. Rejected
 * (validator) when the plan's uncordon is not AfterEachNode or the node is not in the plan.
 */
export const releaseNodeUpdate = defineUpdate<MaintenancePlanStatus, [{ node: string }]>('releaseNode');

/** Argument of {@link approveRemedyUpdate}. */
export interface ApproveRemedyArgs {
  /** The Deployment whose rollout restart the plan proposed, as `namespace/name`. */
  workload: string;
  /** Who approves (recorded in the history, the Remedy condition and the RemedyApproved Event). */
  by: string;
}

/**
 * spec.remedies.rolloutRestart Approve (or Auto, before its time): approves the plan's proposed
 * rollout restart of a Deployment; the plan restarts it at once (unless paused). Returns the status
 * once the workflow took it in. Rejected (validator) when the plan proposes no restart of that
 * Deployment, or restarted it already. From the Temporal UI: Update `approveRemedy` with
 * `{"workload": "NS/NAME", "by": "<you>"}`.
 */
export const approveRemedyUpdate = defineUpdate<MaintenancePlanStatus, [ApproveRemedyArgs]>('approveRemedy');

/**
 * Argument of {@link extendDeadlineUpdate}: exactly one of `addSeconds` and `deadline`, and who asks.
 */
export interface ExtendDeadlineArgs {
  /** Move the deadline this many seconds later (`drainflow extend P --by 30m`: 1800). */
  addSeconds?: number;
  /** The new deadline, RFC 3339 (`drainflow extend P --to 2026-12-08T18:00:00Z`). */
  deadline?: string;
  /** Who asks (recorded in the history and the DeadlineExtended Event). */
  by: string;
}

/**
 * Gives a Running plan, or one Blocked at its deadline (reason DeadlineExceeded, onDeadline Stop),
 * a later deadline. A Blocked plan goes back to Running and drains the nodes that stopped at the
 * deadline again, their claims kept and never uncordoned in between (src/drain/plan-extend.ts).
 * Returns the status once a write covers the change. Rejected (validator) for any other plan, a
 * new deadline not later than the current one (or already past), or a non-positive `addSeconds`.
 * From the Temporal UI: Update `extendDeadline` with `{"addSeconds": 1800, "by": "<you>"}`.
 */
export const extendDeadlineUpdate = defineUpdate<MaintenancePlanStatus, [ExtendDeadlineArgs]>(
  'extendDeadline',
);

/** Payload of {@link drainTimeoutSignal}: the spec's drainTimeoutSeconds and the generation that set it. */
export interface DrainTimeoutArgs extends ControlArgs {
  /** spec.drainTimeoutSeconds, seconds from the plan's start. */
  drainTimeoutSeconds?: number;
}

/**
 * The operator's relay of a raised spec.drainTimeoutSeconds: the same as {@link
 * extendDeadlineUpdate} to `startedAt + drainTimeoutSeconds`. Ignored when that is not later than
 * the current deadline (a repeated relay); a plan that cannot be extended says so in a Normal
 * Event SpecChangeIgnored.
 */
export const drainTimeoutSignal = defineSignal<[DrainTimeoutArgs?]>('drainTimeout');
