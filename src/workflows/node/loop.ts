/**
 * The node loop, level-triggered: apply what settled → decide (the pure `decideNode`) → act
 * (evictions, deletions, Events, an observation, a budget request, a report) → wait for the next
 * input, a message or a timer. Continues as new at a quiet point: no call in flight, no
 * observation running, no signal or Event in flight. Deterministic: workflow code.
 */
import { condition } from '@temporalio/workflow';
import { DeadlineReason, PodPolicyReason } from '../../api/reasons.js';
import { applyDeleteTimeout, nextDeleteTimeoutAt } from '../../drain/node/answers.js';
import { deletionWarning } from '../../drain/node/deadline.js';
import { decideNode } from '../../drain/node/decide.js';
import { hasUnconfirmedEvictions } from '../../drain/node/observation.js';
import type { NodeDecision, NodeOutcome } from '../../drain/node/state.js';
import { returningWarnings } from '../../drain/returning.js';
import { nodeWakeSummary, timerSummary } from '../../drain/summaries.js';
import type { WakeTimer } from '../wake-timer.js';
import type { Calls } from './calls.js';
import { stopIfPlanGone } from './claim.js';
import { continueAsNewDue, continueAsNewNow } from './continue-as-new.js';
import type { FinishContext } from './finish.js';
import { applyInput, type LoopInput } from './inbox.js';
import type { Observer } from './observer.js';

/** Longest wait of an ending drain (plans with PDB reporters) for its last evictions to be observed, ms. */
export const CONFIRM_HOLD_MS = 10_000;

/** What the loop needs of the node workflow. */
export interface LoopContext extends FinishContext {
  inbox: LoopInput[];
  observer: Observer;
  calls: Calls;
  timer: WakeTimer;
}

/** Runs the loop until the drain ends. @returns how it ends (nothing in flight any more). */
export async function drainLoop(ctx: LoopContext): Promise<NodeOutcome> {
  const { run, calls, timer } = ctx;
  const { s, settings, spec } = run;
  let outcome: NodeOutcome | undefined;
  let confirmUntilMs: number | undefined;
  for (;;) {
    outcome = applySettled(ctx, outcome);
    stopIfPlanGone(run, ctx.reporter);
    if (s.aborted) calls.cancelEvictions();
    const now = Date.now();
    countTimedOut(ctx, now);
    const quiesce = continueAsNewDue(run);
    const decision = decideNode(s, now, settings, quiesce || outcome !== undefined);
    act(ctx, decision, now);
    if (decision.outcome && calls.inFlight.size === 0) outcome ??= decision.outcome;
    // A drain that ends forgets its holdings in the plan's ledger: with reporters, evictions
    // answered 201 that no observation shows yet are confirmed first (at most CONFIRM_HOLD_MS), or
    // the plan would hand out a disruption its ledger cannot see spent yet.
    const confirming =
      outcome !== undefined &&
      spec.pdbReporters === true &&
      hasUnconfirmedEvictions(s) &&
      (confirmUntilMs ??= now + CONFIRM_HOLD_MS) > now;
    if (confirming) timer.ensure(confirmUntilMs!, timerSummary.confirmEvictions(s.node, confirmUntilMs!));
    if (outcome && calls.inFlight.size === 0 && !confirming) {
      ctx.budget.request(true); // the last request gives everything back, with the freshest PDB reports
      return outcome;
    }
    await quietPoint(ctx, quiesce);
    observe(ctx, decision, quiesce, now);
    ctx.budget.request(quiesce || outcome !== undefined);
    await wait(ctx, decision, now);
  }
}

/** Applies every settled input; @returns the outcome, a failure's when none was set before. */
function applySettled(ctx: LoopContext, outcome: NodeOutcome | undefined): NodeOutcome | undefined {
  for (const item of ctx.inbox.splice(0)) {
    const applied = applyInput(ctx.run, item, Date.now());
    outcome ??= applied.outcome;
    if (applied.nextObserveAtMs !== undefined) ctx.observer.nextAtMs = applied.nextObserveAtMs;
  }
  return outcome;
}

/** eviction.skipWaitForDeleteTimeoutSeconds: pods still terminating past it count as gone (an Event each). */
function countTimedOut(ctx: LoopContext, now: number): void {
  const { s, spec } = ctx.run;
  const timeout = spec.skipWaitForDeleteTimeoutSeconds;
  if (timeout === undefined) return;
  for (const p of applyDeleteTimeout(s, now, timeout))
    ctx.events.record(
      PodPolicyReason.DeleteTimeoutPassed,
      `node ${s.node}: pod ${p.key} ${s.timedOut?.[p.uid]?.message ?? 'counted as gone'}`,
    );
}

/** Starts the decision's calls and records the Events due. */
function act(ctx: LoopContext, decision: NodeDecision, now: number): void {
  const { s, settings } = ctx.run;
  const observing = ctx.observer.current;
  // At the deadline, a view observed after it: an observation started before is dropped (it may
  // wait retryBackoff.maxSeconds for a change) and one that waits for nothing starts after.
  if (decision.freshView && observing && observing.seq <= (s.deadlineView?.afterSeq ?? 0))
    ctx.observer.drop();
  for (const uid of decision.evict) ctx.calls.evict(uid);
  for (const d of decision.delete ?? []) ctx.calls.delete(d.uid, d.gracePeriodSeconds);
  const warning = deletionWarning(s, now, settings);
  if (warning) {
    s.warned = true;
    ctx.events.record(DeadlineReason.PodsWillBeDeleted, warning.message);
  }
  // Pods that come back: one Warning per node and controller (src/drain/returning.ts).
  for (const w of returningWarnings(s.returning, s.node)) {
    s.returning!.owners[w.ownerUid]!.warned = true;
    ctx.events.record(PodPolicyReason.ReturnsToNode, w.message);
  }
}

/**
 * A quiet point when continue-as-new is due: nothing in flight, no observation running (a waiting
 * one is abandoned), no signal or Event in flight; then continues as new. Also drops an observation
 * woken by a reporting set the plan has changed since.
 */
async function quietPoint(ctx: LoopContext, quiesce: boolean): Promise<void> {
  const { run, observer, calls } = ctx;
  if (quiesce && calls.inFlight.size === 0 && observer.current) observer.abandon();
  // The plan changed the node's reporting set while an observation waits: look again with the
  // new set, or the PDBs it now reports would not wake it (up to retryBackoff.maxSeconds). The
  // old one is forgotten at once (its cancellation is ignored), so the new one starts now.
  else if (run.grantsOnly && observer.current && observer.current.reports !== observer.watchedReports()) {
    observer.drop();
    observer.nextAtMs = 0;
  }
  if (
    quiesce &&
    calls.inFlight.size === 0 &&
    !observer.current &&
    !ctx.reporter.sending &&
    !ctx.budget.sending &&
    ctx.events.inFlight.size === 0
  )
    await continueAsNewNow(run);
}

/** Starts an observation when none runs and one is due (at once for a fresh view past the deadline). */
function observe(ctx: LoopContext, decision: NodeDecision, quiesce: boolean, now: number): void {
  const { observer } = ctx;
  if (observer.current || quiesce) return;
  if (decision.freshView) {
    // Not paced by an earlier unchanged answer's bound: the next look follows this one's answer.
    observer.nextAtMs = 0;
    observer.start(0);
  } else if (now >= observer.nextAtMs) observer.start();
}

/** Reports, sets the timers the decision asks for, and waits for an input, a message or a timer. */
async function wait(ctx: LoopContext, decision: NodeDecision, now: number): Promise<void> {
  const { run, timer, observer } = ctx;
  const { s, spec } = run;
  const reportAt = ctx.reporter.report();
  // A wake time that has passed asks for nothing (a node paused past its deadline waits for the
  // resume): ensuring it would wake the loop at once, again and again, within one task.
  const wakeAt = decision.wakeAtMs ?? s.deadlineMs;
  if (wakeAt > now) timer.ensure(wakeAt, nodeWakeSummary(s, wakeAt, run.settings.deadlineWarningSeconds));
  const timeout = spec.skipWaitForDeleteTimeoutSeconds;
  const timeoutAt = timeout !== undefined ? nextDeleteTimeoutAt(s, timeout) : undefined;
  if (timeoutAt !== undefined) timer.ensure(timeoutAt, timerSummary.deleteTimeout(s.node, timeoutAt));
  if (reportAt !== undefined) timer.ensure(reportAt, timerSummary.report(s.node, reportAt));
  if (!observer.current && observer.nextAtMs > now)
    timer.ensure(observer.nextAtMs, timerSummary.observe(s.node, observer.nextAtMs));
  run.woken = false;
  await condition(() => ctx.inbox.length > 0 || run.woken || timer.fired);
  timer.fired = false;
}
