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
import { planConditions, projectStatus, type PlanState } from './projection.js';

/** What the plan workflow hands the status write: its state, as structured data. */
export interface PlanStatusInput {
  /**
   * The plan's state. Its `conditions` are the previous ones: a condition whose status holds keeps
   * their lastTransitionTime (the status-write activity puts the stored status's there).
   */
  state: PlanState;
  /** The last claim-cycle finding (src/drain/claim-cycle.ts): the ClaimCycle condition once a cycle was seen. */
  claimCycle?: ClaimCycleState;
  /** The workflow's time of the write, ms since epoch: lastTransitionTime of a condition that changes. */
  nowMs: number;
}

/** The plan's status: the conditions of its phase (and ClaimCycle), then the projection. */
export function renderPlanStatus(input: PlanStatusInput): MaintenancePlanStatus {
  const { state, claimCycle, nowMs } = input;
  const c = planConditions(state, nowMs);
  const cycle = claimCycleCondition(claimCycle, state.observedGeneration);
  const conditions = cycle ? setCondition(c, cycle, new Date(nowMs).toISOString()) : c;
  return projectStatus({ ...state, conditions });
}
