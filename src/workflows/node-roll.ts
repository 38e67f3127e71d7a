/**
 * The rolling part of `drainNodeWorkflow` (spec.hooks, spec.uncordon AfterEachNode): runs the
 * steps of {@link nextRollStep} (src/drain/hooks.ts) — a hook, the wait for a per-node release,
 * the hand-back — until the node must be drained (returns undefined) or its drain is over (returns
 * the outcome).
 *
 * - A `workflow` hook is a child workflow of the node drain (ID {@link hookWorkflowId}, one
 *   argument `{plan, node}`, the hook's task queue, execution timeout `timeoutSeconds`), so it
 *   shows under the node's drain in the Temporal UI. Started from workflow code, it runs once per
 *   node: a worker restart replays the start, it does not repeat it.
 * - A `job` hook is two activities over the Kubernetes API (src/activities/jobs.ts): create the
 *   Job of the deterministic name {@link hookJobName} (an existing one is kept, so a retried call
 *   does not run it twice), then wait for it, heartbeating, at most `timeoutSeconds`.
 * - An abort (or a cancellation from Temporal) while a hook runs stops it before the node ends
 *   and the plan hands it back: a `workflow` hook's child is cancelled and awaited, a `job` hook's
 *   Job deleted with foreground propagation (its pods first) and awaited, each at most
 *   {@link HOOK_STOP_SECONDS}; the hook's status reads `Stopped`.
 * - A hook starts only on a node that is not paused and still cordoned ({@link hookGateStep}): before
 *   it starts the node looks at itself once (`observeNode`, answering at once); one someone else
 *   uncordoned is Blocked/NodeUncordonedExternally and observed (answering on a change) until it
 *   is cordoned again, aborted, paused, deleted, or past the deadline.
 * - The release wait observes the node (`observeNode`, so the annotation drainflow.dev/release=true
 *   is noticed) and wakes on the plan's `release` signal; it ends at the plan's deadline with the
 *   node still cordoned (the plan hands it back on release or deletion, as without AfterEachNode).
 *
 * No continue-as-new while a hook runs (its child or activity belongs to this run); during the
 * release wait the caller's `continueAsNewDue` is honoured.
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow` are imported.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  ChildWorkflowFailure,
  ApplicationFailure,
  TimeoutFailure,
  condition,
  isCancellation,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { HookWorkflowActivities } from '../activities/hook-workflow.js';
import type { JobActivities } from '../activities/jobs.js';
import type { DrainActivities } from '../activities/types.js';
import type { PlanRef } from '../contract/names.js';
import type { Hook, PodSelection } from '../api/plan.js';
import { NodePhase, NodeReason, RollReason } from '../api/reasons.js';
import {
  drainStarts,
  heldHookStep,
  hookEnded,
  hookGateStep,
  hookJobName,
  hookStarted,
  hookStopped,
  hookWorkflowId,
  nextRollStep,
  release,
  rollDone,
  type HookGateView,
  type HookName,
  type RollSettings,
  type RollState,
} from '../drain/hooks.js';
import { handBackWording, type NotUncordoned } from '../drain/hand-back.js';
import { replacingUid } from '../drain/node/observation.js';
import type { NodeDrainState, NodeOutcome } from '../drain/node/state.js';
import { activitySummary, timerSummary } from '../drain/summaries.js';
import { hookTimeoutMessage } from './hook-messages.js';
import type { NodeRollSpec } from './messages.js';
import { conditionUntil } from './wake-timer.js';

const k8s = proxyActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});
// Creating a hook's Job: a cancellation (abort) waits for the call in flight to end, so the Job
// cannot be created after it was deleted.
const creator = proxyActivities<JobActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});
/**
 * Longest wait, seconds, of each step of stopping a hook at an abort: the cancelled hook's end
 * (the child workflow closing, the Job's wait acknowledging), then the deleted Job being gone.
 */
export const HOOK_STOP_SECONDS = 60;
// Stopping a hook's Job: a few tries (the delete is idempotent: 404 is "gone"), each bounded.
const stopper = proxyActivities<JobActivities>({
  startToCloseTimeout: `${HOOK_STOP_SECONDS + 30}s`,
  heartbeatTimeout: '20s',
  retry: { initialInterval: '1s', maximumInterval: '10s', backoffCoefficient: 2, maximumAttempts: 3 },
});

// At most 3 attempts: a worker without the activity (older, or a test's) leaves the message generic.
const hookInfo = proxyActivities<HookWorkflowActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '5s', backoffCoefficient: 2, maximumAttempts: 3 },
});

/**
 * Longest wait of one observation of the release wait, or of a hook waiting for its uncordoned node
 * to be cordoned again, seconds (a change is noticed sooner: the observation answers on it).
 */
const RELEASE_OBSERVE_SECONDS = 300;

/**
 * The looks at the node before a hook starts ({@link gateHook}): abandoned, not cancelled, when the
 * wait ends without the answer (see `observer` in ./node/activities.ts).
 */
const gateObserver = proxyActivities<DrainActivities>({
  startToCloseTimeout: `${RELEASE_OBSERVE_SECONDS + 60}s`,
  heartbeatTimeout: '20s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
  cancellationType: ActivityCancellationType.ABANDON,
});

/** What {@link runRoll} needs of the node drain. */
export interface RollContext {
  plan: PlanRef;
  node: string;
  s: NodeDrainState & { roll: RollState };
  spec: NodeRollSpec;
  /** spec.podSelection (the release wait observes the node as the drain does). */
  selection: PodSelection;
  /** The deadline the rolling waits end at: the plan's, ms since epoch. */
  deadlineMs: () => number;
  /** Sends the node's progress when it changed (debounced); @returns when to try again. */
  report: () => number | undefined;
  /** Whether the run should continue as new now, and doing it (never returns). */
  continueAsNewDue: () => boolean;
  continueAsNewNow: () => Promise<never>;
}

function errorMessage(err: unknown): string {
  let e: unknown = err;
  // Unwrap ChildWorkflowFailure / ActivityFailure to the user's own failure.
  while ((e instanceof ChildWorkflowFailure || e instanceof ActivityFailure) && e.cause) e = e.cause;
  if (e instanceof TimeoutFailure) return 'timed out';
  return e instanceof Error ? e.message : String(e);
}

/** The rolling settings of a node's spec. */
export function rollSettings(spec: NodeRollSpec): RollSettings {
  return {
    beforeDrain: spec.beforeDrain !== undefined,
    afterDrain: spec.afterDrain !== undefined,
    uncordonAfterEachNode: spec.uncordonAfterEachNode,
  };
}

/**
 * Runs the rolling steps from where `ctx.s.roll` is. @returns undefined when the node is to be
 * drained now (stage Drain), else the node's outcome (the caller finishes with it).
 */
export async function runRoll(ctx: RollContext): Promise<NodeOutcome | undefined> {
  const { s, node, plan } = ctx;
  const r = s.roll;
  const cfg = rollSettings(ctx.spec);
  const nodeWfId = workflowInfo().workflowId;
  for (;;) {
    const step = nextRollStep(r, cfg);
    if (step.kind === 'drain') {
      drainStarts(r);
      return undefined;
    }
    if (step.kind === 'end') {
      rollDone(r);
      return { phase: NodePhase.Drained, reason: NodeReason.Drained, message: s.message ?? 'drained' };
    }
    if (step.kind === 'runHook' || step.kind === 'waitHook') {
      const hook = (step.name === 'beforeDrain' ? ctx.spec.beforeDrain : ctx.spec.afterDrain)!;
      if (s.aborted)
        return { phase: 'Aborted', reason: 'Aborted', message: `aborted before the ${step.name} hook` };
      // A hook starts only on a node that is not paused (the user's pause or outside the
      // maintenance windows) and still cordoned.
      if (step.kind === 'runHook') {
        const gated = await gateHook(ctx, step.name);
        if (gated) return gated;
      }
      const outcome = await runHook(ctx, step.name, hook, nodeWfId);
      if (outcome) return outcome;
      continue;
    }
    if (step.kind === 'handBack') {
      let answer: { uncordoned: boolean; left?: NotUncordoned };
      try {
        answer = await k8s.releaseNode.executeWithOptions({ summary: activitySummary.handBack(node) }, [
          { plan, node, uncordon: true, ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}) },
        ]);
      } catch (err) {
        return {
          phase: NodePhase.Blocked,
          reason: NodeReason.HandBackFailed,
          message: `handing ${node} back failed: ${errorMessage(err)}`,
        };
      }
      s.claimed = false;
      rollDone(r);
      const how = handBackWording(answer);
      return step.drained
        ? {
            phase: 'Released',
            reason: step.hookFailed ? RollReason.HandedBackAfterHookFailure : RollReason.HandedBack,
            message: `${step.message}; ${how}`,
          }
        : { phase: 'Skipped', reason: RollReason.ReleasedUndrained, message: `${step.message}; ${how}` };
    }
    // await: a per-node release, an abort, or the deadline.
    s.phase = step.phase;
    s.reason = step.reason;
    s.message = step.message;
    const outcome = await awaitRelease(ctx, step);
    if (outcome) return outcome;
  }
}

/** Runs (or goes on waiting for) one hook. @returns an outcome only when the node ends (abort). */
async function runHook(
  ctx: RollContext,
  name: HookName,
  hook: Hook,
  nodeWfId: string,
): Promise<NodeOutcome | undefined> {
  const { s, node, plan } = ctx;
  const r = s.roll;
  s.phase = name === 'beforeDrain' ? NodePhase.Cordoned : NodePhase.Drained;
  s.reason = RollReason.HookRunning;
  s.message = `${name} hook running`;
  // The hook runs in a scope of its own: an abort cancels it (the child workflow gets a
  // cancellation request; the Job's creation in flight ends, its wait is dropped), then the Job is
  // deleted, before the node is handed back.
  const scope = new CancellationScope();
  let result: Promise<void>;
  if (hook.workflow) {
    const wid = hookWorkflowId(nodeWfId, name);
    hookStarted(r, name, wid, Date.now());
    ctx.report();
    result = scope.run(() =>
      startChild(hook.workflow!.type, {
        workflowId: wid,
        taskQueue: hook.workflow!.taskQueue,
        args: [{ plan: plan.name, node }],
        workflowExecutionTimeout: `${hook.workflow!.timeoutSeconds}s`,
        staticSummary: `${name} hook of node ${node}`,
        // A cancellation waits for the child to close (bounded by HOOK_STOP_SECONDS below); a
        // child still open when the node's drain closes is terminated (parentClosePolicy).
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        parentClosePolicy: ParentClosePolicy.TERMINATE,
      })
        .then((h) => h.result() as Promise<unknown>)
        .then(() => undefined),
    );
  } else {
    const job = hook.job!;
    const jobName = hookJobName(plan.uid, node, name);
    hookStarted(r, name, `${job.namespace}/${jobName}`, Date.now());
    ctx.report();
    const waiter = proxyActivities<JobActivities>({
      startToCloseTimeout: `${job.timeoutSeconds + 60}s`,
      heartbeatTimeout: '30s',
      retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
      // Not waited for when cancelled: it only reads the Job, and the worker learns of the
      // cancellation only with its next heartbeat sent (throttled to most of heartbeatTimeout).
      cancellationType: ActivityCancellationType.TRY_CANCEL,
    });
    result = scope.run(async () => {
      // Waits for a creation in flight to end even when cancelled: a Job created after its
      // deletion would run on a node handed back.
      await creator.createHookJob.executeWithOptions({ summary: activitySummary.hookJob(name, node) }, [
        { plan, node, hook: name, name: jobName, job },
      ]);
      const end = await waiter.waitHookJob.executeWithOptions(
        { summary: activitySummary.waitHookJob(name, node) },
        [{ namespace: job.namespace, name: jobName, timeoutSeconds: job.timeoutSeconds }],
      );
      if (!end.succeeded) throw ApplicationFailure.nonRetryable(end.message, 'HookJobFailed');
    });
  }
  let settled: { ok: boolean; message?: string; timedOut?: boolean } | undefined;
  // Followed by the loop below (and, on an abort, awaited with a bound): never left unobserved.
  const following = result.then(
    () => (settled = { ok: true }),
    (err: unknown) =>
      (settled = {
        ok: false,
        message: errorMessage(err),
        timedOut: rootCause(err) instanceof TimeoutFailure,
      }),
  );
  for (;;) {
    const again = ctx.report();
    await conditionUntil(
      () => settled !== undefined || s.aborted,
      again,
      (at) => timerSummary.hookRunning(name, node, at),
    );
    if (settled) break;
    if (s.aborted) {
      const stopped = await stopHook(
        ctx,
        name,
        hook,
        scope,
        following,
        () => settled !== undefined,
        nodeWfId,
      );
      hookStopped(r, name, stopped);
      return {
        phase: NodePhase.Aborted,
        reason: NodeReason.Aborted,
        message: `aborted during the ${name} hook; ${stopped}`,
      };
    }
  }
  // A failed hook says why in its own words and sends a Warning Event.
  if (!settled.ok) {
    if (hook.workflow && settled.timedOut)
      settled.message = hookTimeoutMessage(
        hook.workflow,
        await childTookATask(hookWorkflowId(nodeWfId, name)),
      );
    await k8s.recordEvent
      .executeWithOptions({ summary: activitySummary.event(RollReason.HookFailed) }, [
        {
          plan,
          type: 'Warning',
          reason: RollReason.HookFailed,
          message: `node ${node}: ${name} hook failed: ${settled.message ?? 'no message'}`,
        },
      ])
      .catch(() => undefined);
  }
  hookEnded(r, name, settled.ok, settled.message);
  s.reason = undefined;
  s.message = undefined;
  ctx.report();
  return undefined;
}

/**
 * Stops hook `name`, still running, of an aborted node: cancels its scope (the child workflow's
 * cancellation request, or the Job's creation and wait), waits for that at most
 * {@link HOOK_STOP_SECONDS}, then, for a Job hook, deletes the Job with foreground propagation
 * and waits for it to be gone (bounded the same). @returns how it went, in words for the node's
 * message and its hook's status. Never throws: the node is handed back whatever this saw.
 */
async function stopHook(
  ctx: RollContext,
  name: HookName,
  hook: Hook,
  scope: CancellationScope,
  following: Promise<unknown>,
  settled: () => boolean,
  nodeWfId: string,
): Promise<string> {
  scope.cancel();
  const ended = await condition(settled, `${HOOK_STOP_SECONDS}s`, {
    summary: timerSummary.hookStop(name, ctx.node, HOOK_STOP_SECONDS),
  });
  await (ended ? following : Promise.resolve());
  if (hook.workflow) {
    const wid = hookWorkflowId(nodeWfId, name);
    return ended
      ? `its workflow ${wid} was cancelled`
      : `its workflow ${wid} was asked to cancel and had not closed after ${HOOK_STOP_SECONDS} s (it is terminated when the node's drain closes)`;
  }
  const job = hook.job!;
  const ref = `${job.namespace}/${hookJobName(ctx.plan.uid, ctx.node, name)}`;
  try {
    const { gone } = await stopper.stopHookJob.executeWithOptions(
      { summary: activitySummary.stopHookJob(name, ctx.node) },
      [
        {
          namespace: job.namespace,
          name: hookJobName(ctx.plan.uid, ctx.node, name),
          waitSeconds: HOOK_STOP_SECONDS,
        },
      ],
    );
    return gone
      ? `its Job ${ref} was deleted`
      : `its Job ${ref} was deleted (foreground) and was still there after ${HOOK_STOP_SECONDS} s`;
  } catch (err) {
    return `deleting its Job ${ref} failed: ${errorMessage(err)}`;
  }
}

/** The innermost cause of a child workflow's or activity's failure. */
function rootCause(err: unknown): unknown {
  let e: unknown = err;
  while ((e instanceof ChildWorkflowFailure || e instanceof ActivityFailure) && e.cause) e = e.cause;
  return e;
}

/** Whether the hook's child workflow ever had a workflow task started by a worker (undefined: unknown). */
async function childTookATask(workflowId: string): Promise<boolean | undefined> {
  try {
    const { taskStarted } = await hookInfo.hookWorkflowTaskStarted.executeWithOptions(
      { summary: activitySummary.hookWorkerCheck(workflowId) },
      [{ workflowId }],
    );
    return taskStarted;
  } catch {
    return undefined;
  }
}

/** What {@link gateHook} saw of the node since hook `name` became due (or since the resume). */
interface GateLook {
  /** The fingerprint of the last answer, to observe changes from. */
  fingerprint?: string;
  view?: HookGateView;
  /** No observation starts before this, ms since epoch (after an unchanged or failed one). */
  nextAtMs: number;
}

/**
 * Before hook `name` starts: the node waits while it is paused ({@link holdHook}) or someone else
 * uncordoned it, by the rule {@link hookGateStep}. It looks at the node once (`observeNode`,
 * answering at once); a node found uncordoned is Blocked/NodeUncordonedExternally and observed
 * again ({@link lookAtNode}) until it is cordoned again (the hook starts), the plan aborts (the node
 * ends Aborted, nothing started) or pauses, the Node is deleted, or the deadline passes.
 * @returns an outcome when the node ends without the hook.
 */
async function gateHook(ctx: RollContext, name: HookName): Promise<NodeOutcome | undefined> {
  const { s, node, plan } = ctx;
  let g: GateLook = { nextAtMs: 0 };
  for (;;) {
    const at = { node, plan: plan.name, paused: s.paused, aborted: s.aborted };
    const step = hookGateStep(name, at, g.view, Date.now() >= ctx.deadlineMs());
    if (step.kind === 'start') return undefined;
    if (step.kind === 'end') {
      // A deleted Node frees its slot: nothing is left to hand back (as in the drain loop).
      if (step.phase === NodePhase.Deleted) {
        s.claimed = false;
        rollDone(s.roll);
      }
      return { phase: step.phase, reason: step.reason, message: step.message };
    }
    if (step.kind === 'hold') {
      const held = await holdHook(ctx, name);
      if (held) return held;
      // Someone may have uncordoned the node while it was paused: look again.
      g = { nextAtMs: 0 };
      continue;
    }
    if (step.kind === 'wait') {
      s.phase = step.phase;
      s.reason = step.reason;
      s.message = step.message;
    }
    if (ctx.continueAsNewDue()) await ctx.continueAsNewNow();
    await lookAtNode(ctx, name, g, step.kind === 'look' ? 0 : RELEASE_OBSERVE_SECONDS);
  }
}

/**
 * One look at the node for {@link gateHook}, into `g`: an `observeNode` call that answers at once
 * (`waitSeconds` 0) or when the node differs from `g`'s last answer (at most `waitSeconds`). The
 * wait for it ends early at an abort, a pause or the deadline (the call is then abandoned); the
 * node's progress is reported meanwhile. An unchanged answer means the call waited its bound, a
 * failed one (its retries used up) is tried again after 30 s: no observation starts sooner then.
 */
async function lookAtNode(ctx: RollContext, name: HookName, g: GateLook, waitSeconds: number): Promise<void> {
  const { s, node } = ctx;
  const startedAtMs = Date.now();
  const due = startedAtMs >= g.nextAtMs;
  // The first look asks from the drain's last view (afterDrain): unchanged, that view is still true.
  const since = g.fingerprint ?? s.view?.fingerprint;
  const scope = new CancellationScope();
  let answered = false;
  const obs = due
    ? scope
        .run(() =>
          gateObserver.observeNode.executeWithOptions({ summary: activitySummary.hookGate(name, node) }, [
            {
              node,
              selection: ctx.selection,
              ...(since !== undefined ? { since } : {}),
              maxWaitSeconds: waitSeconds,
              ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}),
            },
          ]),
        )
        .then(
          (o) => {
            if (o.changed) {
              const replacedBy = replacingUid(s.nodeUid, o.node);
              g.fingerprint = o.fingerprint;
              g.view = {
                exists: o.node.exists,
                unschedulable: o.node.unschedulable,
                ...(replacedBy !== undefined ? { replacedBy } : {}),
              };
            } else if (!g.view && s.view) {
              g.fingerprint = o.fingerprint;
              g.view = {
                exists: s.view.exists,
                unschedulable: s.view.unschedulable,
                ...(s.view.replacedBy !== undefined ? { replacedBy: s.view.replacedBy } : {}),
              };
            } else g.nextAtMs = startedAtMs + waitSeconds * 1000;
          },
          (err: unknown) => {
            if (!isCancellation(err)) {
              delete g.fingerprint;
              g.nextAtMs = startedAtMs + 30_000;
            }
          },
        )
        .finally(() => (answered = true))
    : undefined;
  // A deadline still ahead ends the wait (an uncordoned node then ends); a past one wakes nothing.
  const deadline = ctx.deadlineMs() > Date.now() ? ctx.deadlineMs() : Infinity;
  for (;;) {
    const again = ctx.report();
    const until = Math.min(deadline, again ?? Infinity, due ? Infinity : g.nextAtMs);
    await conditionUntil(
      () => answered || s.aborted || s.paused,
      until,
      (at) => timerSummary.hookGate(name, node, at),
    );
    const now = Date.now();
    if (answered || s.aborted || s.paused || now >= deadline || (!due && now >= g.nextAtMs)) break;
  }
  if (obs && !answered) {
    scope.cancel();
    await obs;
  }
}

/**
 * Waits, before hook `name` starts, while the node is paused (by the user or the maintenance
 * windows): the hook starts once resumed ({@link heldHookStep}). @returns an outcome when the node
 * ends instead (abort; a deadline that passed while paused, at the resume).
 */
async function holdHook(ctx: RollContext, name: HookName): Promise<NodeOutcome | undefined> {
  const { s } = ctx;
  s.phase = 'Paused';
  s.reason = NodeReason.PausedByUser;
  s.message = `paused: the ${name} hook starts when the plan is resumed`;
  for (;;) {
    const step = heldHookStep(name, s, Date.now() >= ctx.deadlineMs());
    if (step.kind === 'end') return { phase: step.phase, reason: step.reason, message: step.message };
    if (step.kind === 'start') return undefined;
    if (Date.now() >= ctx.deadlineMs()) {
      s.reason = NodeReason.PausedPastDeadline;
      s.message = `paused past the deadline: the node ends when the plan is resumed, without the ${name} hook`;
    }
    if (ctx.continueAsNewDue()) await ctx.continueAsNewNow();
    const again = ctx.report();
    // The deadline changes the message (a past one wakes nothing: the resume does).
    const deadline = ctx.deadlineMs() > Date.now() ? ctx.deadlineMs() : Infinity;
    const until = Math.min(deadline, again ?? Infinity);
    await conditionUntil(
      () => !s.paused || s.aborted,
      until,
      (at) => timerSummary.hookPaused(name, ctx.node, at),
    );
  }
}

/** Waits for a per-node release (signal or annotation), an abort, or the deadline. */
async function awaitRelease(
  ctx: RollContext,
  step: { phase: 'Drained' | 'Blocked'; reason: string; message: string },
): Promise<NodeOutcome | undefined> {
  const { s, node } = ctx;
  const r = s.roll;
  const observer = proxyActivities<DrainActivities>({
    startToCloseTimeout: `${RELEASE_OBSERVE_SECONDS + 60}s`,
    heartbeatTimeout: '20s',
    retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
  });
  let since = s.view?.fingerprint;
  /** The observation saw the node gone. */
  let deleted = false;
  /** The last observation saw the node schedulable (an admin uncordoned it while it waited). */
  let schedulable = false;
  // An unchanged answer means the activity waited its bound: never look again sooner (as the drain loop).
  let nextObserveAtMs = 0;
  for (;;) {
    if (r.released && ctx.spec.uncordonAfterEachNode) return undefined;
    if (s.aborted)
      return { phase: NodePhase.Aborted, reason: NodeReason.Aborted, message: `aborted: ${step.message}` };
    if (Date.now() >= ctx.deadlineMs())
      return step.phase === NodePhase.Blocked
        ? { phase: NodePhase.Blocked, reason: step.reason, message: `${step.message}; deadline passed` }
        : {
            phase: NodePhase.Drained,
            reason: NodeReason.Drained,
            message: 'drained; deadline passed before a per-node release',
          };
    if (ctx.continueAsNewDue()) await ctx.continueAsNewNow();
    const scope = new CancellationScope();
    let answered = false;
    const startedAtMs = Date.now();
    const obs =
      ctx.spec.uncordonAfterEachNode && startedAtMs >= nextObserveAtMs
        ? scope
            .run(() =>
              observer.observeNode.executeWithOptions({ summary: activitySummary.awaitRelease(node) }, [
                {
                  node,
                  selection: ctx.selection,
                  ...(since !== undefined ? { since } : {}),
                  maxWaitSeconds: RELEASE_OBSERVE_SECONDS,
                },
              ]),
            )
            .then(
              (o) => {
                if (o.changed) {
                  since = o.fingerprint;
                  if (o.node.released) release(r);
                  if (!o.node.exists) deleted = true;
                  else schedulable = !o.node.unschedulable;
                } else nextObserveAtMs = startedAtMs + RELEASE_OBSERVE_SECONDS * 1000;
              },
              (err: unknown) => {
                // A failed observation (its retries used up) is tried again after a while, from scratch.
                if (!isCancellation(err)) {
                  since = undefined;
                  nextObserveAtMs = startedAtMs + 30_000;
                }
              },
            )
            .finally(() => (answered = true))
        : undefined;
    const again = ctx.report();
    const until = Math.min(
      ctx.deadlineMs(),
      again ?? Infinity,
      obs || !ctx.spec.uncordonAfterEachNode ? Infinity : nextObserveAtMs,
    );
    await conditionUntil(
      () => answered || s.aborted || r.released,
      until,
      (at) => timerSummary.awaitRelease(ctx.node, at),
    );
    if (obs && !answered) {
      scope.cancel();
      await obs;
    }
    // A node uncordoned while it waits for its release is Blocked/NodeUncordonedExternally (a
    // Warning Event from the plan) until it is cordoned again.
    if (!r.released && !deleted) {
      if (schedulable && s.reason !== NodeReason.NodeUncordonedExternally) {
        s.phase = NodePhase.Blocked;
        s.reason = NodeReason.NodeUncordonedExternally;
        s.message = `node ${node} was uncordoned by someone else while it waited for its per-node release: pods may be scheduled onto it again; cordon it again (kubectl cordon ${node}) or release it`;
      } else if (!schedulable && s.reason === NodeReason.NodeUncordonedExternally) {
        s.phase = step.phase;
        s.reason = step.reason;
        s.message = step.message;
      }
    }
    // A node deleted while it waits for its release ends Deleted and frees its slot (as in the
    // drain loop).
    if (deleted && !r.released) {
      s.claimed = false;
      rollDone(r);
      return {
        phase: 'Deleted',
        reason: NodeReason.NodeDeleted,
        message: `node ${node} was deleted while it waited for its per-node release`,
      };
    }
  }
}
