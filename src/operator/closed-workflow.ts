/**
 * The status the operator writes for a plan whose Temporal workflow closed while the plan still
 * expected it to run (src/api/closed-workflow.ts): pure, table-tested in test/unit/decide.test.ts.
 *
 * Without it such a plan reads Running forever (`kubectl get mp`, `drainflow_plans{phase}`,
 * `drainflow status`): nothing writes its status any more, and nothing hands its nodes back. The
 * projection says what happened and what to do; `spec.abort: true` then makes the operator hand the
 * nodes back itself (the same hand-back as a deletion), and the plan ends Aborted with the same reason.
 */
import {
  CLOSED_WORKFLOW_VERB,
  closeStatusOfReason,
  type ClosedWorkflowReasonName,
} from '../api/closed-workflow.js';
import type { MaintenancePlanStatus } from '../api/plan.js';
import type { PlanPhase } from '../api/reasons.js';
import { setCondition } from '../drain/conditions.js';

/** What {@link closedWorkflowStatus} reads. */
export interface ClosedWorkflowInput {
  planName: string;
  workflowId: string;
  reason: ClosedWorkflowReasonName;
  /** The status as read (the new one is built on it). */
  status: MaintenancePlanStatus | undefined;
  /** metadata.generation of the plan. */
  generation: number;
  /**
   * Undefined: the nodes are not handed back (yet). Otherwise what `spec.abort` handed back, each
   * as `name (uncordoned)` or `name (claim removed, …)`; empty when the plan claimed none any more.
   */
  handedBack?: string[];
  /** The current time, RFC 3339. */
  nowIso: string;
}

/**
 * The whole status to write (a replace guarded by the resourceVersion read): phase Failed (Aborted
 * once handed back) with the reason of the close status; the message says what happened and what
 * to do; Progressing False and Blocked True (False once handed back, Drained False reason Aborted)
 * with the same reason; completedAt set if absent; deadlineAction, window and estimatedCompletion
 * dropped (no deadline or window acts any more, nothing more is drained). The rest of the status (nodes, counters, the workflow reference) is
 * kept as the workflow last wrote it.
 */
export function closedWorkflowStatus(input: ClosedWorkflowInput): MaintenancePlanStatus {
  const { reason, status, nowIso, handedBack } = input;
  const closeStatus = closeStatusOfReason(reason) ?? 'TERMINATED';
  const was =
    status?.phase && status.phase !== 'Failed' && status.phase !== 'Aborted'
      ? ` while the plan was ${status.phase}`
      : '';
  const how =
    closeStatus === 'NOT_FOUND'
      ? 'Temporal answered NotFound: its history was lost, e.g. a dev server restarted without its database or the namespace re-created'
      : `close status ${closeStatus}`;
  const what = `Temporal workflow ${input.workflowId} ${CLOSED_WORKFLOW_VERB[closeStatus]} (${how})${was}`;
  const gen = input.generation;
  let phase: PlanPhase;
  let message: string;
  let conditions = status?.conditions;
  if (handedBack === undefined) {
    phase = 'Failed';
    message = `${what}: nothing drains or hands back this plan's nodes any more, so the nodes it cordoned stay cordoned and claimed. Set spec.abort: true (drainflow abort ${input.planName}) to have the operator hand them back per spec.uncordon, or delete the plan`;
    conditions = setCondition(
      conditions,
      { type: 'Blocked', status: 'True', reason, message, observedGeneration: gen },
      nowIso,
    );
  } else {
    phase = 'Aborted';
    const back =
      handedBack.length > 0
        ? `handed back ${handedBack.length} node(s): ${handedBack.join(', ')}`
        : 'no node carried its claim any more';
    message = `${what}; on spec.abort the operator ${back}`;
    conditions = setCondition(
      conditions,
      {
        type: 'Blocked',
        status: 'False',
        reason: 'NotBlocked',
        message: 'nothing blocks the plan',
        observedGeneration: gen,
      },
      nowIso,
    );
    conditions = setCondition(
      conditions,
      {
        type: 'Drained',
        status: 'False',
        reason: 'Aborted',
        message: 'not every node is drained',
        observedGeneration: gen,
      },
      nowIso,
    );
  }
  conditions = setCondition(
    conditions,
    { type: 'Progressing', status: 'False', reason, message, observedGeneration: gen },
    nowIso,
  );
  const kept: MaintenancePlanStatus = { ...status };
  delete kept.deadlineAction;
  delete kept.window;
  delete kept.estimatedCompletion;
  return {
    ...kept,
    phase,
    reason,
    message,
    observedGeneration: gen,
    conditions,
    completedAt: status?.completedAt ?? nowIso,
  };
}
