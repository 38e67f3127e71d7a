/**
 * Words of a plan whose Temporal workflow closed without the plan reaching a phase a workflow ends
 * in (terminated or cancelled from the Temporal UI or CLI, failed, timed out): the CamelCase
 * reasons the operator projects onto such a plan (phase Failed, then Aborted once `spec.abort`
 * handed its nodes back), and the phases a drainflow workflow closes in. Pure constants, safe to
 * import from workflow code.
 */
import { PlanReason, type PlanPhase } from './reasons.js';

/**
 * Plan reason per Temporal close status (`WorkflowExecutionStatus` names as the client's
 * `describe()` gives them). COMPLETED and CONTINUED_AS_NEW are absent: a completed run wrote its
 * own final status, and a run continued as new is followed by the next one.
 *
 * `NOT_FOUND` is no Temporal status: it stands for a describe answered NotFound for the workflow
 * the plan's status records (Temporal lost its history: a dev server restarted without its
 * database, a namespace deleted and re-created), which the operator projects the same way.
 */
export const ClosedWorkflowReason = {
  TERMINATED: PlanReason.WorkflowTerminated,
  FAILED: PlanReason.WorkflowFailed,
  TIMED_OUT: PlanReason.WorkflowTimedOut,
  CANCELED: PlanReason.WorkflowCanceled,
  NOT_FOUND: PlanReason.WorkflowNotFound,
} as const;

/** One of the {@link ClosedWorkflowReason} values. */
export type ClosedWorkflowReasonName = (typeof ClosedWorkflowReason)[keyof typeof ClosedWorkflowReason];

/** What happened, in words, per close status: "was terminated", "failed", … */
export const CLOSED_WORKFLOW_VERB: Record<keyof typeof ClosedWorkflowReason, string> = {
  TERMINATED: 'was terminated',
  FAILED: 'failed',
  TIMED_OUT: 'timed out',
  CANCELED: 'was cancelled',
  NOT_FOUND: 'is not known to Temporal any more',
};

/**
 * The phases a drainflow plan workflow writes last before it closes (Failed, Aborted, Completed,
 * Previewed). A plan in any other phase (Pending, Running, Paused, Blocked, Drained, or none yet)
 * has a workflow that is still meant to run: it waits for evictions, a release or an abort.
 */
export const PHASES_A_WORKFLOW_CLOSES_IN: ReadonlySet<PlanPhase> = new Set<PlanPhase>([
  'Failed',
  'Aborted',
  'Completed',
  'Previewed',
]);

/**
 * The reasons of a Failed plan whose workflow closed with it: failures before any node was claimed
 * (InvalidSpec, ResolveFailed, NodeNotFound, NoNodesMatched, TooManyNodes) and the operator's
 * Workflow* reasons of a workflow that closed behind the plan's back. Any other Failed plan (a node
 * failed: NodeWorkflowFailed, ActivityFailed, …) has a workflow that stays open holding the nodes'
 * claims until a release or an abort hands them back.
 */
export const FAILED_REASONS_A_WORKFLOW_CLOSES_WITH: ReadonlySet<string> = new Set<string>([
  PlanReason.InvalidSpec,
  PlanReason.ResolveFailed,
  PlanReason.NodeNotFound,
  PlanReason.NoNodesMatched,
  PlanReason.TooManyNodes,
  PlanReason.WorkflowTerminated,
  PlanReason.WorkflowFailed,
  PlanReason.WorkflowTimedOut,
  PlanReason.WorkflowCanceled,
  PlanReason.WorkflowNotFound,
]);

/**
 * Whether a plan in `phase` (with `reason`) still expects its workflow to run (see {@link
 * PHASES_A_WORKFLOW_CLOSES_IN}; a Failed plan does unless its reason is one the workflow closes with,
 * {@link FAILED_REASONS_A_WORKFLOW_CLOSES_WITH}). Without a reason, Failed counts as closed.
 */
export function expectsRunningWorkflow(phase: PlanPhase | undefined, reason?: string): boolean {
  if (phase === 'Failed' && reason !== undefined) return !FAILED_REASONS_A_WORKFLOW_CLOSES_WITH.has(reason);
  return phase === undefined || !PHASES_A_WORKFLOW_CLOSES_IN.has(phase);
}

/** The plan reason for a Temporal close status, or undefined when that status is not projected. */
export function closedWorkflowReason(status: string): ClosedWorkflowReasonName | undefined {
  // The client's describe() names the proto's WORKFLOW_EXECUTION_STATUS_CANCELED `CANCELLED`.
  const name = status === 'CANCELLED' ? 'CANCELED' : status;
  return Object.hasOwn(ClosedWorkflowReason, name)
    ? ClosedWorkflowReason[name as keyof typeof ClosedWorkflowReason]
    : undefined;
}

/** The Temporal close status a {@link ClosedWorkflowReason} stands for, or undefined for another reason. */
export function closeStatusOfReason(
  reason: string | undefined,
): keyof typeof ClosedWorkflowReason | undefined {
  const hit = Object.entries(ClosedWorkflowReason).find(([, r]) => r === reason);
  return hit?.[0] as keyof typeof ClosedWorkflowReason | undefined;
}
