/**
 * The node drain's report to the plan: pod counts, the skipped pods, the order group drained now.
 * Its words are in words.ts. PURE: imported by workflow code.
 */
import type { SkippedPod } from '../../api/plan.js';
import { NodePhase } from '../../api/reasons.js';
import { SKIPPED_POD_CAP, currentOrderGroup } from '../pod-policy.js';
import { byPod, type NodeDrainState } from './state.js';

/** The order group being drained now (the lowest among the pods still to leave), if any. */
export function nodeOrderGroup(s: NodeDrainState): number | undefined {
  return currentOrderGroup(Object.values(s.pods).map((p) => p.order));
}

/** The node's report of the per-pod policy: its current order group and the pods it skipped. */
export function podPolicyProgress(s: NodeDrainState): { orderGroup?: number; skipped?: SkippedPod[] } {
  const group = nodeOrderGroup(s);
  const skipped = nodeSkipped(s);
  return {
    ...(group !== undefined ? { orderGroup: group } : {}),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

/** The pods to list in status.nodes[].skipped: opted out by label and counted gone after the timeout. */
export function nodeSkipped(s: NodeDrainState): SkippedPod[] {
  const returned = Object.values(s.returned ?? {}).map(({ pod, reason, message }) => ({
    pod,
    reason,
    message,
  }));
  return [...(s.optedOut ?? []), ...Object.values(s.timedOut ?? {}), ...returned]
    .sort(byPod)
    .slice(0, SKIPPED_POD_CAP);
}

/**
 * How the pods still recorded on a node deleted during the drain count: those this drain evicted
 * (201, or a call that may have taken effect) or deleted at the deadline, and the others, which go
 * with the node without eviction (the pod garbage collector deletes pods bound to a Node that no
 * longer exists; PodDisruptionBudgets do not apply to that).
 */
export function deletedNodePods(s: NodeDrainState): { evicted: number; deleted: number; withNode: number } {
  let evicted = 0;
  let deleted = 0;
  let withNode = 0;
  for (const p of Object.values(s.pods))
    if (p.deleted) deleted++;
    else if (p.evicted || p.mayHaveEvicted) evicted++;
    else withNode++;
  return { evicted, deleted, withNode };
}

/**
 * The pods still recorded that this drain evicted and that are terminating: its eviction was
 * answered 201, or its call got no answer (timed out, cancelled) while an observation showed the
 * pod terminating. They count as evicted once an observation shows them gone ({@link dropGone}),
 * as on a node deleted during the drain ({@link deletedNodePods}). Pods deleted at the deadline
 * are not among them (they count in `podsDeleted`), nor pods found terminating by someone else's
 * doing.
 */
export function terminatingEvicted(s: NodeDrainState): number {
  let n = 0;
  for (const p of Object.values(s.pods))
    if (p.state === 'Terminating' && !p.deleted && (p.evicted || p.mayHaveEvicted)) n++;
  return n;
}

/**
 * Counts for the node's report (pods).
 *
 * A node deleted during the drain keeps its pods counted: those this drain evicted (or deleted) as
 * evicted (deleted), every other pod still on it as gone without eviction (the pod garbage
 * collector deletes pods bound to a Node that no longer exists).
 *
 * A node that ended `Aborted` counts as evicted the pods this drain evicted that are still
 * terminating ({@link terminatingEvicted}). The Eviction API's 201 means the API server accepted
 * the eviction: the pod is terminating and will go, and kubectl drain reports such a pod as
 * evicted. An aborted node ends as soon as no call is in flight, before any observation shows
 * those pods gone. A running node's Draining message counts its terminating pods already.
 */
export function nodeCounts(s: NodeDrainState): {
  podsTotal: number;
  podsEvicted: number;
  podsFailed: number;
  podsDeleted?: number;
  podsGoneWithoutEviction?: number;
} {
  if (s.view && !s.view.exists) {
    // Pods deleted at the deadline are in s.podsDeleted already (counted when the DELETE took effect).
    const { evicted, withNode } = deletedNodePods(s);
    const gone = (s.goneWithoutEviction ?? 0) + withNode;
    const podsDeleted = s.podsDeleted ?? 0;
    return {
      podsTotal: s.podsGone + Object.keys(s.pods).length,
      podsEvicted: s.podsGone - (s.deletedGone ?? 0) - (s.goneWithoutEviction ?? 0) + evicted,
      podsFailed: 0,
      ...(podsDeleted ? { podsDeleted } : {}),
      ...(gone ? { podsGoneWithoutEviction: gone } : {}),
    };
  }
  const pods = Object.values(s.pods);
  // An aborted node's evicted pods still terminating will go: they count as evicted.
  const going = s.phase === NodePhase.Aborted ? terminatingEvicted(s) : 0;
  return {
    podsTotal: s.podsGone + pods.length,
    podsEvicted: s.podsGone - (s.deletedGone ?? 0) - (s.goneWithoutEviction ?? 0) + going,
    podsFailed: pods.filter((p) => p.state === 'Blocked').length,
    ...(s.podsDeleted ? { podsDeleted: s.podsDeleted } : {}),
    ...(s.goneWithoutEviction ? { podsGoneWithoutEviction: s.goneWithoutEviction } : {}),
  };
}
