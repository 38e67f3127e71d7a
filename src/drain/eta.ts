/**
 * The plan's estimated completion (`status.estimatedCompletion`): when its last pod should be gone,
 * from the pace this plan has kept so far.
 *
 * The model: a drain's pace is set by what limits it — the PodDisruptionBudgets' rounds (each round
 * waits for the evicted pods to go and for their replacements to become Ready), the pods' grace
 * periods, the slots of maxUnavailableNodes. The plan sees them all at once in one number: the pods
 * its nodes saw leave per millisecond over the recent part of the drain ({@link DrainPace}).
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
import {
  DRAIN_ENDED_NODE_PHASES,
  DisruptionBlockKind,
  NodePhase,
  PlanPhase,
  RollReason,
} from '../api/reasons.js';
import type { NodeState } from '../contract/progress.js';

/** Most samples a {@link DrainPace} keeps. */
export const PACE_SAMPLES = 12;

/** Least time between two samples of a {@link DrainPace}, ms. */
export const PACE_MIN_SPACING_MS = 2_000;

/**
 * The pace of this plan's drain, kept by the plan workflow ({@link trackPace}): samples of the pods
 * gone so far (summed over its nodes) and when. The pace is measured from the oldest sample kept to
 * now. Samples start with the first pod gone, so the start-up (claiming and cordoning the first
 * nodes, the first observations) does not count against it; they are taken at least
 * `max(2 s, time since the first / 12)` apart and at most 12 are kept, so the pace covers about the
 * recent half (to two thirds) of the drain, however long it is: enough PDB rounds to even out their
 * bursts, recent enough to follow a change of pace. A hold (paused, outside the maintenance
 * windows) clears them: the pace starts again once the plan resumes.
 */
export interface DrainPace {
  /** Pods gone (`done`, over all nodes) at `atMs` (ms since epoch), oldest first. */
  samples: { atMs: number; done: number }[];
  /** When this stretch's first sample was taken, ms since epoch (the spacing grows with the time since). */
  firstAtMs?: number;
}

/**
 * Updates the pace at `nowMs` (ms since epoch) with `done`, the pods gone over all nodes, and
 * whether the plan is held. The plan workflow calls it only in turns where `done` or `held` changed,
 * so the pace (part of the status's structured state) changes only with a status that changes
 * anyway: it costs no status write of its own.
 */
export function trackPace(
  pace: DrainPace | undefined,
  nowMs: number,
  done: number,
  held: boolean,
): DrainPace | undefined {
  if (held) return pace?.samples.length ? { samples: [] } : pace;
  const p = pace ?? { samples: [] };
  const last = p.samples.at(-1);
  if (!last) {
    if (done <= 0) return pace;
    return { samples: [{ atMs: nowMs, done }], firstAtMs: nowMs };
  }
  const spacing = Math.max(PACE_MIN_SPACING_MS, (nowMs - (p.firstAtMs ?? last.atMs)) / PACE_SAMPLES);
  if (done === last.done || nowMs - last.atMs < spacing) return p;
  p.samples.push({ atMs: nowMs, done });
  if (p.samples.length > PACE_SAMPLES) p.samples.splice(0, p.samples.length - PACE_SAMPLES);
  return p;
}

/** Pods gone of a node: evicted, deleted at the deadline, gone without eviction, failed (not waited for). */
export function podsDone(n: NodeState): number {
  return n.podsEvicted + (n.podsDeleted ?? 0) + (n.podsGoneWithoutEviction ?? 0) + n.podsFailed;
}

/** The pace at `nowMs`, pods per ms, from the oldest sample kept; undefined while none can be told. */
export function pacePerMs(pace: DrainPace | undefined, done: number, nowMs: number): number | undefined {
  const first = pace?.samples[0];
  if (!first || nowMs <= first.atMs || done <= first.done) return undefined;
  return (done - first.done) / (nowMs - first.atMs);
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

/**
 * Why no estimate can be made now, or undefined when one can. No estimate:
 * - `NotRunning`: the plan is not in phase Running (Pending: nothing observed yet; Paused: it
 *   depends on when it is resumed; a final phase: nothing is left to estimate);
 * - `NothingLeft`: every node's drain ended (the plan waits for a release, or is about to settle);
 * - `HeldUp`: a node is Blocked (pods that waiting does not evict, a node uncordoned by someone
 *   else, a failed hook) or Waiting for another plan, a PodDisruptionBudget can never allow a
 *   disruption (kind Never), or a drained node waits for a per-node release (uncordon
 *   AfterEachNode): the end depends on a person, not on the pace;
 * - `NoPaceYet`: no pace is known yet: no pod has left since the pace's first sample (taken when
 *   the first pod left, or when the plan resumed).
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
    ) ||
    // uncordon AfterEachNode: a drained node waiting for a per-node release holds its slot.
    input.nodes.some((n) => n.reason === RollReason.AwaitingRelease)
  )
    return 'HeldUp';
  const done = input.nodes.reduce((a, n) => a + podsDone(n), 0);
  if (pacePerMs(input.pace, done, input.nowMs) === undefined) return 'NoPaceYet';
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
 * undefined when there is none ({@link noEstimateCause} says why). Rounded up to the second: never
 * before `nowMs`, and an estimate that did not move does not look changed.
 */
export function estimateCompletionMs(input: EtaInput): number | undefined {
  if (noEstimateCause(input) !== undefined) return undefined;
  const done = input.nodes.reduce((a, n) => a + podsDone(n), 0);
  const remainingMs = podsLeft(input.nodes) / pacePerMs(input.pace, done, input.nowMs)!;
  return Math.ceil((input.nowMs + remainingMs) / 1000) * 1000;
}
