/**
 * The plan's own calls on its nodes, in batches of {@link NODE_CALL_CONCURRENCY}: claim and cordon
 * every node before the first eviction (spec.cordon AllAtStart), and hand the claimed nodes back
 * (release the claim, uncordon per spec.uncordon).
 *
 * Deterministic: only pure modules and activity types.
 */
import { EventReason, NodePhase, NodeReason } from '../../api/reasons.js';
import { activitySummary } from '../../drain/summaries.js';
import { k8s } from './activities.js';
import { errorMessage, wake, type PlanRun } from './run.js';

/** `cordonNode` activities in flight at once while spec.cordon is AllAtStart, and `releaseNode` at hand-back. */
export const NODE_CALL_CONCURRENCY = 10;

/**
 * Claims and cordons one batch of nodes. A node held by another plan waits (NodeHeldByOtherPlan);
 * NodeNotFound or an error leaves the node to its own drain, which tries again and reports it.
 */
export async function cordonBatch(run: PlanRun, names: string[]): Promise<void> {
  const { s, plan } = run;
  const results = await Promise.all(
    names.map((node) =>
      k8s.cordonNode
        .executeWithOptions({ summary: activitySummary.cordon(node) }, [{ plan, node }])
        .catch(() => undefined),
    ),
  );
  names.forEach((node, i) => {
    const res = results[i];
    const n = s.plan.nodes.find((x) => x.name === node);
    if (!n) return;
    if (res?.outcome === 'Cordoned') {
      s.claimed[node] = {
        cordonedByPlan: !res.wasUnschedulable,
        ...(res.nodeUid !== undefined ? { nodeUid: res.nodeUid } : {}),
      };
      n.phase = NodePhase.Cordoned;
    } else if (res?.outcome === 'HeldByOtherPlan') {
      n.phase = NodePhase.Waiting;
      n.reason = NodeReason.NodeHeldByOtherPlan;
      n.message = `node ${node} is held by plan ${res.heldBy}`;
      n.heldBy = res.heldBy;
    }
  });
  s.cordoned += names.length;
  wake(run);
}

/**
 * Hands the claimed `nodes` back: releases the claim on each (uncordoning it when `uncordon` and
 * the plan cordoned it). A drained node the plan uncordoned reads Released; a hand-back that fails
 * sends a Warning Event HandBackFailed and keeps the claim.
 */
export async function handBack(run: PlanRun, nodes: string[], uncordon: boolean): Promise<void> {
  const { s, plan } = run;
  for (let i = 0; i < nodes.length; i += NODE_CALL_CONCURRENCY) {
    await Promise.all(
      nodes.slice(i, i + NODE_CALL_CONCURRENCY).map(async (node) => {
        const c = s.claimed[node]!;
        try {
          const { uncordoned } = await k8s.releaseNode.executeWithOptions(
            { summary: activitySummary.handBack(node) },
            [{ plan, node, uncordon, ...(c.nodeUid !== undefined ? { nodeUid: c.nodeUid } : {}) }],
          );
          const n = s.plan.nodes.find((x) => x.name === node);
          // Released means drained and handed back; an aborted node keeps its own phase.
          if (n && uncordoned && c.cordonedByPlan && n.phase === NodePhase.Drained)
            n.phase = NodePhase.Released;
          delete s.claimed[node];
        } catch (err) {
          run.local.outbox.events.push({
            type: 'Warning',
            reason: EventReason.HandBackFailed,
            message: `node ${node}: ${errorMessage(err)}`,
          });
        }
      }),
    );
  }
  wake(run);
}
