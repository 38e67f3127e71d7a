/**
 * The end of a node's drain: the outcome's last words (a cancellation from Temporal, the hand-back
 * of a skipped node), the Events and signals in flight awaited, the final report sent.
 * Deterministic: workflow code.
 */
import { NodePhase, NodeReason } from '../../api/reasons.js';
import type { NodeProgress } from '../../contract/progress.js';
import { handBackWording } from '../../drain/hand-back.js';
import type { NodeOutcome } from '../../drain/node/state.js';
import { activitySummary } from '../../drain/summaries.js';
import { k8s } from './activities.js';
import type { BudgetRequests } from './budget.js';
import type { EventRecorder } from './events.js';
import type { Reporter } from './reporter.js';
import { errorMessage, type NodeRun } from './run.js';

/** What the end needs of the node workflow. */
export interface FinishContext {
  run: NodeRun;
  reporter: Reporter;
  budget: BudgetRequests;
  events: EventRecorder;
}

/** onDeadline SkipNode: hands the node back (uncordoned unless it was unschedulable before the plan). */
async function handBack(run: NodeRun, outcome: NodeOutcome): Promise<NodeOutcome> {
  const { s, input } = run;
  try {
    const answer = await k8s.releaseNode.executeWithOptions(
      { summary: activitySummary.handBack(input.node) },
      [
        {
          plan: input.plan,
          node: input.node,
          uncordon: true,
          ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}),
        },
      ],
    );
    s.claimed = false;
    return {
      ...outcome,
      message: `${outcome.message}${
        answer.uncordoned
          ? ' (uncordoned)'
          : answer.left === 'replaced'
            ? ` (${handBackWording(answer)})`
            : ' (left unschedulable: it was before the plan)'
      }`,
    };
  } catch (err) {
    return { ...outcome, message: `${outcome.message}; handing it back failed: ${errorMessage(err)}` };
  }
}

/** Ends the drain with `outcome`. @returns the final report, sent to the plan. */
export async function finish(ctx: FinishContext, outcome: NodeOutcome): Promise<NodeProgress> {
  const s = ctx.run.s;
  if (s.cancelled && outcome.phase === NodePhase.Aborted)
    outcome = {
      phase: NodePhase.Aborted,
      reason: NodeReason.WorkflowCanceled,
      message: `cancelled from Temporal: ${outcome.message}`,
    };
  if (outcome.phase === NodePhase.Skipped && s.claimed) outcome = await handBack(ctx.run, outcome);
  // The claimed Node is gone (deleted, or deleted and created again): nothing is left to hand
  // back, and no Node of that name is this plan's.
  if (outcome.phase === NodePhase.Deleted) s.claimed = false;
  await ctx.events.settled();
  s.phase = outcome.phase;
  s.reason = outcome.reason;
  s.message = outcome.message;
  await ctx.budget.sending;
  return ctx.reporter.final();
}
