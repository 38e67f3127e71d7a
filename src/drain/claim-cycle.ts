/**
 * Claim cycles between plans: plan A waits for a node that plan B holds while B waits (directly,
 * or through other plans) for a node that A holds. Node claims are only ever given back when a
 * plan ends (released, aborted, deleted) or a node is handed back on its own, so such plans wait
 * for each other until their deadlines: a deadlock. drainflow does not break it (which plan should
 * yield is the admin's call); each plan in the cycle says so, naming the others and the nodes.
 *
 * The wait-for graph is read from the cluster: an edge `P waits for Q on node N` is a node N that
 * plan P reports Waiting (reason NodeHeldByOtherPlan, `status.nodes[].heldBy` Q) and whose claim
 * annotation (NODE_CLAIM_ANNOTATION, src/api/plan.ts) still names Q. The check goes through the edges the
 * worker gathered ({@link WaitEdge}); this module only finds the cycle and words it.
 *
 * PURE and DETERMINISTIC: imported by workflow code. No I/O, no clock.
 */
import type { NodeStatus } from '../api/plan.js';
import { ConditionReason, ConditionType, NodePhase, NodeReason } from '../api/reasons.js';
import type { ConditionUpdate } from './conditions.js';

/** One wait: plan `plan` waits for node `node`, whose claim names plan `heldBy`. */
export interface WaitEdge {
  plan: string;
  node: string;
  heldBy: string;
}

/** Most plans the worker follows from a plan's waits when it gathers the wait-for graph. */
export const MAX_CYCLE_PLANS = 16;

/**
 * The waits a plan's status shows: its nodes Waiting with reason NodeHeldByOtherPlan and a
 * `heldBy` other than the plan itself, in status order.
 */
export function statusWaits(
  plan: string,
  nodes: readonly Pick<NodeStatus, 'name' | 'phase' | 'reason' | 'heldBy'>[],
): WaitEdge[] {
  return nodes
    .filter(
      (n) =>
        n.phase === NodePhase.Waiting &&
        n.reason === NodeReason.NodeHeldByOtherPlan &&
        n.heldBy !== undefined &&
        n.heldBy !== '' &&
        n.heldBy !== plan,
    )
    .map((n) => ({ plan, node: n.name, heldBy: n.heldBy! }));
}

/**
 * The shortest cycle of waits through plan `self`, as its edges from `self` round to `self` (the
 * first edge's `plan` is `self`, each edge's `heldBy` is the next edge's `plan`, the last edge's
 * `heldBy` is `self`); undefined when `self` is in none. Breadth-first from `self`; among edges of
 * one plan, the first in the given order wins, so equal inputs give equal answers.
 */
export function findClaimCycle(self: string, edges: readonly WaitEdge[]): WaitEdge[] | undefined {
  const from = new Map<string, WaitEdge[]>();
  for (const e of edges) {
    if (e.plan === e.heldBy) continue;
    const l = from.get(e.plan) ?? [];
    l.push(e);
    from.set(e.plan, l);
  }
  // Breadth-first: `via` remembers the edge each plan was first reached by.
  const via = new Map<string, WaitEdge>();
  const queue: string[] = [self];
  for (let i = 0; i < queue.length; i++) {
    const p = queue[i]!;
    for (const e of from.get(p) ?? []) {
      if (e.heldBy === self) {
        const path: WaitEdge[] = [e];
        for (let q = p; q !== self;) {
          const back = via.get(q)!;
          path.unshift(back);
          q = back.plan;
        }
        return path;
      }
      if (!via.has(e.heldBy)) {
        via.set(e.heldBy, e);
        queue.push(e.heldBy);
      }
    }
  }
  return undefined;
}

/** A key of a cycle (the same cycle gives the same key; a Warning goes out once per key). */
export function claimCycleKey(cycle: readonly WaitEdge[]): string {
  return cycle.map((e) => `${e.plan}>${e.node}>${e.heldBy}`).join('|');
}

/**
 * The words of a cycle seen from its first plan, e.g. `plan a waits for node n2, held by plan b;
 * plan b waits for node n1, held by plan a: these plans wait for each other until one of them
 * ends; abort or release one of them (drainflow abort b)`.
 */
export function claimCycleMessage(cycle: readonly WaitEdge[]): string {
  const waits = cycle
    .map((e) => `plan ${e.plan} waits for node ${e.node}, held by plan ${e.heldBy}`)
    .join('; ');
  const other = cycle.length > 1 ? cycle[1]!.plan : cycle[0]!.heldBy;
  return `claim cycle: ${waits}: these plans wait for each other until one of them ends or its deadline passes; abort or release one of them (e.g. drainflow abort ${other})`;
}

/** What a plan carries about claim cycles (JSON-plain, in its run state). */
export interface ClaimCycleState {
  /** The last check found a cycle through this plan. */
  active: boolean;
  /** The cycle's words ({@link claimCycleMessage}), or why it is over. */
  message: string;
  /** Keys ({@link claimCycleKey}) of the cycles a Warning Event went out for (the last few). */
  warned: string[];
}

/** Cycle keys remembered for their Warning (a plan meets few cycles; older ones may warn again). */
const WARNED_CAP = 20;

/**
 * The state after a check that found `cycle` (undefined: none): `warning` is the message of the
 * Warning Event to send (once per cycle), `changed` whether the plan's status changes.
 */
export function applyClaimCycle(
  prev: ClaimCycleState | undefined,
  cycle: readonly WaitEdge[] | undefined,
): { next: ClaimCycleState | undefined; warning?: string; changed: boolean } {
  if (!cycle) {
    if (!prev?.active) return { next: prev, changed: false };
    return {
      next: { ...prev, active: false, message: 'no claim cycle: the plans no longer wait for each other' },
      changed: true,
    };
  }
  const key = claimCycleKey(cycle);
  const message = claimCycleMessage(cycle);
  const warned = prev?.warned ?? [];
  const fresh = !warned.includes(key);
  const next: ClaimCycleState = {
    active: true,
    message,
    warned: fresh ? [...warned, key].slice(-WARNED_CAP) : warned,
  };
  return {
    next,
    ...(fresh ? { warning: message } : {}),
    changed: !prev?.active || prev.message !== message || fresh,
  };
}

/**
 * The ClaimCycle condition of a plan: True (reason WaitsForEachOther) while a cycle holds, False
 * (NoClaimCycle) once one was seen and is over; none for a plan never seen in a cycle.
 */
export function claimCycleCondition(
  state: ClaimCycleState | undefined,
  observedGeneration: number | undefined,
): ConditionUpdate | undefined {
  if (!state) return undefined;
  return {
    type: ConditionType.ClaimCycle,
    status: state.active ? 'True' : 'False',
    reason: state.active ? ConditionReason.WaitsForEachOther : ConditionReason.NoClaimCycle,
    message: state.message,
    observedGeneration,
  };
}
