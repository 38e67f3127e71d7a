/**
 * The node lifecycle conditions of a plan's node (pure): which of Kubernetes' well-known
 * `MaintenancePlanned`, `DrainInProgress` and `Drained` conditions (KEP-5683) a node held by a plan
 * carries for its phase, which conditions on a Node are a plan's own, and the condition entries a
 * write must change.
 *
 * The rule (docs/design-decisions.md, "Node lifecycle conditions"):
 * - Only a node the plan holds (its claim: src/k8s/node-claim.ts) carries the plan's conditions;
 *   a node the plan waits for, has not reached yet or has handed back carries none of them.
 * - Held: `MaintenancePlanned` True; `DrainInProgress` True while the drain runs (Cordoned,
 *   Draining, Blocked while the plan runs), False when paused, drained or stopped; `Drained` True once
 *   the node is drained, False before. All three are written, so a consumer sees when the drain
 *   ended (`lastTransitionTime` of DrainInProgress).
 * - A condition is the plan's when its reason is a {@link NodeConditionReason} and its message begins
 *   `MaintenancePlan <name>:`. Only such a condition is ever removed; a condition of the same
 *   type another writer set while the plan holds the node is replaced (the claim is the plan's
 *   hold on the node), one set on a node the plan does not hold is never touched.
 * - Messages name the plan and the node's phase and reason, never counts: a write happens when
 *   the phase changes, not on every eviction.
 *
 * PURE: no I/O; the operator (src/operator/node-conditions.ts) and the hand-back
 * (src/k8s/node-conditions.ts) use it.
 */
import {
  FINAL_PLAN_PHASES,
  NodeConditionReason,
  NodeConditionType,
  NodePhase,
  type PlanPhase,
} from '../api/reasons.js';

/** One node condition as drainflow writes it (`v1.NodeCondition` without the times). */
export interface WantedNodeCondition {
  type: NodeConditionType;
  status: 'True' | 'False';
  reason: NodeConditionReason;
  /** Begins `MaintenancePlan <name>:` ({@link messagePrefix}). */
  message: string;
}

/** A `v1.NodeCondition` as read from a Node (times as RFC 3339 strings or Dates). */
export interface NodeConditionView {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string | Date;
  lastTransitionTime?: string | Date;
}

/** A node condition entry to write (strategic merge patch element, merged by `type`). */
export interface NodeConditionEntry extends WantedNodeCondition {
  /** RFC 3339: now. */
  lastHeartbeatTime: string;
  /** RFC 3339: now when the status changes, the existing value otherwise. */
  lastTransitionTime: string;
}

/** The node phases whose node a plan holds (claimed, cordoned, not handed back). */
const HELD_PHASES: ReadonlySet<NodePhase> = new Set<NodePhase>([
  NodePhase.Cordoned,
  NodePhase.Draining,
  NodePhase.Paused,
  NodePhase.Blocked,
  NodePhase.Drained,
  NodePhase.Failed,
]);

const OWN_TYPES: ReadonlySet<string> = new Set(Object.values(NodeConditionType));
const OWN_REASONS: ReadonlySet<string> = new Set(Object.values(NodeConditionReason));

/** The start of every message of `plan`'s conditions (names cannot hold `:` or spaces). */
export function messagePrefix(plan: string): string {
  return `MaintenancePlan ${plan}:`;
}

/**
 * The conditions a node held by plan `plan` carries in `node.phase` (plan in `planPhase`), or `[]`
 * for a phase in which the plan does not hold it (Pending, Waiting, Released, Skipped, Aborted,
 * Deleted, Previewed): the three conditions in type order MaintenancePlanned, DrainInProgress, Drained.
 *
 * @param plan the plan's `metadata.name`.
 * @param planPhase the plan's `status.phase` (a node Blocked in a final plan phase is no longer drained).
 * @param node the node's `status.nodes[]` phase and reason.
 */
export function wantedNodeConditions(
  plan: string,
  planPhase: PlanPhase | undefined,
  node: { phase: NodePhase; reason?: string },
): WantedNodeCondition[] {
  if (!HELD_PHASES.has(node.phase)) return [];
  const p = messagePrefix(plan);
  const why = node.reason ? ` (${node.reason})` : '';
  const planEnded = planPhase !== undefined && FINAL_PLAN_PHASES.has(planPhase);
  const cond = (
    type: NodeConditionType,
    status: boolean,
    reason: NodeConditionReason,
    text: string,
  ): WantedNodeCondition => ({ type, status: status ? 'True' : 'False', reason, message: `${p} ${text}` });

  const planned = cond(
    NodeConditionType.MaintenancePlanned,
    true,
    NodeConditionReason.PlanHoldsNode,
    'the plan claimed and cordoned this node for maintenance; it is handed back when the plan releases it or is deleted',
  );
  const notDrained = cond(
    NodeConditionType.Drained,
    false,
    NodeConditionReason.DrainNotCompleted,
    `not drained: node phase ${node.phase}${why}`,
  );
  const stopped = cond(
    NodeConditionType.DrainInProgress,
    false,
    NodeConditionReason.DrainStopped,
    `the drain stopped before the node was drained: node phase ${node.phase}${why}`,
  );
  switch (node.phase) {
    case NodePhase.Drained:
      return [
        planned,
        cond(
          NodeConditionType.DrainInProgress,
          false,
          NodeConditionReason.DrainCompleted,
          'the drain is done',
        ),
        cond(
          NodeConditionType.Drained,
          true,
          NodeConditionReason.DrainCompleted,
          'no pod that must leave is left on this node',
        ),
      ];
    case NodePhase.Failed:
      return [planned, stopped, notDrained];
    case NodePhase.Paused:
      return [
        planned,
        cond(
          NodeConditionType.DrainInProgress,
          false,
          NodeConditionReason.DrainPaused,
          `the drain is paused${why}`,
        ),
        notDrained,
      ];
    case NodePhase.Blocked:
      if (planEnded) return [planned, stopped, notDrained];
      return [
        planned,
        cond(
          NodeConditionType.DrainInProgress,
          true,
          NodeConditionReason.DrainBlocked,
          `the drain is held up${why}`,
        ),
        notDrained,
      ];
    default: // Cordoned, Draining
      if (planEnded) return [planned, stopped, notDrained];
      return [
        planned,
        cond(
          NodeConditionType.DrainInProgress,
          true,
          NodeConditionReason.DrainRunning,
          'evicting the pods of this node',
        ),
        notDrained,
      ];
  }
}

/** Whether `c` is one of plan `plan`'s node lifecycle conditions (see the module comment). */
export function isPlanCondition(c: NodeConditionView, plan: string): boolean {
  return (
    OWN_TYPES.has(c.type) &&
    OWN_REASONS.has(c.reason ?? '') &&
    (c.message ?? '').startsWith(`${messagePrefix(plan)} `)
  );
}

/** An RFC 3339 string of a time read from the API (the client gives Dates). */
function rfc3339(t: string | Date | undefined): string | undefined {
  if (t === undefined) return undefined;
  return typeof t === 'string' ? t : t.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * What one write must change so that the node carries `wanted` and none of `plan`'s other
 * conditions: the entries to set (those whose status, reason or message differ from the node's;
 * `lastTransitionTime` now only when the status changes, kept otherwise) and the types to remove
 * (the plan's own conditions of types not wanted). Both empty: nothing to write. Conditions of
 * other types, and the plan's types another writer set when `wanted` is empty, are left alone.
 *
 * @param current the Node's `status.conditions`.
 * @param wanted {@link wantedNodeConditions}, or `[]` to remove the plan's conditions.
 * @param now RFC 3339 (seconds), the time written.
 */
export function nodeConditionChanges(
  current: readonly NodeConditionView[],
  wanted: readonly WantedNodeCondition[],
  plan: string,
  now: string,
): { set: NodeConditionEntry[]; remove: NodeConditionType[] } {
  const byType = new Map(current.map((c) => [c.type, c]));
  const set: NodeConditionEntry[] = [];
  for (const w of wanted) {
    const have = byType.get(w.type);
    if (have && have.status === w.status && have.reason === w.reason && have.message === w.message) continue;
    const kept = have && have.status === w.status ? rfc3339(have.lastTransitionTime) : undefined;
    set.push({ ...w, lastHeartbeatTime: now, lastTransitionTime: kept ?? now });
  }
  const wantedTypes = new Set<string>(wanted.map((w) => w.type));
  const remove = current
    .filter((c) => !wantedTypes.has(c.type) && isPlanCondition(c, plan))
    .map((c) => c.type as NodeConditionType);
  return { set, remove };
}
