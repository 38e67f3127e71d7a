/**
 * The plan drain's pure half: the plan workflow's one JSON-plain state ({@link PlanRunState},
 * carried whole across continue-as-new) and the reducers over it — node progress merged in, which
 * nodes start next, the plan's outcome.
 *
 * PURE and DETERMINISTIC: imported by workflow code. No I/O, no clock: the time is a parameter.
 * Mutating reducers change the state they are given and return what the caller must act on.
 */
import type { ClaimCycleState } from './claim-cycle.js';
import type { RemedyRecord } from './remedy.js';
import type { OnDeadline } from '../api/plan.js';
import {
  BlockerReason,
  DeadlineReason,
  NodePhase,
  NodeReason,
  PlanPhase,
  PlanReason,
  PodPolicyReason,
  RollReason,
} from '../api/reasons.js';
import { aboutNode, type PlanState } from './projection.js';
import type { NodeProgress, NodeState } from '../contract/progress.js';
import { applyBudgetRequest, emptyLedger, forgetBudgetNode, type PdbBudgetLedger } from './pdb-budget.js';
import type { PdbBudgetRequest, PdbGrant } from '../contract/budget.js';
import type { ControlAction } from '../contract/plan-messages.js';

/** Where the plan workflow is. */
export type PlanStage =
  /** Resolving spec.nodeNames / spec.nodeSelector (once). */
  | 'Resolve'
  /** spec.cordon AllAtStart: claiming and cordoning every node before the first eviction. */
  | 'Cordon'
  /** Draining the nodes as child workflows, at most maxUnavailableNodes at once. */
  | 'Drain'
  /** Every node ended: waiting for release or abort to hand the nodes back. */
  | 'Settled';

/** The plan workflow's whole state. */
export interface PlanRunState {
  stage: PlanStage;
  /** What the status projection reads. */
  plan: PlanState;
  paused: boolean;
  aborted: boolean;
  released: boolean;
  /**
   * Nodes this plan holds the claim of, with whether it cordoned them and the claimed Node's
   * `metadata.uid` (the hand-back touches no other Node of that name).
   */
  claimed: Record<string, { cordonedByPlan: boolean; nodeUid?: string }>;
  /** Nodes whose drain (child workflow) was started, in start order. */
  started: string[];
  /** Nodes whose drain ended (final report or child result). */
  finished: string[];
  /** spec.cordon AllAtStart: nodes tried so far. */
  cordoned: number;
  /** A node failed: no further node starts; the plan ends Failed once the running ones end. */
  stopStarting: boolean;
  /** Phase of the last phase Event, so an Event goes out once per phase. */
  lastEventPhase?: PlanPhase;
  /** Keys (`node|reason` or `pod|reason`) of the Warning Events already recorded (capped). */
  announced: string[];
  /** Runs before this one (continue-as-new count). */
  continuedRuns: number;
  /** The PDB budgets handed out to the running nodes (plans of more than one node). */
  budget?: PdbBudgetLedger;
  /** spec.maxUnavailableNodes (set by runs that know the deadline policy; see {@link drainSettled}). */
  maxUnavailableNodes?: number;
  /** spec.onDeadline (set by runs that know the deadline policy). */
  onDeadline?: OnDeadline;
  /** When the drain settled, ms since epoch (set by runs that know the deadline policy). */
  settledAtMs?: number;
  /** No maintenance window is open (spec.windows): a pause apart from the user's {@link paused}. */
  outsideWindow?: boolean;
  /**
   * When the plan was last resumed (by the user, or a maintenance window opening), ms since epoch:
   * a node paused past the deadline reports its end only after it ({@link lostNodesAtMs}).
   */
  resumedAtMs?: number;
  /** uncordon AfterEachNode: nodes released one by one before their drain started. */
  releasedNodes?: string[];
  /** Claim cycles with other plans (src/drain/claim-cycle.ts): the last check's finding. */
  claimCycle?: ClaimCycleState;
  /**
   * The remedies by surge (spec.remedies.rolloutRestart, src/drain/remedy.ts): each proposal, its
   * approval, restart and outcome, oldest first.
   */
  remedies?: RemedyRecord[];
  /**
   * A node drained again after a deadline extension (src/drain/plan-extend.ts) starts a new child
   * workflow whose counts start at 0: what its earlier drains counted, by node, added to what the
   * new one reports ({@link mergeNodeProgress}), so the status keeps every eviction.
   */
  earlierDrains?: Record<string, EarlierDrainCounts>;
  /**
   * The run was asked to stop by a cancellation request from Temporal (UI, CLI): an abort whose
   * result says so (Aborted/WorkflowCanceled).
   */
  cancelled?: boolean;
  /**
   * What a run had not sent yet when it continued as new (only when it could not get quiet; see the
   * plan workflow's `quiesce`): the next run sends it first.
   */
  pending?: {
    events: PlanEvent[];
    forwards: PlanForward[];
    grants: { workflowId: string; grant: PdbGrant }[];
  };
}

/** The counts of a node's earlier drains ({@link PlanRunState.earlierDrains}). */
export interface EarlierDrainCounts {
  podsEvicted: number;
  attempts: number;
  tooManyRequests: number;
  podsDeleted: number;
  podsGoneWithoutEviction: number;
}

/** The counts a node's status shows now, as the earlier drains of its next drain. */
export function earlierDrainCounts(n: NodeState): EarlierDrainCounts {
  return {
    podsEvicted: n.podsEvicted ?? 0,
    attempts: n.attempts ?? 0,
    tooManyRequests: n.tooManyRequests ?? 0,
    podsDeleted: n.podsDeleted ?? 0,
    podsGoneWithoutEviction: n.podsGoneWithoutEviction ?? 0,
  };
}

/**
 * A control the plan forwards to one running node; `generation`: that of the user's control.
 * `deadline`: the plan's deadline moved later, to `deadlineMs` (ms since epoch; signal nodeDeadline).
 */
export interface PlanForward {
  node: string;
  action: ControlAction | 'deadline';
  generation?: number;
  deadlineMs?: number;
}

/** An Event the plan workflow should record on the plan. */
export interface PlanEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Node reasons that are news: one Warning Event each, the first time a node reports them. */
export const NEWS_NODE_REASONS: ReadonlySet<string> = new Set<NodeReason>([
  NodeReason.NodeHeldByOtherPlan,
  NodeReason.NodeUncordonedExternally,
  NodeReason.NodeDeleted,
]);

/** Most Event keys remembered (older ones may be announced again; Events aggregate by content). */
const ANNOUNCED_CAP = 2000;

/**
 * The deadline of a node's drain started at `nowMs`: the plan's, or `nowMs +
 * nodeDrainTimeoutSeconds` when that is earlier (spec.nodeDrainTimeoutSeconds). ms since epoch.
 */
export function nodeDeadlineMs(
  planDeadlineMs: number,
  nowMs: number,
  nodeDrainTimeoutSeconds?: number,
): number {
  if (nodeDrainTimeoutSeconds === undefined) return planDeadlineMs;
  return Math.min(planDeadlineMs, nowMs + nodeDrainTimeoutSeconds * 1000);
}

/**
 * Nodes whose drain ended at their deadline under onDeadline Stop (Blocked/DeadlineExceeded) while
 * this plan holds them: they stay cordoned, so they keep their slot of maxUnavailableNodes (a node only frees its slot when it
 * is drained, handed back, or released by the deadline policy). Only a per-node deadline makes this
 * happen before the plan's deadline.
 */
export function heldAtDeadline(s: PlanRunState): string[] {
  const stopped = new Set(
    s.plan.nodes
      .filter((n) => n.phase === NodePhase.Blocked && n.reason === NodeReason.DeadlineExceeded)
      .map((n) => n.name),
  );
  // O(nodes): the loop asks on every wake-up, and plans have up to thousands of nodes.
  return s.finished.filter((name) => stopped.has(name) && s.claimed[name] !== undefined);
}

/** A plan run's first state: at `stage` with the status `plan` and the spec's flags, no node touched yet. */
export function initialPlanRunState(
  stage: PlanStage,
  plan: PlanState,
  flags: Pick<PlanRunState, 'paused' | 'aborted' | 'released'>,
): PlanRunState {
  return {
    stage,
    plan,
    ...flags,
    claimed: {},
    started: [],
    finished: [],
    cordoned: 0,
    stopStarting: false,
    announced: [],
    continuedRuns: 0,
  };
}

/** A fresh node entry of the plan. */
export function pendingNode(name: string): NodeState {
  return {
    name,
    phase: NodePhase.Pending,
    podsTotal: 0,
    podsEvicted: 0,
    podsFailed: 0,
    blockedBy: [],
    attempts: 0,
    tooManyRequests: 0,
  };
}

function announce(s: PlanRunState, key: string): boolean {
  if (s.announced.includes(key)) return false;
  s.announced.push(key);
  if (s.announced.length > ANNOUNCED_CAP) s.announced.splice(0, s.announced.length - ANNOUNCED_CAP);
  return true;
}

/** Marks a node's drain as ended (idempotent). */
export function markFinished(s: PlanRunState, node: string): void {
  if (!s.finished.includes(node)) s.finished.push(node);
  if (s.budget) forgetBudgetNode(s.budget, node);
  const n = s.plan.nodes.find((x) => x.name === node);
  if (n?.phase === NodePhase.Failed) s.stopStarting = true;
}

/**
 * Merges a node's progress report into the plan. A `final` report ends the node's drain (so does
 * the child's result, whichever arrives first). A report for an unknown node is ignored.
 * @returns the Warning Events this report makes news of (new node reasons, new pod blockers other
 *   than the normal wait for a PodDisruptionBudget).
 */
export function mergeNodeProgress(s: PlanRunState, p: NodeProgress): PlanEvent[] {
  const n = s.plan.nodes.find((x) => x.name === p.node);
  if (!n) return [];
  if (s.finished.includes(p.node) && !p.final) return []; // a late report after the end
  // A node the plan handed back (Released) is done with: its final report can arrive after the
  // hand-back when the child's result came first, and must neither turn it back to Drained nor
  // claim it again.
  if (s.finished.includes(p.node) && n.phase === NodePhase.Released && !(p.node in s.claimed)) return [];
  n.phase = p.phase;
  n.reason = p.reason;
  n.message = p.message;
  if (p.heldBy !== undefined) n.heldBy = p.heldBy;
  else delete n.heldBy;
  // A node drained again after an extension: its earlier drains' counts plus this drain's (whose
  // total counts only the pods still there when it began).
  const e = s.earlierDrains?.[p.node];
  const gone = e ? e.podsEvicted + e.podsDeleted + e.podsGoneWithoutEviction : 0;
  n.podsTotal = p.podsTotal + gone;
  n.podsEvicted = p.podsEvicted + (e?.podsEvicted ?? 0);
  n.podsFailed = p.podsFailed;
  n.blockedBy = p.blockedBy;
  n.attempts = p.attempts + (e?.attempts ?? 0);
  n.tooManyRequests = p.tooManyRequests + (e?.tooManyRequests ?? 0);
  n.nextActionAtMs = p.nextActionAtMs;
  n.lastError = p.lastError;
  if (p.podsDeleted !== undefined || e?.podsDeleted)
    n.podsDeleted = (p.podsDeleted ?? 0) + (e?.podsDeleted ?? 0);
  if (p.podsGoneWithoutEviction !== undefined || e?.podsGoneWithoutEviction)
    n.podsGoneWithoutEviction = (p.podsGoneWithoutEviction ?? 0) + (e?.podsGoneWithoutEviction ?? 0);
  // spec.podOrder / opt-outs: the current order group and the skipped pods, as the node reports them.
  if (p.orderGroup !== undefined) n.orderGroup = p.orderGroup;
  else delete n.orderGroup;
  if (p.skipped?.length) n.skipped = p.skipped;
  else delete n.skipped;
  if (p.hook) n.hook = p.hook;
  if (p.claimed) {
    const nodeUid = p.nodeUid ?? s.claimed[p.node]?.nodeUid;
    s.claimed[p.node] = { cordonedByPlan: p.cordonedByPlan ?? false, ...(nodeUid ? { nodeUid } : {}) };
  }
  // A node skipped at its deadline, or handed back on its own (uncordon AfterEachNode), handed
  // itself back: the plan holds it no more. So does one deleted while it awaited its release (it
  // reports claimed false: nothing is left to hand back).
  else if (p.final && (p.phase === 'Skipped' || p.phase === 'Released' || p.phase === 'Deleted'))
    delete s.claimed[p.node];
  if (p.final) markFinished(s, p.node);
  const events: PlanEvent[] = [];
  if (p.final && p.phase === NodePhase.Skipped && announce(s, `${p.node}|${DeadlineReason.NodeSkipped}`))
    events.push({
      type: 'Warning',
      reason: DeadlineReason.NodeSkipped,
      message: `node ${p.node}: ${p.message ?? 'skipped at its deadline'}`,
    });
  if (p.reason && NEWS_NODE_REASONS.has(p.reason) && announce(s, `${p.node}|${p.reason}`)) {
    events.push({ type: 'Warning', reason: p.reason, message: p.message ?? `node ${p.node}: ${p.reason}` });
  }
  for (const b of p.blockedBy) {
    if (b.reason === BlockerReason.DisruptionBudget) continue; // waiting for a PDB is normal, not news
    if (!announce(s, `${b.pod}|${b.reason}`)) continue;
    events.push({ type: 'Warning', reason: b.reason, message: `node ${p.node}: pod ${b.pod}: ${b.message}` });
  }
  return events;
}

/** Marks a node whose child workflow failed (or could not start) as Failed with the error. */
export function nodeWorkflowFailed(s: PlanRunState, node: string, message: string): void {
  const n = s.plan.nodes.find((x) => x.name === node);
  if (n) {
    n.phase = NodePhase.Failed;
    n.reason = NodeReason.NodeWorkflowFailed;
    n.message = message;
  }
  markFinished(s, node);
}

/**
 * Applies a running node's PDB budget request (a late one from a node whose drain ended, or one
 * from a node this plan does not drain, is ignored: nothing it holds counts any more).
 */
export function applyNodeBudgetRequest(s: PlanRunState, req: PdbBudgetRequest): void {
  if (!s.started.includes(req.node) || s.finished.includes(req.node)) return;
  applyBudgetRequest((s.budget ??= emptyLedger()), req);
}

/** Nodes whose drain runs now (started, not ended). Each holds one slot of maxUnavailableNodes. */
export function runningNodes(s: PlanRunState): string[] {
  const finished = new Set(s.finished); // O(nodes), not O(started x finished)
  return s.started.filter((n) => !finished.has(n));
}

/**
 * The nodes to start now: the next not-started nodes in plan order, as many as free slots of
 * `maxUnavailableNodes` allow. None while paused, aborted, past the deadline or after a failure.
 */
export function nodesToStart(s: PlanRunState, maxUnavailableNodes: number, nowMs: number): string[] {
  if (s.paused || s.aborted || s.stopStarting) return [];
  if (s.plan.deadlineMs !== undefined && nowMs >= s.plan.deadlineMs) return [];
  const free = maxUnavailableNodes - runningNodes(s).length - heldAtDeadline(s).length;
  if (free <= 0) return [];
  const started = new Set(s.started);
  const out: string[] = [];
  for (const n of s.plan.nodes) {
    if (out.length >= free) break;
    if (!started.has(n.name)) out.push(n.name);
  }
  return out;
}

/**
 * From when a running node that has not reported its end counts as lost (its workflow was
 * terminated), ms since epoch: `graceMs` after the plan's deadline, or after the last resume when
 * that came later; undefined while the plan is held (paused by the user or outside its windows):
 * a node paused past its deadline applies its deadline policy only once resumed.
 */
export function lostNodesAtMs(s: PlanRunState, held: boolean, graceMs: number): number | undefined {
  if (held || s.plan.deadlineMs === undefined) return undefined;
  return Math.max(s.plan.deadlineMs, s.resumedAtMs ?? 0) + graceMs;
}

/** Whether every node either ended or can no longer start. */
export function drainSettled(s: PlanRunState, nowMs: number): boolean {
  if (runningNodes(s).length > 0) return false;
  const pastDeadline = s.plan.deadlineMs !== undefined && nowMs >= s.plan.deadlineMs;
  // Every slot held by a node stopped at its own deadline (onDeadline Stop): no node can start any more.
  const noSlot = s.maxUnavailableNodes !== undefined && heldAtDeadline(s).length >= s.maxUnavailableNodes;
  return s.aborted || s.stopStarting || pastDeadline || noSlot || s.started.length === s.plan.nodes.length;
}

function pastPlanDeadline(s: PlanRunState): boolean {
  // planOutcome runs when the drain settled; nodes that never started past the plan's deadline say so.
  return s.plan.deadlineMs !== undefined && s.settledAtMs !== undefined && s.settledAtMs >= s.plan.deadlineMs;
}

/**
 * The plan's phase once the drain settled: Completed when every node was handed back on its own
 * (uncordon AfterEachNode; reason AllNodesHandedBack, or HandedBackWithHookFailures naming the nodes
 * released by hand after a failed afterDrain hook), Drained when every node is drained (or deleted), Failed
 * when a node failed, Blocked/DeadlineExceeded when the deadline passed (nodes never started are
 * marked so), else Blocked/PodsNotEvictable. Writes the not-started nodes' phase.
 * @param planName the MaintenancePlan's name, for the `drainflow extend` command the
 *   DeadlineExceeded message gives (a placeholder `PLAN` without it).
 */
export function planOutcome(
  s: PlanRunState,
  planName = 'PLAN',
): { phase: PlanPhase; reason: string; message: string } {
  const nodes = s.plan.nodes;
  for (const n of nodes) {
    if (!s.started.includes(n.name)) {
      n.phase = NodePhase.Blocked;
      const held = heldAtDeadline(s);
      const slotsHeld = !s.stopStarting && held.length > 0 && !pastPlanDeadline(s);
      n.reason = s.stopStarting || slotsHeld ? NodeReason.NotStarted : NodeReason.DeadlineExceeded;
      n.message = s.stopStarting
        ? 'not started: another node of the plan failed'
        : slotsHeld
          ? `not started: node(s) ${held.join(', ')} stopped at their deadline and stay cordoned (onDeadline Stop), holding every slot of maxUnavailableNodes`
          : 'deadline passed before the node was started';
    }
  }
  // At most 10 blockers, and how many more, so a cut list does not read as the whole.
  const describeBlockers = () => {
    const all = nodes.flatMap((n) =>
      n.blockedBy.map((b) => `${b.pod}${b.pdb ? ` (PDB ${b.pdb})` : ''}: ${b.reason}`),
    );
    const more = all.length > 10 ? `; and ${all.length - 10} more` : '';
    return all.slice(0, 10).join('; ') + more;
  };
  const failed = nodes.filter((n) => n.phase === NodePhase.Failed);
  if (failed.length > 0)
    return {
      phase: PlanPhase.Failed,
      reason: failed[0]!.reason ?? PlanReason.NodeFailed,
      message: failed.map((n) => `${n.name}: ${n.message ?? ''}`).join('; '),
    };
  if (
    nodes.every((n) => n.phase === 'Released' || n.phase === 'Deleted') &&
    nodes.some((n) => n.phase === 'Released')
  ) {
    const message = `${nodes.filter((n) => n.phase === 'Released').length} node(s) drained and handed back one by one (uncordon AfterEachNode)`;
    // Handed back by hand after a failed afterDrain hook: the plan completed, but says so.
    const hookFailed = nodes.filter((n) => n.reason === RollReason.HandedBackAfterHookFailure);
    if (hookFailed.length > 0)
      return {
        phase: 'Completed',
        reason: PlanReason.HandedBackWithHookFailures,
        message: `${message}; handed back by hand after a failed hook: ${hookFailed
          .slice(0, 10)
          .map((n) => `${n.name} (${n.message ?? 'hook failed'})`)
          .join('; ')}${hookFailed.length > 10 ? `; and ${hookFailed.length - 10} more` : ''}`,
      };
    return { phase: 'Completed', reason: 'AllNodesHandedBack', message };
  }
  if (nodes.every((n) => n.phase === 'Drained' || n.phase === 'Released' || n.phase === 'Deleted')) {
    const deleted = nodes.filter((n) => n.phase === 'Deleted').map((n) => n.name);
    const back = nodes.filter((n) => n.phase === 'Released').length;
    // Pods that came back to their cordoned node are left there (src/drain/returning.ts): say so,
    // or "drained" reads as "empty".
    const returned = nodes.reduce(
      (k, n) => k + (n.skipped ?? []).filter((p) => p.reason === PodPolicyReason.ReturnsToNode).length,
      0,
    );
    return {
      phase: PlanPhase.Drained,
      reason: PlanReason.AllNodesDrained,
      message: `${nodes.length - deleted.length} node(s) drained${back ? ` (${back} handed back already)` : ''}${deleted.length ? `; deleted during the drain: ${deleted.join(', ')}` : ''}${returned ? `; ${returned} pod(s) came back to their node and were left there (ReturnsToNode)` : ''}`,
    };
  }
  // Skipped: at the deadline (onDeadline SkipNode), or released by hand after a failed beforeDrain hook.
  const skipped = nodes.filter(
    (n) => n.phase === NodePhase.Skipped && n.reason !== RollReason.ReleasedUndrained,
  );
  const undrained = nodes.filter(
    (n) => n.phase === NodePhase.Skipped && n.reason === RollReason.ReleasedUndrained,
  );
  if (
    skipped.length + undrained.length > 0 &&
    nodes.every((n) =>
      ([NodePhase.Drained, NodePhase.Released, NodePhase.Deleted, NodePhase.Skipped] as NodePhase[]).includes(
        n.phase,
      ),
    )
  )
    return {
      phase: PlanPhase.Blocked,
      reason: DeadlineReason.NodesSkipped,
      message: `${nodes.filter((n) => n.phase === 'Drained' || n.phase === 'Released').length} node(s) drained${skipped.length ? `; skipped at their deadline and handed back: ${skipped.map((n) => n.name).join(', ')}` : ''}${undrained.length ? `; released undrained after a failed beforeDrain hook: ${undrained.map((n) => n.name).join(', ')}` : ''}${describeBlockers() ? `; held at their deadline by ${describeBlockers()}` : ''}`,
    };
  const hookFailed = nodes.find((n) => n.reason === RollReason.HookFailed);
  if (hookFailed)
    return {
      phase: PlanPhase.Blocked,
      reason: PlanReason.HookFailed,
      message: `node ${hookFailed.name}: ${hookFailed.message ?? 'a hook failed'}`,
    };
  const cancelled = nodes.filter((n) => n.reason === NodeReason.WorkflowCanceled).map((n) => n.name);
  if (cancelled.length > 0)
    return {
      phase: PlanPhase.Blocked,
      reason: PlanReason.NodeDrainCanceled,
      message: `the drain of ${cancelled.slice(0, 10).join(', ')}${cancelled.length > 10 ? ` and ${cancelled.length - 10} more` : ''} was cancelled from Temporal; release, abort or delete the plan to hand the nodes back`,
    };
  if (nodes.some((n) => n.reason === NodeReason.DeadlineExceeded || n.reason === NodeReason.NotStarted))
    return {
      phase: PlanPhase.Blocked,
      reason: PlanReason.DeadlineExceeded,
      message: `deadline passed; still blocking: ${describeBlockers() || 'nodes not drained'}; the nodes stay cordoned and claimed: give the plan more time with drainflow extend ${planName} --by DURATION (or raise spec.drainTimeoutSeconds), or release, abort or delete it to hand them back`,
    };
  return {
    phase: PlanPhase.Blocked,
    reason: PlanReason.PodsNotEvictable,
    message: `pods that cannot be evicted: ${describeBlockers()}`,
  };
}

/**
 * `draining R of N node(s)` with the nodes whose drain runs (R) among the plan's (N), and how many
 * are done (drained, released, skipped…); between two nodes of a rolling plan (none running)
 * `D of N node(s) done; the next starts`.
 */
function drainingWords(s: PlanRunState, running: number): string {
  const total = s.plan.nodes.length;
  const done = s.finished.length;
  if (running === 0 && done > 0) return `${done} of ${total} node(s) done; the next starts`;
  return `draining ${running} of ${total} node(s)${done ? `, ${done} done` : ''}`;
}

/**
 * The reason and message of a Running plan: `Draining`, or — when every node whose drain runs is
 * held up (Blocked or Waiting) — that node's reason (e.g. PodsNotEvictable,
 * NodeUncordonedExternally, NodeHeldByOtherPlan) naming the first blockers, so `kubectl get mp`
 * shows why a plan makes no progress while it keeps trying until its deadline.
 */
export function runningSummary(
  s: PlanRunState,
  /** The plan's name (metadata.name), for the release hint. */
  planName: string,
): { reason: string; message: string } {
  const byName = new Map(s.plan.nodes.map((n) => [n.name, n]));
  const running = runningNodes(s)
    .map((name) => byName.get(name))
    .filter((n): n is NodeState => n !== undefined);
  const held = running.filter((n) => n.phase === NodePhase.Blocked || n.phase === NodePhase.Waiting);
  const awaiting = running.filter((n) => n.reason === RollReason.AwaitingRelease);
  if (running.length > 0 && awaiting.length === running.length)
    return {
      reason: PlanReason.AwaitingRelease,
      message: `node(s) ${awaiting.map((n) => n.name).join(', ')} drained, waiting for a per-node release`,
    };
  if (running.length === 0 || held.length < running.length)
    return {
      reason: 'Draining',
      message: drainingWords(s, running.length),
    };
  // A failed hook is not retried: its node waits for a per-node release or an abort.
  const hookFailed = held.filter((n) => n.reason === 'HookFailed');
  if (hookFailed.length === held.length)
    return {
      reason: 'HookFailed',
      message: `${held.length} node(s) held up by a failed hook, not retried: ${hookFailed.map((n) => aboutNode(n.name, n.message ?? 'hook failed')).join('; ')}; fix the node, then release it (drainflow release ${planName} --node ${hookFailed[0]!.name}) or abort the plan`,
    };
  const first = held[0]!;
  const blockers = held
    .flatMap((n) => n.blockedBy.map((b) => `${b.pod}${b.pdb ? ` (PDB ${b.pdb})` : ''}: ${b.reason}`))
    .slice(0, 5)
    .join('; ');
  return {
    reason: first.reason ?? 'NodeBlocked',
    message: `${held.length} node(s) held up, retrying until the deadline: ${blockers || aboutNode(first.name, first.message ?? first.phase)}`,
  };
}
