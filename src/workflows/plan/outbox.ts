/**
 * The plan's outbox: Events to record on the plan and controls to forward to running nodes, sent
 * as background calls (followed by `track`, so continue-as-new and the end wait for them), then
 * the PDB grants due.
 *
 * Deterministic: only `@temporalio/workflow`, pure modules and activity types.
 */
import { getExternalWorkflowHandle } from '@temporalio/workflow';
import { nodeWorkflowId } from '../../contract/names.js';
import { nodeControlSignal, nodeDeadlineSignal } from '../../contract/node-messages.js';
import { activitySummary } from '../../drain/summaries.js';
import { k8s } from './activities.js';
import { sendGrants } from './budget-grants.js';
import { track, type PlanRun } from './run.js';

/** Sends every Event and forwarded control waiting, then the grants due. */
export function flushOutbox(run: PlanRun): void {
  const { outbox } = run.local;
  for (const e of outbox.events.splice(0))
    track(
      run,
      k8s.recordEvent.executeWithOptions({ summary: activitySummary.event(e.reason) }, [
        { plan: run.plan, ...e },
      ]),
    );
  for (const f of outbox.forwards.splice(0)) {
    const node = getExternalWorkflowHandle(nodeWorkflowId(run.workflowId, f.node));
    if (f.action === 'deadline') {
      track(run, node.signal(nodeDeadlineSignal, { deadlineMs: f.deadlineMs! }));
      continue;
    }
    // A user's control goes on with the generation that caused it, so the node learns a resume's
    // generation and ignores an older pause the operator sent it directly
    // (src/operator/node-stops.ts). Window-driven ones carry none.
    track(
      run,
      node.signal(nodeControlSignal, {
        action: f.action,
        ...(f.generation !== undefined ? { generation: f.generation } : {}),
      }),
    );
  }
  sendGrants(run);
}
