/**
 * What a later deadline does to a plan (the `extendDeadline` Update, `drainflow extend`, a raised
 * spec.drainTimeoutSeconds): {@link requestedDeadline} reads the request, {@link decideExtension}
 * says whether the plan takes it and what follows, {@link applyExtension} writes it into the plan
 * workflow's state.
 *
 * The rule:
 * - A Running plan takes any deadline later than its current one and not past: its running nodes
 *   whose deadline is the plan's get the new one; a node stopped at its own deadline
 *   (spec.nodeDrainTimeoutSeconds, onDeadline Stop) and still held drains again.
 * - A plan Blocked at its deadline (reason DeadlineExceeded: onDeadline Stop) goes back to Running:
 *   every node that stopped at its deadline while the plan holds it drains again (a new node
 *   workflow under the same ID; the node's claim is this plan's already, so the claim is taken
 *   over, not fought for, and the node stays cordoned throughout), and nodes never started start.
 * - Anything else is refused with the reason: an aborted or released plan, one not resolved yet,
 *   one Blocked for another reason (skipped nodes were handed back; a failed hook or a cancelled
 *   node drain needs a person), one in any other phase; a deadline not later than the current one,
 *   or already past.
 *
 * PURE and DETERMINISTIC: no I/O, no clock (the time is a parameter). Imported by workflow code.
 */
import { DeadlineReason, PlanPhase, PlanReason } from '../api/reasons.js';
import type { ExtendDeadlineArgs } from '../contract/plan-messages.js';
import {
  heldAtDeadline,
  earlierDrainCounts,
  pendingNode,
  runningNodes,
  type PlanEvent,
  type PlanRunState,
} from './plan-drain.js';

/** Why a later deadline is refused: `NotLater` (a repeated spec relay is this) or anything else. */
export type ExtensionRefusal = { refused: 'NotLater' | 'NotExtendable' | 'BadRequest'; message: string };

/** What a later deadline does (see the module comment). */
export interface Extension {
  /** The new deadline, ms since epoch. */
  deadlineMs: number;
  /** The previous one, ms since epoch. */
  previousMs: number;
  /** The plan was Blocked at its deadline: it goes back to Running (stage Drain). */
  resume: boolean;
  /** Nodes stopped at their deadline and still held: they drain again (new node workflows). */
  restart: string[];
  /** Running nodes whose deadline is the plan's: they get the new one (signal nodeDeadline). */
  notify: string[];
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The deadline an {@link ExtendDeadlineArgs} asks for, ms since epoch, or why the request is bad:
 * exactly one of a positive `addSeconds` (added to `currentMs`) and an RFC 3339 `deadline`, and a
 * `by` naming who asks.
 */
export function requestedDeadline(
  currentMs: number | undefined,
  a: Partial<ExtendDeadlineArgs> | undefined,
): number | ExtensionRefusal {
  const bad = (message: string): ExtensionRefusal => ({ refused: 'BadRequest', message });
  if (typeof a?.by !== 'string' || a.by.trim() === '' || a.by.length > 253)
    return bad('by must name who extends the deadline (1 to 253 characters)');
  const hasAdd = a.addSeconds !== undefined;
  const hasTo = a.deadline !== undefined;
  if (hasAdd === hasTo) return bad('give exactly one of addSeconds (--by) and deadline (--to)');
  if (hasAdd) {
    if (typeof a.addSeconds !== 'number' || !Number.isFinite(a.addSeconds) || a.addSeconds <= 0)
      return bad(`addSeconds must be a positive number of seconds (got ${JSON.stringify(a.addSeconds)})`);
    if (currentMs === undefined) return bad('the plan has no deadline yet (its nodes are not resolved)');
    return currentMs + Math.round(a.addSeconds * 1000);
  }
  const at = typeof a.deadline === 'string' && RFC3339.test(a.deadline) ? Date.parse(a.deadline) : NaN;
  if (!Number.isFinite(at))
    return bad(
      `deadline must be an RFC 3339 time such as 2026-12-08T18:00:00Z (got ${JSON.stringify(a.deadline)})`,
    );
  return at;
}

/** An RFC 3339 date-time with a zone (`Z` or `±hh:mm`). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Whether the plan in state `s` takes the deadline `deadlineMs` at `nowMs` (ms since epoch), and
 * what follows. See the module comment.
 */
export function decideExtension(
  s: PlanRunState,
  deadlineMs: number,
  nowMs: number,
  planName: string,
): Extension | ExtensionRefusal {
  const no = (message: string): ExtensionRefusal => ({ refused: 'NotExtendable', message });
  const { phase, reason } = s.plan;
  const current = s.plan.deadlineMs;
  if (s.stage === 'Resolve' || current === undefined)
    return no(`plan ${planName} has not resolved its nodes yet: it has no deadline to extend`);
  if (s.aborted) return no(`plan ${planName} is aborted: it drains nothing more`);
  if (s.released) return no(`plan ${planName} is released: its nodes are handed back`);
  const blockedAtDeadline =
    s.stage === 'Settled' && phase === PlanPhase.Blocked && reason === PlanReason.DeadlineExceeded;
  const running = phase === PlanPhase.Running && s.stage !== 'Settled';
  if (!blockedAtDeadline && !running)
    return no(
      phase === PlanPhase.Blocked
        ? `plan ${planName} is Blocked (${reason ?? 'no reason'}), not at its deadline: only a Running plan or one Blocked at its deadline (DeadlineExceeded, onDeadline Stop) can be given more time`
        : `plan ${planName} is ${phase}: only a Running plan or one Blocked at its deadline (DeadlineExceeded, onDeadline Stop) can be given more time`,
    );
  if (deadlineMs <= current)
    return {
      refused: 'NotLater',
      message: `the new deadline ${iso(deadlineMs)} is not later than the current one ${iso(current)}`,
    };
  if (deadlineMs <= nowMs)
    return no(`the new deadline ${iso(deadlineMs)} has passed already (now ${iso(nowMs)})`);
  const restart = heldAtDeadline(s);
  const byName = new Map(s.plan.nodes.map((n) => [n.name, n]));
  return {
    deadlineMs,
    previousMs: current,
    resume: blockedAtDeadline,
    restart,
    // A node with its own earlier deadline (spec.nodeDrainTimeoutSeconds) keeps it.
    notify: running ? runningNodes(s).filter((n) => byName.get(n)?.deadlineMs === undefined) : [],
  };
}

/**
 * Writes an {@link Extension} into the plan's state: the new deadline; the nodes to drain again
 * (and, for a plan that was Blocked, those never started) back to not started, their claims kept;
 * a plan that was Blocked back to stage Drain.
 * @returns the DeadlineExtended Event, and the phase a plan that was Blocked takes.
 */
export function applyExtension(
  s: PlanRunState,
  x: Extension,
  by: string,
  nowMs: number,
): { event: PlanEvent; phase?: { phase: PlanPhase; reason: string; message: string } } {
  s.plan.deadlineMs = x.deadlineMs;
  const again = new Set(x.restart);
  if (x.resume) for (const n of s.plan.nodes) if (!s.started.includes(n.name)) again.add(n.name);
  s.started = s.started.filter((n) => !again.has(n));
  s.finished = s.finished.filter((n) => !again.has(n));
  // The new drains count from 0: keep what the status shows now as their earlier drains' counts.
  // (Nodes that never counted anything, e.g. never started, need no entry.)
  for (const n of s.plan.nodes) {
    const counts = again.has(n.name) ? earlierDrainCounts(n) : undefined;
    if (counts && Object.values(counts).some((v) => v > 0)) (s.earlierDrains ??= {})[n.name] = counts;
  }
  // Pending again, still showing those counts until the new drain's first report.
  s.plan.nodes = s.plan.nodes.map((n) =>
    again.has(n.name)
      ? {
          ...pendingNode(n.name),
          ...(s.earlierDrains?.[n.name] ? { podsTotal: n.podsTotal, ...s.earlierDrains[n.name] } : {}),
        }
      : n,
  );
  const named = [...again].sort();
  const list = named.slice(0, 10).join(', ') + (named.length > 10 ? ` and ${named.length - 10} more` : '');
  const drains = named.length ? `; node(s) ${list} drain again, their claims kept (still cordoned)` : '';
  const event: PlanEvent = {
    type: 'Normal',
    reason: DeadlineReason.DeadlineExtended,
    message: `deadline extended to ${iso(x.deadlineMs)} (was ${iso(x.previousMs)}) by ${by} at ${iso(nowMs)}${drains}`,
  };
  if (!x.resume) return { event };
  s.stage = 'Drain';
  delete s.settledAtMs;
  delete s.plan.completedAtMs;
  return {
    event,
    phase: {
      phase: PlanPhase.Running,
      reason: PlanReason.Draining,
      message: `deadline extended to ${iso(x.deadlineMs)}: draining again${named.length ? ` ${list}` : ''}`,
    },
  };
}
