/**
 * The plan's status rendered from the plan workflow's structured state: its conditions (with their
 * words) and the projection (src/drain/projection.ts). The status-write activity renders it
 * (src/activities/plan-status.ts `writePlanStatus`), so a change of words is never a workflow
 * change: the workflow decides whether to write by comparing structured state, not text.
 *
 * PURE and DETERMINISTIC: no I/O, no clock (the time is in the input).
 */
import type { MaintenancePlanStatus } from '../api/plan.js';
import { claimCycleCondition, type ClaimCycleState } from './claim-cycle.js';
import { setCondition } from './conditions.js';
import { estimateCompletionMs } from './eta.js';
import { planConditions, projectStatus, type PlanState } from './projection.js';
import type { RemedyRecord } from './remedy.js';
import { remedyCondition } from './remedy-words.js';

/** What the plan workflow hands the status write: its state, as structured data. */
export interface PlanStatusInput {
  /**
   * The plan's state. Its `conditions` are the previous ones: a condition whose status holds keeps
   * their lastTransitionTime (the status-write activity puts the stored status's there).
   */
  state: PlanState;
  /** The last claim-cycle finding (src/drain/claim-cycle.ts): the ClaimCycle condition once a cycle was seen. */
  claimCycle?: ClaimCycleState;
  /** The remedies by surge (src/drain/remedy.ts), once one was proposed, and the plan's name (their words name it). */
  remedies?: { plan: string; records: RemedyRecord[] };
  /** The workflow's time of the write, ms since epoch: lastTransitionTime of a condition that changes. */
  nowMs: number;
}

/**
 * The plan's status: the conditions of its phase (and ClaimCycle), then the projection, and the
 * estimated completion at `nowMs` (src/drain/eta.ts; absent when there is none).
 */
export function renderPlanStatus(input: PlanStatusInput): MaintenancePlanStatus {
  const { state, claimCycle, remedies, nowMs } = input;
  const now = new Date(nowMs).toISOString();
  let conditions = planConditions(state, nowMs);
  const gen = state.observedGeneration;
  const cycle = claimCycleCondition(claimCycle, gen);
  if (cycle) conditions = setCondition(conditions, cycle, now);
  const remedy = remedies && remedyCondition(remedies.records, remedies.plan);
  if (remedy) conditions = setCondition(conditions, { ...remedy, observedGeneration: gen }, now);
  // Computed at the write's time from the state the write shows anyway: the estimate adds no write.
  const eta = estimateCompletionMs({ phase: state.phase, nodes: state.nodes, pace: state.pace, nowMs });
  return {
    ...projectStatus({ ...state, conditions }),
    ...(eta !== undefined ? { estimatedCompletion: new Date(eta).toISOString() } : {}),
  };
}
