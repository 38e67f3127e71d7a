/**
 * The plan's stage machine as a pure decision: {@link decidePlan} reads the plan workflow's state
 * ({@link PlanRunState}) and says what the workflow does next — claim and cordon a batch of nodes
 * (spec.cordon AllAtStart), start node drains, give up on lost nodes, settle the drain, hand the
 * nodes back, end the run — as a list of {@link PlanAction}s the workflow runs in order.
 *
 * Stages: Cordon → Drain → Settled (→ the run ends). Resolve (the nodes, once) and a Preflight
 * plan's preview run before this machine, in the workflow.
 *
 * PURE and DETERMINISTIC: no I/O, no clock (the time is in the context), nothing is mutated.
 */
import type { UncordonPolicy } from '../api/plan.js';
import { PlanPhase, PlanReason } from '../api/reasons.js';
import {
  drainSettled,
  lostNodesAtMs,
  nodesToStart,
  runningNodes,
  runningSummary,
  type PlanRunState,
} from './plan-drain.js';
import { abortRemedyNote } from './remedy-words.js';

/** What the workflow reads besides the state when it decides. */
export interface PlanDecisionContext {
  /** The workflow's time, ms since epoch. */
  nowMs: number;
  /** Paused by the user or outside the maintenance windows (no node starts or is cordoned). */
  held: boolean;
  /** Child workflows asked to start whose start has not been answered yet. */
  pendingStarts: number;
  /** The nodes were handed back since the workflow last waited (the hand-back runs once per release or abort). */
  handedBack: boolean;
  /** spec.uncordon. */
  uncordon: UncordonPolicy;
  /** spec.maxUnavailableNodes. */
  maxUnavailableNodes: number;
  /** Nodes cordoned (spec.cordon AllAtStart) in one batch of calls at once. */
  cordonBatch: number;
  /** After the deadline, how long a running node may take to report its end before it counts as lost, ms. */
  lostGraceMs: number;
  /** The plan's name (metadata.name), for the words of a Running plan. */
  planName: string;
}

/** The end of a plan run: its phase and why. */
export interface PlanEnd {
  phase: PlanPhase;
  reason: string;
  message: string;
}

/** One thing the plan workflow does, in the order given. */
export type PlanAction =
  /** Sets the plan's phase (an Event goes out when the phase changes). */
  | ({ do: 'phase' } & PlanEnd)
  /** Leaves the Cordon stage for the Drain stage. */
  | { do: 'drain' }
  /** Claims and cordons these nodes (one batch), then counts them as tried. */
  | { do: 'cordon'; nodes: string[] }
  /** Starts the drains (child workflows) of these nodes. */
  | { do: 'start'; nodes: string[] }
  /** These running nodes never reported their end: they count as failed with `message`. */
  | { do: 'lost'; nodes: string[]; message: string }
  /** The drain settled: stage Settled, and (unless aborted) the plan's outcome as its phase. */
  | { do: 'settle' }
  /** Hands these claimed nodes back (releases the claim; uncordons them when `uncordon`). */
  | { do: 'handBack'; nodes: string[]; uncordon: boolean }
  /** uncordon OnDelete: the release is done; the nodes stay cordoned until the plan is deleted. */
  | { do: 'keepCordoned' }
  /** Ends the run with this result. */
  | ({ do: 'end' } & PlanEnd);

/** What to do now, and whether to decide again at once (no status write or wait between). */
export interface PlanDecision {
  actions: PlanAction[];
  /** The actions change what the next decision sees: decide again before writing status and waiting. */
  again: boolean;
}

const WAIT: PlanDecision = { actions: [], again: false };

/** Why a running node that never reported its end failed. */
export const LOST_NODE_MESSAGE = 'the node drain did not report its end after the deadline';

/** The next actions of the plan workflow's stage machine. See the module comment. */
export function decidePlan(s: PlanRunState, ctx: PlanDecisionContext): PlanDecision {
  if (s.stage === 'Cordon') return decideCordon(s, ctx);
  if (s.stage === 'Drain') return decideDrain(s, ctx);
  if (s.stage === 'Settled') return decideSettled(s, ctx);
  return WAIT;
}

/** Whether the workflow goes on cordoning without waiting (spec.cordon AllAtStart, not held or aborted). */
export function keepCordoning(s: PlanRunState, held: boolean): boolean {
  return s.stage === 'Cordon' && !held && !s.aborted;
}

function phase(p: PlanPhase, reason: string, message: string): PlanAction {
  return { do: 'phase', phase: p, reason, message };
}

/**
 * spec.cordon AllAtStart: claim and cordon every node before the first eviction, so evicted pods
 * are rescheduled only onto nodes outside the plan; then drain (at once when aborted or past the
 * deadline).
 */
function decideCordon(s: PlanRunState, ctx: PlanDecisionContext): PlanDecision {
  const deadlineMs = s.plan.deadlineMs ?? Infinity;
  const total = s.plan.nodes.length;
  if (s.aborted || ctx.nowMs >= deadlineMs || s.cordoned >= total) {
    const draining = !s.aborted && !ctx.held && ctx.nowMs < deadlineMs;
    return {
      actions: [
        { do: 'drain' },
        ...(draining ? [phase(PlanPhase.Running, PlanReason.Draining, `draining ${total} node(s)`)] : []),
      ],
      again: true,
    };
  }
  if (ctx.held) return WAIT;
  const cordoning = s.plan.phase === PlanPhase.Running && s.plan.reason === PlanReason.Cordoning;
  return {
    actions: [
      ...(cordoning
        ? []
        : [
            phase(
              PlanPhase.Running,
              PlanReason.Cordoning,
              `cordoning ${total} node(s) before the first eviction`,
            ),
          ]),
      {
        do: 'cordon',
        nodes: s.plan.nodes.slice(s.cordoned, s.cordoned + ctx.cordonBatch).map((n) => n.name),
      },
    ],
    again: false,
  };
}

/**
 * Drain: start nodes into free slots (not outside the windows), give up on running nodes lost after
 * the deadline (not while held: a node paused past its deadline waits for the resume), settle once
 * every node ended or none can start, and keep the Running phase's words current.
 */
function decideDrain(s: PlanRunState, ctx: PlanDecisionContext): PlanDecision {
  const starts = s.outsideWindow ? [] : nodesToStart(s, ctx.maxUnavailableNodes, ctx.nowMs);
  if (starts.length > 0) return { actions: [{ do: 'start', nodes: starts }], again: true };
  const lostAt = lostNodesAtMs(s, ctx.held, ctx.lostGraceMs);
  if (lostAt !== undefined && ctx.nowMs >= lostAt && ctx.pendingStarts === 0) {
    const lost = runningNodes(s);
    if (lost.length > 0)
      return { actions: [{ do: 'lost', nodes: lost, message: LOST_NODE_MESSAGE }], again: true };
  }
  if (ctx.pendingStarts === 0 && drainSettled(s, ctx.nowMs))
    return { actions: [{ do: 'settle' }], again: true };
  if (s.paused && s.plan.phase === PlanPhase.Running)
    return {
      actions: [phase(PlanPhase.Paused, PlanReason.PausedByUser, 'no new evictions until resumed')],
      again: false,
    };
  if (s.plan.phase === PlanPhase.Running && s.plan.reason !== PlanReason.Cordoning) {
    const r = runningSummary(s, ctx.planName);
    if (r.reason !== s.plan.reason || r.message !== s.plan.message)
      return { actions: [phase(PlanPhase.Running, r.reason, r.message)], again: false };
  }
  return WAIT;
}

/**
 * Settled: wait for release or abort (the operator aborts when the plan is deleted), hand the nodes
 * back per spec.uncordon once, then end — except a release under uncordon OnDelete, which leaves the
 * nodes cordoned and waits for the abort. uncordon AfterEachNode: a plan whose nodes all handed
 * themselves back is complete.
 */
function decideSettled(s: PlanRunState, ctx: PlanDecisionContext): PlanDecision {
  const { uncordon } = ctx;
  if (
    uncordon === 'AfterEachNode' &&
    !s.aborted &&
    s.plan.phase === PlanPhase.Completed &&
    Object.keys(s.claimed).length === 0
  )
    return {
      actions: [{ do: 'end', phase: PlanPhase.Completed, reason: s.plan.reason, message: s.plan.message }],
      again: false,
    };
  if (!s.aborted && !s.released) return WAIT;
  if ((s.aborted || uncordon !== 'OnDelete') && !ctx.handedBack) {
    const uncordonNodes = s.aborted
      ? uncordon !== 'Never'
      : uncordon === 'OnRelease' || uncordon === 'AfterEachNode';
    return {
      actions: [{ do: 'handBack', nodes: Object.keys(s.claimed).sort(), uncordon: uncordonNodes }],
      again: true,
    };
  }
  if (s.aborted) {
    const reason = s.cancelled ? PlanReason.WorkflowCanceled : PlanReason.Aborted;
    const message = `${s.cancelled ? 'cancelled from Temporal' : 'aborted'}: no more evictions; nodes handed back per spec.uncordon${abortRemedyNote(s.remedies)}`;
    return {
      actions: [
        phase(PlanPhase.Aborted, reason, message),
        { do: 'end', phase: PlanPhase.Aborted, reason, message },
      ],
      again: false,
    };
  }
  if (uncordon === 'OnDelete')
    return {
      actions: [
        ...(s.plan.phase !== PlanPhase.Completed
          ? [
              phase(
                PlanPhase.Completed,
                PlanReason.Released,
                'released; nodes stay cordoned until the plan is deleted',
              ),
            ]
          : []),
        { do: 'keepCordoned' },
      ],
      again: false,
    };
  const message =
    uncordon === 'OnRelease' || uncordon === 'AfterEachNode'
      ? 'released; nodes uncordoned'
      : 'released; nodes left cordoned (uncordon: Never)';
  return {
    actions: [
      phase(PlanPhase.Completed, PlanReason.Released, message),
      { do: 'end', phase: PlanPhase.Completed, reason: PlanReason.Released, message },
    ],
    again: false,
  };
}
