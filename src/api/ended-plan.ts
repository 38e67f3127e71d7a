/**
 * What a spec flag (`paused`, `abort`, `release`) can still do on a plan that has ended: one rule,
 * read by the CLI before it writes a flag (src/cli/plans.ts, `control`) and by the operator when a
 * flag changes on such a plan (src/operator/decide.ts, `specChangeIgnored`).
 * The CRD cannot refuse such a change: whether it has an effect depends on the status. Pure.
 */
import { closeStatusOfReason, expectsRunningWorkflow } from './closed-workflow.js';
import type { PlanPhase } from './reasons.js';

/** A spec flag a control sets (`drainflow pause|resume` → paused, `abort` → abort, `release` → release). */
export type SpecFlagName = 'paused' | 'abort' | 'release';

/** What {@link flagHasEffect} reads of a plan. */
export interface EndedPlanView {
  /** status.phase; undefined when the status has none yet. */
  phase?: PlanPhase | undefined;
  /** status.reason. */
  reason?: string | undefined;
  /** spec.uncordon (absent: the default OnDelete). */
  uncordon?: string | undefined;
}

/**
 * Whether setting `flag` can still change anything on the plan (pure). A plan whose phase its
 * workflow closes in (Completed, Aborted, Failed with a reason the workflow closes with, Previewed:
 * {@link expectsRunningWorkflow} false) has ended, and a flag has no effect there, except `abort`:
 *
 * - on a Completed plan with `uncordon: OnDelete` (released: its workflow still runs, waiting for
 *   the deletion to hand the nodes back; an abort hands them back now, as a deletion does);
 * - on a plan Failed because its workflow closed behind its back (reason Workflow*: the operator
 *   hands its nodes back on spec.abort, src/api/closed-workflow.ts).
 *
 * Any other plan (running, paused, drained, blocked, Failed with its workflow still holding the
 * nodes, no phase yet) counts as not ended: the flag is for its workflow to judge.
 */
export function flagHasEffect(flag: SpecFlagName, plan: EndedPlanView): boolean {
  if (expectsRunningWorkflow(plan.phase, plan.reason)) return true;
  if (flag !== 'abort') return false;
  if (plan.phase === 'Completed') return (plan.uncordon ?? 'OnDelete') === 'OnDelete';
  return plan.phase === 'Failed' && closeStatusOfReason(plan.reason) !== undefined;
}

/** `Completed` or `Completed/Released`: the phase and reason of a plan, for the words of a refusal. */
export function phaseWords(plan: EndedPlanView): string {
  return `${plan.phase ?? 'no phase'}${plan.reason ? `/${plan.reason}` : ''}`;
}
