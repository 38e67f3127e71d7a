/**
 * The `claimWaitGraph` activity: the waits between plans that a plan's own waits lead to, read from
 * the cluster, for {@link findClaimCycle} (src/drain/claim-cycle.ts) to find a cycle in.
 *
 * From the plan's own waits (its nodes Waiting for another plan's claim), it follows each holder:
 * reads that plan's status (`status.nodes[].heldBy` of its Waiting/NodeHeldByOtherPlan nodes), and
 * keeps a wait only while the node's claim annotation still names the holder (a status can lag
 * behind a hand-back; the Node's annotation is the claim itself). At most {@link MAX_CYCLE_PLANS}
 * plans are read. Calls: GET MaintenancePlan and GET Node, both granted to the worker already
 * (publishStatus, cordonNode).
 */
import { NODE_CLAIM_ANNOTATION } from '../api/plan.js';
import type { PlanRef } from '../contract/names.js';
import { MAX_CYCLE_PLANS, statusWaits, type WaitEdge } from '../drain/claim-cycle.js';
import type { KubernetesPort } from '../k8s/port.js';

/** Input of {@link ClaimCycleActivities.claimWaitGraph}. */
export interface ClaimWaitGraphInput {
  plan: PlanRef;
  /** The plan's own waits (node → the plan its claim names), as its nodes reported them. */
  waits: { node: string; heldBy: string }[];
}

/** The claim-cycle activity, apart from DrainActivities so fakes of the drain contract need not implement it. */
export interface ClaimCycleActivities {
  /**
   * The waits reachable from `plan`'s own, each confirmed by the node's claim annotation.
   * @throws TransientKubernetesError / PermanentKubernetesError of the reads (the plan tries again later).
   */
  claimWaitGraph(input: ClaimWaitGraphInput): Promise<{ edges: WaitEdge[] }>;
}

/** Builds {@link ClaimCycleActivities} over the worker's Kubernetes port. */
export function createClaimCycleActivities(
  port: Pick<KubernetesPort, 'readNode' | 'readPlan'>,
): ClaimCycleActivities {
  return {
    async claimWaitGraph({ plan, waits }) {
      const holderOf = new Map<string, string | undefined>();
      const confirmed = async (e: WaitEdge): Promise<boolean> => {
        if (!holderOf.has(e.node))
          holderOf.set(e.node, (await port.readNode(e.node))?.metadata?.annotations?.[NODE_CLAIM_ANNOTATION]);
        return holderOf.get(e.node) === e.heldBy;
      };
      const edges: WaitEdge[] = [];
      const seen = new Set<string>([plan.name]);
      const queue: WaitEdge[][] = [waits.map((w) => ({ plan: plan.name, ...w }))];
      while (queue.length > 0) {
        for (const e of queue.shift()!) {
          if (e.heldBy === e.plan || !(await confirmed(e))) continue;
          edges.push(e);
          if (seen.has(e.heldBy) || seen.size >= MAX_CYCLE_PLANS) continue;
          seen.add(e.heldBy);
          const other = await port.readPlan(e.heldBy);
          queue.push(statusWaits(e.heldBy, other?.status?.nodes ?? []));
        }
      }
      return { edges };
    },
  };
}
