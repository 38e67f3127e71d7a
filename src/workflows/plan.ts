/**
 * `drainPlanWorkflow`: one workflow per MaintenancePlan (ID {@link planWorkflowId}). It resolves the
 * nodes, cordons all of them first when spec.cordon is AllAtStart, drains them as child workflows
 * (`drainNodeWorkflow`, at most spec.maxUnavailableNodes at once), projects its state into the
 * plan's status, and hands the nodes back per spec.uncordon.
 *
 * Lifecycle: Pending → Running (⇄ Paused) → Drained | Blocked | Failed | Aborted; a plan of
 * spec.mode Preflight goes Pending → Running → Previewed (./plan/preview.ts). From Drained or
 * Blocked the workflow stays open, waiting for `release` (→ Completed) or `abort` (sent by the
 * operator when the plan is deleted), so nodes are handed back exactly once by the workflow that
 * took them.
 *
 * Structure (Temporal's safe-message-handlers shape; temporal-worker-controller's observe → plan →
 * execute → one status write): one run ({@link PlanRun}: the JSON-plain {@link PlanRunState}
 * carried across continue-as-new, and this run's protocol state), message handlers of one line
 * that record into it (./plan/controls.ts), and one loop that observes the windows, asks the pure
 * stage machine `decidePlan` (src/drain/plan-decide.ts) what to do, runs it (./plan/actions.ts),
 * writes the status and waits. Each protocol is a module of ./plan/: the PDB budget grants
 * (budget-grants.ts), the status writer (status-writer.ts), the node drains (children.ts), claim
 * cycles (claim-cycles.ts), the remedies by surge (remedies.ts), maintenance windows (windows.ts), Events and forwarded controls
 * (outbox.ts), and quiet points and continue-as-new (continue-as-new.ts).
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow` are imported.
 */
import { CancellationScope, CancelledFailure, condition, upsertSearchAttributes } from '@temporalio/workflow';
import { PlanReason } from '../api/reasons.js';
import { SA_NODES, SA_PHASE, SA_PLAN, SA_REASON } from '../contract/names.js';
import { decidePlan, keepCordoning } from '../drain/plan-decide.js';
import { podsDone, trackPace } from '../drain/eta.js';
import { lostNodesAtMs } from '../drain/plan-drain.js';
import { timerSummary } from '../drain/summaries.js';
import { windowsError } from '../drain/windows.js';
import type { DrainPlanInput, DrainPlanResult } from './messages.js';
import { runActions } from './plan/actions.js';
import { grantPump } from './plan/budget-grants.js';
import { checkClaimCycle } from './plan/claim-cycles.js';
import { CONTINUE_AS_NEW_AGE_MS, close, continueAsNewDue, continueAsNewNow } from './plan/continue-as-new.js';
import { installHandlers } from './plan/controls.js';
import { NODE_CALL_CONCURRENCY } from './plan/node-calls.js';
import { flushOutbox } from './plan/outbox.js';
import { previewPlan } from './plan/preview.js';
import { resolvePlan, searchableNodes } from './plan/resolve.js';
import { createRun, held, setPhase, type PlanRun } from './plan/run.js';
import { stepRemedies } from './plan/remedies.js';
import { publish } from './plan/status-writer.js';
import { observeWindow, windowPhase } from './plan/windows.js';
import { WakeTimer } from './wake-timer.js';

/** After the deadline, how long a running node may take to report its end before it counts as lost, ms. */
const LOST_NODE_GRACE_MS = 10 * 60 * 1000;

/** Drains the nodes of one MaintenancePlan. See the module comment. */
export async function drainPlanWorkflow(input: DrainPlanInput): Promise<DrainPlanResult> {
  const root = CancellationScope.current();
  const result = await CancellationScope.nonCancellable(() => drainPlan(input, root.cancelRequested));
  // The run stopped because Temporal asked it to: it closes CANCELED, which is how Temporal (its
  // UI, `temporal workflow describe`) shows that a cancellation request was honoured.
  if (root.consideredCancelled && result.reason === PlanReason.WorkflowCanceled)
    throw new CancelledFailure(result.message);
  return result;
}

/**
 * The plan workflow's body. It runs shielded from Temporal's cancellation: a cancellation request
 * (Temporal UI, `temporal workflow cancel`) rejects `cancelRequested`, which the body takes as an
 * abort (`PlanRunState.cancelled`): no more evictions, the nodes handed back as an abort hands
 * them back, the plan Aborted/WorkflowCanceled. Without the shield every wait of the body (and its
 * background waits) would reject with CancelledFailure, and the plan would stop where it stood,
 * its nodes claimed and cordoned, its status frozen.
 */
async function drainPlan(input: DrainPlanInput, cancelRequested: Promise<never>): Promise<DrainPlanResult> {
  const run = createRun(input);
  const { s, spec, windows } = run;
  installHandlers(run, cancelRequested);
  run.pump = grantPump(run);
  // Each run upserts the search attributes: cheap, and independent of what continue-as-new copies.
  upsertSearchAttributes([
    { key: SA_PLAN, value: run.plan.name },
    { key: SA_PHASE, value: s.plan.phase },
    ...(s.plan.reason ? [{ key: SA_REASON, value: s.plan.reason }] : []),
    ...(s.plan.nodes.length
      ? [{ key: SA_NODES, value: searchableNodes(s.plan.nodes.map((n) => n.name)) }]
      : []),
  ]);
  // A zone the operator's Node.js knew but this worker's does not fails the plan before it touches a
  // node. (A later run on such a worker fails its workflow tasks, retried until a worker knows the zone.)
  const windowProblem = windows && s.stage === 'Resolve' ? windowsError(windows) : undefined;
  if (windowProblem) {
    setPhase(run, 'Failed', PlanReason.InvalidSpec, windowProblem);
    return close(run, { phase: 'Failed', reason: PlanReason.InvalidSpec, message: windowProblem });
  }
  observeWindow(run);
  if (s.stage === 'Resolve') {
    const failed = await resolvePlan(run);
    if (failed) return close(run, failed);
    if (spec.mode === 'Preflight') return previewPlan(run);
  }
  s.plan.onDeadline = spec.onDeadline ?? 'Stop';
  s.plan.deadlineWarningSeconds = spec.deadlineWarningSeconds ?? 300;
  s.maxUnavailableNodes = spec.maxUnavailableNodes;
  return drainLoop(run);
}

/** The main loop: observe the windows → decide → act → write the status → continue as new at a quiet point → wait. */
async function drainLoop(run: PlanRun): Promise<DrainPlanResult> {
  const { s, spec, local } = run;
  const timer = new WakeTimer();
  let handedBack = false;
  for (;;) {
    const windowChangeMs = observeWindow(run);
    windowPhase(run);
    const decision = decidePlan(s, {
      nowMs: Date.now(),
      held: held(run),
      pendingStarts: local.pendingStarts,
      handedBack,
      uncordon: spec.uncordon,
      maxUnavailableNodes: spec.maxUnavailableNodes,
      cordonBatch: NODE_CALL_CONCURRENCY,
      lostGraceMs: LOST_NODE_GRACE_MS,
      planName: run.plan.name,
    });
    const end = await runActions(run, decision.actions);
    if (end) return close(run, end);
    // The drain's pace (status.estimatedCompletion), sampled only when the pods gone or the hold
    // changed: then the status changes anyway, so the pace adds no status write.
    const done = s.plan.nodes.reduce((a, n) => a + podsDone(n), 0);
    if (done !== local.pace.done || held(run) !== local.pace.held) {
      local.pace = { done, held: held(run) };
      const pace = trackPace(s.plan.pace, Date.now(), done, held(run));
      if (pace) s.plan.pace = pace;
    }
    handedBack ||= decision.actions.some((a) => a.do === 'handBack');
    if (decision.again) continue;

    const remedyAt = await stepRemedies(run);
    const cycleCheckAt = checkClaimCycle(run, Date.now());
    flushOutbox(run);
    const publishAt = await publish(run, false);
    if (continueAsNewDue(run)) await continueAsNewNow(run);
    if (keepCordoning(s, held(run))) continue;

    // A quiet plan continues as new by age too, so something must wake it then.
    const name = run.plan.name;
    const ageAt = run.runStartMs + CONTINUE_AS_NEW_AGE_MS;
    timer.ensure(ageAt, timerSummary.planAge(name, ageAt));
    const deadlineMs = s.plan.deadlineMs!;
    if (Date.now() < deadlineMs) timer.ensure(deadlineMs, timerSummary.planDeadline(name, deadlineMs));
    else if (s.stage === 'Drain') {
      const lostAt = lostNodesAtMs(s, held(run), LOST_NODE_GRACE_MS);
      if (lostAt !== undefined && lostAt > Date.now())
        timer.ensure(lostAt, timerSummary.lostNodes(name, lostAt));
    }
    if (publishAt !== undefined) timer.ensure(publishAt, timerSummary.publish(name, publishAt));
    if (cycleCheckAt !== undefined) timer.ensure(cycleCheckAt, timerSummary.claimCycleCheck(cycleCheckAt));
    // spec.remedies Auto: the restart is due (a durable timer, exact across worker restarts).
    if (remedyAt !== undefined) timer.ensure(remedyAt, timerSummary.remedy(remedyAt));
    // The next window boundary (a durable timer: exact across worker restarts, no polling).
    if (windowChangeMs !== undefined && s.stage !== 'Settled')
      timer.ensure(windowChangeMs, timerSummary.windowChange(windowChangeMs));
    local.woken = false;
    handedBack = false;
    await condition(() => local.woken || local.writer.urgent || timer.fired);
    timer.fired = false;
  }
}
