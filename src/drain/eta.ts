/**
 * The plan's estimated completion (`status.estimatedCompletion`): when its last pod should be gone,
 * from the pace this plan has kept so far.
 *
 * The model: a drain's pace is set by what limits it — the PodDisruptionBudgets' rounds (each round
 * waits for the evicted pods to go and for their replacements to become Ready), the pods' grace
 * periods, the slots of maxUnavailableNodes. The plan sees them all at once in one number: the pods
 * its nodes saw leave per millisecond of drain time ({@link DrainPace}, paused time not counted).
 * The pods left are those its running nodes still hold, plus those of the nodes not started yet
 * (counted as the average of the last nodes that reported theirs, {@link podsLeft}). Remaining
 * time = pods left / pace.
 *
 * Why a plan-wide pace rather than a per-node one: in a plan whose PodDisruptionBudgets span its
 * nodes (the common case: a Deployment spread over the fleet), a PDB's budget is shared by every
 * node drained at once, so the plan drains at the PDB's pace however many nodes run; a per-node
 * pace measured with 5 nodes sharing a budget would be 5 times too slow once 1 node is left. The
 * cost: in a plan limited by its nodes rather than its budgets (no PDB, more nodes than slots),
 * the estimate is early once fewer nodes than maxUnavailableNodes remain.
 *
 * PURE and DETERMINISTIC: imported by workflow code (the pace) and the status rendering. No I/O, no
 * clock: the time is a parameter.
 */
import { DRAIN_ENDED_NODE_PHASES, DisruptionBlockKind, NodePhase, PlanPhase } from '../api/reasons.js';
import type { NodeState } from '../contract/progress.js';

/**
 * How long this plan has drained, kept by the plan workflow ({@link trackPace}): drain time is
 * wall time from the first node's start, less the time the plan was held (paused by the user, or
 * outside its maintenance windows). ms since epoch / ms.
 */
export interface DrainPace {
  /** When the first node's drain started, ms since epoch. */
  sinceMs: number;
  /** Time held since then (paused or outside the windows), ms, not counting a hold still going on. */
  heldMs: number;
  /** When the current hold began, ms since epoch; absent while not held. */
  heldSinceMs?: number;
}

/**
 * Updates the pace at `nowMs` (ms since epoch): starts it when the first node started, counts held
 * time. Returns the pace (a new one when it starts). Called by the plan workflow at each turn of
 * its loop; held time is counted from the turn that saw the hold begin to the one that saw it end.
 */
export function trackPace(
  pace: DrainPace | undefined,
  nowMs: number,
  nodesStarted: number,
  held: boolean,
): DrainPace | undefined {
  if (!pace)
    return nodesStarted > 0
      ? { sinceMs: nowMs, heldMs: 0, ...(held ? { heldSinceMs: nowMs } : {}) }
      : undefined;
  if (held && pace.heldSinceMs === undefined) pace.heldSinceMs = nowMs;
  else if (!held && pace.heldSinceMs !== undefined) {
    pace.heldMs += Math.max(0, nowMs - pace.heldSinceMs);
    delete pace.heldSinceMs;
  }
  return pace;
}

/** Drain time of the pace at `nowMs`: wall time since its start less held time, ms. */
export function drainTimeMs(pace: DrainPace, nowMs: number): number {
  const holding = pace.heldSinceMs !== undefined ? Math.max(0, nowMs - pace.heldSinceMs) : 0;
  return Math.max(0, nowMs - pace.sinceMs - pace.heldMs - holding);
}

/** What {@link estimateCompletionMs} reads: the plan's phase, its nodes, its pace, the time. */
export interface EtaInput {
  phase: PlanPhase;
  /** The plan's nodes as the plan keeps them (what each node last reported). */
  nodes: readonly NodeState[];
  /** Absent until the first node started. */
  pace?: DrainPace;
  /** ms since epoch. */
  nowMs: number;
}

/** Pods of a node that have left or will not be waited for (evicted, deleted, gone, failed). */
function podsDone(n: NodeState): number {
  return n.podsEvicted + (n.podsDeleted ?? 0) + (n.podsGoneWithoutEviction ?? 0) + n.podsFailed;
}

/**
 * Why no estimate can be made now, or undefined when one can. No estimate:
 * - `NotRunning`: the plan is not in phase Running (Pending: nothing observed yet; Paused: it
 *   depends on when it is resumed; a final phase: nothing is left to estimate);
 * - `NothingLeft`: every node's drain ended (the plan waits for a release, or is about to settle);
 * - `HeldUp`: a node is Blocked (pods that waiting does not evict, a node uncordoned by someone
 *   else, a failed hook) or Waiting for another plan, or a PodDisruptionBudget can never allow a
 *   disruption (kind Never): the end depends on a person, not on the pace;
 * - `NoPaceYet`: no pod has left yet, so there is no pace to extrapolate.
 */
export function noEstimateCause(
  input: EtaInput,
): 'NotRunning' | 'NothingLeft' | 'HeldUp' | 'NoPaceYet' | undefined {
  if (input.phase !== PlanPhase.Running) return 'NotRunning';
  const open = input.nodes.filter((n) => !DRAIN_ENDED_NODE_PHASES.has(n.phase));
  if (open.length === 0) return 'NothingLeft';
  if (
    open.some(
      (n) =>
        n.phase === NodePhase.Blocked ||
        n.phase === NodePhase.Waiting ||
        n.blockedBy.some((b) => b.kind === DisruptionBlockKind.Never),
    )
  )
    return 'HeldUp';
  const done = input.nodes.reduce((a, n) => a + podsDone(n), 0);
  if (!input.pace || done === 0 || drainTimeMs(input.pace, input.nowMs) <= 0) return 'NoPaceYet';
  return undefined;
}

/**
 * How many of the nodes that counted their pods last (in plan order, the order they start in) give
 * the pods expected on a node not counted yet.
 */
export const RECENT_NODES = 5;

/**
 * Pods left to the plan: those its nodes still hold, plus, for each node that has not counted its
 * pods yet (not started, or started and not claimed yet), the average of the last
 * {@link RECENT_NODES} nodes that did. The last ones, not all: with spec.cordon PerNode the
 * replacements of evicted pods land on the nodes not cordoned yet, so the nodes started later hold
 * more pods (the fleet benchmark: 836 pods left 20 nodes that held 600 at the start), and the recent
 * nodes say best what a node holds now.
 */
export function podsLeft(nodes: readonly NodeState[]): number {
  const counted = nodes
    .filter((n) => n.podsTotal > 0 || DRAIN_ENDED_NODE_PHASES.has(n.phase))
    .slice(-RECENT_NODES);
  const average = counted.length ? counted.reduce((a, n) => a + n.podsTotal, 0) / counted.length : 0;
  let left = 0;
  for (const n of nodes) {
    if (DRAIN_ENDED_NODE_PHASES.has(n.phase)) continue;
    if (n.podsTotal > 0) left += Math.max(0, n.podsTotal - podsDone(n));
    else left += average;
  }
  return left;
}

/**
 * The plan's estimated completion, ms since epoch (see the module comment for the model), or
 * undefined when there is none ({@link noEstimateCause} says why). Rounded to the second, so that
 * an estimate that did not move does not look changed.
 */
export function estimateCompletionMs(input: EtaInput): number | undefined {
  if (noEstimateCause(input) !== undefined) return undefined;
  const done = input.nodes.reduce((a, n) => a + podsDone(n), 0);
  const pace = done / drainTimeMs(input.pace!, input.nowMs); // pods per ms
  const remainingMs = podsLeft(input.nodes) / pace;
  return Math.round((input.nowMs + remainingMs) / 1000) * 1000;
}
