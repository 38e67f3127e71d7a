/**
 * The plan's status writer: one status write (the `writePlanStatus` local activity, which renders
 * the status from the structured state) when the state changed and the interval allows, or at
 * once when an Update waits for it.
 *
 * - The interval grows with the plan's size ({@link statusWriteIntervalMs}).
 * - Grants before status writes: a workflow task that runs a local activity sends none of its
 *   commands (the grants' signals) before it finishes. In the fleet benchmark on a loaded host the
 *   plan's tasks with a write took 3.0 s (median) against 0.5 s without one, and 112 of the 118
 *   tasks that sent grants had one. So in plans that hand out PDB budgets a write is not started in
 *   the workflow task that sent grants (it goes 1 ms later, in a task of its own; at most
 *   {@link GRANT_DEFERRALS_MAX} times in a row, so grants in every task do not stop the writes), and
 *   the interval counts from the end of the previous write, so a slow API server does not keep a
 *   write running in nearly every task.
 *
 * Deterministic: only pure modules and activity types.
 */
import type { MaintenancePlanStatus } from '../../api/plan.js';
import { statusEquals } from '../../drain/conditions.js';
import { renderPlanStatus, type PlanStatusInput } from '../../drain/plan-status.js';
import { activitySummary } from '../../drain/summaries.js';
import { local } from './activities.js';
import type { PlanRun } from './run.js';

/**
 * How many times in a row a plan that hands out PDB budgets puts off a due status write because
 * its workflow task sent grants.
 */
export const GRANT_DEFERRALS_MAX = 3;

/**
 * Minimum time between two status writes, ms: 1 s for up to 20 nodes, growing by 50 ms per node,
 * at most 15 s (a 200-node plan writes at most every 10 s), so the API server's load from status
 * writes does not grow with the plan's size times its progress rate.
 */
export function statusWriteIntervalMs(nodes: number): number {
  return Math.min(15000, Math.max(1000, nodes * 50));
}

/** The structured state a status write renders (src/drain/plan-status.ts), without the time. */
function shown(run: PlanRun): Omit<PlanStatusInput, 'nowMs'> {
  const { s } = run;
  return {
    state: s.plan,
    ...(s.claimCycle ? { claimCycle: s.claimCycle } : {}),
    ...(s.remedies?.length ? { remedies: { plan: run.plan.name, records: s.remedies } } : {}),
  };
}

/** The plan's status as it would be written now (the progress query's and the Updates' answer). */
export function project(run: PlanRun): MaintenancePlanStatus {
  return renderPlanStatus({ ...shown(run), nowMs: Date.now() });
}

/**
 * Writes the status when the state changed and the interval allows (or an Update waits, or
 * `force`). The workflow compares structured state, never rendered words: the `writePlanStatus`
 * local activity renders the status. A write refused for good (e.g. 422) does not stop the drain:
 * the next change tries again.
 * @returns when to try again (ms since epoch), or undefined when nothing is left to write.
 */
export async function publish(run: PlanRun, force: boolean): Promise<number | undefined> {
  const w = run.local.writer;
  const { s } = run;
  if (w.planGone || w.publishedSeq >= w.changeSeq) return undefined;
  const grantsFirst = s.budget !== undefined;
  const due = w.lastPublishMs + statusWriteIntervalMs(s.plan.nodes.length);
  if (!force && !w.urgent && Date.now() < due) return due;
  if (
    !force &&
    !w.urgent &&
    grantsFirst &&
    run.local.grants.sentAtMs === Date.now() && // the workflow clock stands still within one workflow task
    w.deferredWrites < GRANT_DEFERRALS_MAX
  ) {
    w.deferredWrites++;
    return Date.now() + 1;
  }
  w.deferredWrites = 0;
  w.urgent = false;
  const seq = w.changeSeq;
  // A copy: the state changes in place after the write.
  const state = JSON.parse(JSON.stringify(shown(run))) as Omit<PlanStatusInput, 'nowMs'>;
  w.lastPublishMs = Date.now();
  if (!w.published || !statusEquals(state, w.published)) {
    try {
      const { exists } = await local.writePlanStatus.executeWithOptions(
        { summary: activitySummary.writeStatus(run.plan.name) },
        [{ plan: run.plan, state: { ...state, nowMs: Date.now() } }],
      );
      if (!exists) w.planGone = true; // the plan is gone: nothing to write to any more
      w.published = state;
    } catch {
      // A status write refused for good (e.g. 422) must not stop the drain; the next change tries again.
    }
    if (grantsFirst) w.lastPublishMs = Date.now();
  }
  w.publishedSeq = seq;
  return undefined;
}
