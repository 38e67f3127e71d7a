/**
 * The PDB budget protocol on the plan's side (plans of more than one node): the nodes' `pdbBudget`
 * requests go into one ledger per plan ({@link PlanRunState.budget}, src/drain/pdb-budget.ts), and
 * the plan hands each PDB's allowed disruptions out as grants, so two nodes never spend the same
 * disruption.
 *
 * - Grants do not wait for the main loop (behind a status write it delayed them by 0.5 s median,
 *   2 s p90, in the fleet benchmark): the grant pump allocates once per workflow task with new
 *   requests, after every request of that task was applied (one allocation, at most one grant per
 *   node).
 * - They go out through the `deliverGrants` local activity as client signals sent in parallel: a
 *   workflow's own signal command is a transfer task of the plan, carried one after the other, plus
 *   two events and a task in the plan's history per grant (in `scale`, 3.2 s median from the plan's
 *   send to the node's history). One delivery runs at a time, so each node gets its grants in `seq`
 *   order (a node ignores an older one).
 * - While the run continues as new (`closing`) nothing is allocated or delivered: the server refuses
 *   a workflow task that closes the run when a signal arrived meanwhile (UnhandledCommand) and the
 *   SDK runs the task again with the signal; a local activity that already ran would then allocate
 *   again and send other grants under the same numbers, which the nodes ignore while the ledger
 *   counts them issued. The next run allocates first thing.
 *
 * Deterministic: only `@temporalio/workflow`, pure modules and activity types.
 */
import { condition } from '@temporalio/workflow';
import type { PdbBudgetMessage } from '../../contract/node-messages.js';
import { nodeWorkflowId } from '../../contract/names.js';
import { allocateBudget } from '../../drain/pdb-budget.js';
import { applyNodeBudgetRequest, mergeNodeProgress } from '../../drain/plan-drain.js';
import { activitySummary } from '../../drain/summaries.js';
import { grantDelivery } from './activities.js';
import { track, wake, type PlanRun } from './run.js';

/** Records a node's budget request (and the progress it carries along; never a final one). */
export function onBudgetRequest(run: PlanRun, req: PdbBudgetMessage): void {
  applyNodeBudgetRequest(run.s, req);
  // Nodes of plans that name reporters send their changed progress along.
  if (req.progress) {
    run.local.outbox.events.push(...mergeNodeProgress(run.s, req.progress));
    wake(run);
  }
  run.local.grants.due = true;
}

/**
 * The grant pump: once per workflow task with new requests, after all of them were applied. It
 * ends when the run does (`pumping` false); the run awaits it there, like every promise of the run.
 */
export async function grantPump(run: PlanRun): Promise<void> {
  const g = run.local.grants;
  for (;;) {
    await condition(() => (g.due && !g.closing) || !g.pumping);
    if (!g.pumping) return;
    sendGrants(run);
  }
}

/** Hands out what the PDB budgets allow now (a node that ended may have freed some). */
export function sendGrants(run: PlanRun): void {
  const g = run.local.grants;
  if (g.closing) return;
  g.due = false;
  if (!run.s.budget || run.s.aborted) return;
  for (const { node, grant } of allocateBudget(run.s.budget)) {
    g.undelivered.push({ workflowId: nodeWorkflowId(run.workflowId, node), grant });
    g.sentAtMs = Date.now();
  }
  deliverGrants(run);
}

function deliverGrants(run: PlanRun): void {
  const g = run.local.grants;
  if (g.delivering || g.closing || g.undelivered.length === 0) return;
  g.delivering = true;
  const grants = g.undelivered.splice(0);
  track(
    run,
    grantDelivery.deliverGrants
      .executeWithOptions({ summary: activitySummary.deliverGrants(grants.length) }, [{ grants }])
      .finally(() => {
        g.delivering = false;
        deliverGrants(run);
      }),
  );
}
