/**
 * `drainNodeWorkflow`: drains one node of a plan as a level-triggered loop, observe → decide → act
 * → report. A child of `drainPlanWorkflow`, which it keeps informed through debounced
 * `nodeProgress` signals (the last one marked `final`).
 *
 * - Claim (node/claim.ts): `cordonNode`, with a growing backoff and a wait for the hand-back while
 *   another plan holds the node; never while paused.
 * - Observe (node/observer.ts): the `observeNode` activity, answering on a material change.
 * - Decide: the pure reducers of `src/drain/node/` (all rules live there).
 * - Act (node/calls.ts): `evictPod` activities, one Eviction API call each; `deletePod` at a
 *   DeletePods deadline; Warning Events (node/events.ts).
 * - Report (node/reporter.ts): debounced `nodeProgress` signals; PDB budget requests and grants
 *   (node/budget.ts) in plans of more than one node.
 *
 * The plan deadline and every cooldown are durable timers (the wake time of each decision). The
 * run continues as new at a quiet point (node/continue-as-new.ts).
 *
 * In the entity shape: one JSON-plain state ({@link NodeRun.s}), one-line message handlers that
 * record into it, and a main loop over the pure `decideNode`; each protocol is a module of
 * src/workflows/node/: claim.ts, observer.ts, calls.ts (evictions, deletions), reporter.ts,
 * budget.ts, events.ts, continue-as-new.ts, loop.ts and finish.ts.
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow` are imported.
 */
import { CancelledFailure, CancellationScope, setHandler } from '@temporalio/workflow';
import { NodePhase, NodeReason } from '../api/reasons.js';
import { nodeControlSignal, nodeDeadlineSignal, pdbGrantSignal } from '../contract/node-messages.js';
import type { NodeProgress } from '../contract/progress.js';
import { drained } from '../drain/hooks.js';
import { applyControl, isStaleControl, type NodeControlAction } from '../drain/node/controls.js';
import { extendNodeDeadline } from '../drain/node/deadline.js';
import type { NodeDrainState } from '../drain/node/state.js';
import type { DrainNodeInput } from './messages.js';
import { runRoll } from './node-roll.js';
import { nodeActivities } from './node/activities.js';
import { BudgetRequests } from './node/budget.js';
import { Calls } from './node/calls.js';
import { claimNode } from './node/claim.js';
import { continueAsNewDue, continueAsNewNow } from './node/continue-as-new.js';
import { EventRecorder } from './node/events.js';
import { finish } from './node/finish.js';
import type { LoopInput } from './node/inbox.js';
import { drainLoop } from './node/loop.js';
import { Observer } from './node/observer.js';
import { Reporter } from './node/reporter.js';
import { startRun, type NodeRun } from './node/run.js';
import { WakeTimer } from './wake-timer.js';

/**
 * Drains one node. @returns the node's final progress (phase Drained, Blocked, Aborted, Failed or
 * Deleted). @throws CancelledFailure when a cancellation request from Temporal stopped it (it then
 * reported Aborted/WorkflowCanceled to the plan first), so the run closes CANCELED.
 */
export async function drainNodeWorkflow(input: DrainNodeInput): Promise<NodeProgress> {
  const root = CancellationScope.current();
  const result = await CancellationScope.nonCancellable(() => drainNode(input, root.cancelRequested));
  if (root.consideredCancelled && result.reason === NodeReason.WorkflowCanceled)
    throw new CancelledFailure(result.message ?? 'cancelled');
  return result;
}

/** Records a control of the plan (or a stop of the operator); a stale pause or resume is dropped. */
function recordControl(run: NodeRun, c: { action: NodeControlAction; generation?: number }): void {
  // A pause or resume older than the newest generation seen is stale (a standby operator's late
  // direct stop crossing the leader's newer resume, forwarded by the plan): the newer spec wins.
  if (isStaleControl(run.s, c.action, c.generation)) return;
  applyControl(run.s, c.action, c.generation);
  run.woken = true;
}

/** The plan's deadline moved later: the node's follows (see extendNodeDeadline). */
function recordDeadline(run: NodeRun, deadlineMs: number): void {
  if (extendNodeDeadline(run.s, deadlineMs)) run.woken = true;
}

/** A cancellation request from Temporal: an abort that says where it came from. */
function recordCancel(run: NodeRun): void {
  run.s.cancelled = true;
  applyControl(run.s, 'abort');
  run.woken = true;
}

/**
 * The node workflow's body, shielded from Temporal's cancellation: a cancellation request rejects
 * `cancelRequested`, which the body takes as an abort ({@link NodeDrainState.cancelled}): no new
 * evictions, calls in flight cancelled, the node left claimed and cordoned for the plan to hand back
 * when it ends (as an aborted node), the final report Aborted/WorkflowCanceled.
 */
async function drainNode(input: DrainNodeInput, cancelRequested: Promise<never>): Promise<NodeProgress> {
  const run = startRun(input);
  const { s, spec } = run;
  const acts = nodeActivities(spec);
  const reporter = new Reporter(run);
  const budget = new BudgetRequests(run, reporter);
  const events = new EventRecorder(run);
  const ends = { run, reporter, budget, events };

  // ---- messages: one line each ----
  setHandler(nodeControlSignal, (c) => recordControl(run, c));
  cancelRequested.catch(() => recordCancel(run));
  setHandler(pdbGrantSignal, (g) => budget.grant(g));
  setHandler(nodeDeadlineSignal, (d) => recordDeadline(run, d.deadlineMs));

  // ---- 1. claim and cordon ----
  const unclaimed = await claimNode({ run, reporter, acts });
  if (unclaimed) return finish(ends, unclaimed);

  // ---- 2. spec.hooks / uncordon AfterEachNode: the beforeDrain hook, or where a continued run is ----
  const rollContext = () => ({
    plan: input.plan,
    node: input.node,
    s: s as NodeDrainState & { roll: NonNullable<NodeDrainState['roll']> },
    spec: spec.roll!,
    selection: spec.podSelection,
    deadlineMs: () => spec.planDeadlineMs ?? s.deadlineMs,
    report: () => reporter.report(),
    continueAsNewDue: () => continueAsNewDue(run),
    continueAsNewNow: () => continueAsNewNow(run),
  });
  if (spec.roll !== undefined) {
    const early = await runRoll(rollContext());
    if (early) return finish(ends, early);
  }

  // ---- 3. the loop ----
  const inbox: LoopInput[] = [];
  const observer = new Observer(run, acts, inbox);
  const calls = new Calls(run, acts, inbox, events);
  let outcome = await drainLoop({ ...ends, inbox, observer, calls, timer: new WakeTimer() });
  // Ending: stop observing; evictions in flight were awaited by the loop.
  await observer.stop();
  // Drained: the afterDrain hook and the per-node hand-back.
  if (spec.roll !== undefined && outcome.phase === NodePhase.Drained) {
    drained(s.roll!);
    outcome = (await runRoll(rollContext())) ?? outcome;
  }
  return finish(ends, outcome);
}
