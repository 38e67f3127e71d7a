/**
 * What a change of the plan's phase means besides the phase itself: whether the plan is done
 * ({@link endsPlan}, which stamps status.completionTime) and the Event that announces it
 * ({@link phaseEvent}).
 *
 * PURE and DETERMINISTIC: imported by workflow code.
 */
import { DeadlineReason, FINAL_PLAN_PHASES, PlanPhase, PlanReason, PreflightReason } from '../api/reasons.js';
import type { NodeState } from '../contract/progress.js';
import type { PlanEvent } from './plan-drain.js';
import { shownOutcome } from './projection.js';

/**
 * Whether a plan in `phase` for `reason` is done (its completion time is set once): every final
 * phase but Blocked, and Blocked only at the deadline (DeadlineExceeded, NodesSkipped), since a
 * plan Blocked otherwise still waits for its nodes.
 */
export function endsPlan(phase: PlanPhase, reason: string): boolean {
  if (phase !== PlanPhase.Blocked) return FINAL_PLAN_PHASES.has(phase);
  return reason === PlanReason.DeadlineExceeded || reason === DeadlineReason.NodesSkipped;
}

/**
 * The Event that announces the plan's new phase: Warning for Blocked, Failed, a Previewed plan
 * that found blockers and a hand-back after failed hooks, else Normal. A drain that ended with pods
 * deleted at the deadline, or with a node deleted during it, says so as its status does
 * ({@link shownOutcome}).
 */
export function phaseEvent(phase: PlanPhase, reason: string, message: string, nodes: NodeState[]): PlanEvent {
  const shown = shownOutcome({ phase, reason, message, nodes });
  const said = shown.reason !== reason ? shown : { reason, message };
  const warning =
    phase === PlanPhase.Blocked ||
    phase === PlanPhase.Failed ||
    (phase === PlanPhase.Previewed && reason !== PreflightReason.NoBlockers) ||
    reason === PlanReason.HandedBackWithHookFailures;
  return { type: warning ? 'Warning' : 'Normal', reason: said.reason, message: said.message };
}
