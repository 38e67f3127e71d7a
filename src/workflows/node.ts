/**
 * `drainNodeWorkflow`: drains one node of a plan as a level-triggered loop, observe → decide → act
 * → report. A child of `drainPlanWorkflow`, which it keeps informed through debounced
 * `nodeProgress` signals (the last one marked `final`).
 *
 * - Claim: `cordonNode`; a node held by another plan is Waiting (NodeHeldByOtherPlan) and tried
 *   again after a growing backoff (`retryBackoff`) or, sooner, as soon as the `waitClaimReleased`
 *   activity (a wait on the worker's watch cache) sees the other plan hand it back. While paused
 *   an unclaimed node neither tries nor watches: it waits for the resume, then tries at once.
 * - Observe: the `observeNode` activity (one list-then-watch of the node, its pods and their
 *   PodDisruptionBudgets) answers when something material changed, or after
 *   `retryBackoff.maxSeconds` when nothing did.
 * - Decide: the pure reducers of `src/drain/node/` (all rules live there).
 * - Act: `evictPod` activities, one Eviction API call each, start-to-close
 *   `eviction.callTimeoutSeconds`, no automatic retry, cancelled on abort.
 * - Report: a `nodeProgress` signal when the report changed, at most one per
 *   {@link PROGRESS_INTERVAL_MS}; in plans that name PDB reporters a changed report also rides
 *   along with each budget request (then no separate signal is needed for it).
 * - PDB budget (plans of more than one node, `coordinatePdbs`): a `pdbBudget` signal to the plan
 *   whenever what the node holds or wants of a PDB changed, or a PDB it reports for the plan rose
 *   (one in flight at a time); evictions behind a PDB also need the plan's `pdbGrant` (rules in
 *   src/drain/pdb-budget.ts).
 *
 * The plan deadline and every cooldown are durable timers (the wake time of each decision). The
 * whole state is one JSON-plain object; it continues as new at a quiet point (no eviction in
 * flight, no observation running, handlers finished) when the history grows past
 * {@link CONTINUE_AS_NEW_EVENTS}, Temporal suggests it, or the run is older than
 * {@link CONTINUE_AS_NEW_AGE_MS}.
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow` are imported.
 */
import {
  ActivityCancellationType,
  CancelledFailure,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  proxyActivities,
  setHandler,
  allHandlersFinished,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { DrainActivities } from '../activities/types.js';
import type { EvictResult } from '../contract/eviction.js';
import type { NodeObservation } from '../contract/observation.js';
import { DeadlineReason, NodePhase, NodeReason, PodPolicyReason } from '../api/reasons.js';
import { backoffSeconds } from '../drain/backoff.js';
import {
  applyDeleteAnswer,
  applyDeleteTimeout,
  nextDeleteTimeoutAt,
  applyEvictionAnswer,
} from '../drain/node/answers.js';
import {
  applyGrant,
  beliefAfterGrant,
  beliefAfterRequest,
  budgetRequestToSend,
  nodeBudgetRequest,
  type BudgetBelief,
} from '../drain/node/budget.js';
import { applyControl, isStaleControl, pausedBeforeClaim } from '../drain/node/controls.js';
import { deletionWarning } from '../drain/node/deadline.js';
import { decideNode, nextActionAt, nodeBlockers } from '../drain/node/decide.js';
import {
  applyObservation,
  applyUnchangedObservation,
  hasUnconfirmedEvictions,
  unconfirmedPdbs,
} from '../drain/node/observation.js';
import { podPolicyProgress, nodeCounts } from '../drain/node/report.js';
import {
  type NodeDrainSettings,
  type DeleteAnswer,
  initialNodeState,
  type EvictionCallFailure,
  type NodeDrainState,
  type NodeOutcome,
} from '../drain/node/state.js';
import { drained, initialRollState, lastHook, hookStatus } from '../drain/hooks.js';
import { returningWarnings } from '../drain/returning.js';
import { handBackWording } from '../drain/hand-back.js';
import { runRoll } from './node-roll.js';
import { nodeDrainSpec, type DrainNodeInput, type NodeDrainSpec } from './messages.js';
import { evictionTaskQueue } from '../contract/names.js';
import {
  nodeControlSignal,
  nodeProgressSignal,
  pdbBudgetSignal,
  pdbGrantSignal,
  type PdbBudgetMessage,
} from '../contract/node-messages.js';
import type { NodeProgress } from '../contract/progress.js';
import { WakeTimer } from './wake-timer.js';

/** Longest wait of an observation while an answered eviction is not yet confirmed by one, seconds. */
export const CONFIRM_WAIT_SECONDS = 2;
/** Longest wait of an ending drain (plans with PDB reporters) for its last evictions to be observed, ms. */
export const CONFIRM_HOLD_MS = 10_000;
/** Minimum time between two progress signals to the plan workflow, ms (the final one goes at once). */
export const PROGRESS_INTERVAL_MS = 2000;
/** History length (events) after which a run continues as new at its next quiet point. */
export const CONTINUE_AS_NEW_EVENTS = 5000;
/** Age of a run after which it continues as new at its next quiet point, ms (24 h). */
export const CONTINUE_AS_NEW_AGE_MS = 24 * 3600 * 1000;

const k8s = proxyActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});

/** One input of the loop, produced by a settled activity. */
type LoopInput =
  | { kind: 'observed'; seq: number; startedAtMs: number; waitSeconds: number; obs: NodeObservation }
  | { kind: 'observeFailed'; seq: number; message: string; cancelled: boolean }
  | { kind: 'answered'; uid: string; answer: EvictResult | EvictionCallFailure }
  | { kind: 'deleted'; uid: string; answer: DeleteAnswer }
  | { kind: 'fatal'; message: string };

function errorMessage(err: unknown): string {
  if (err instanceof ActivityFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}

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

/**
 * The node workflow's body, shielded from Temporal's cancellation: a cancellation request rejects
 * `cancelRequested`, which the body takes as an abort ({@link NodeDrainState.cancelled}): no new
 * evictions, calls in flight cancelled, the node left claimed and cordoned for the plan to hand back
 * when it ends (as an aborted node), the final report Aborted/WorkflowCanceled.
 */
async function drainNode(input: DrainNodeInput, cancelRequested: Promise<never>): Promise<NodeProgress> {
  const { node, plan } = input;
  const spec: NodeDrainSpec = input.drain ?? nodeDrainSpec(input.spec!);
  const backoff = spec.retryBackoff;
  const settings: NodeDrainSettings = {
    maxConcurrentPerNode: spec.maxConcurrentPerNode,
    retryBackoff: backoff,
    ...(spec.onDeadline ? { onDeadline: spec.onDeadline } : {}),
    ...(spec.planDeadlineMs !== undefined ? { planDeadlineMs: spec.planDeadlineMs } : {}),
    ...(spec.deadlineWarningSeconds !== undefined
      ? { deadlineWarningSeconds: spec.deadlineWarningSeconds }
      : {}),
  };
  const deleteTimeout = spec.skipWaitForDeleteTimeoutSeconds;
  const s: NodeDrainState = input.carried ?? initialNodeState(node, input.deadlineMs, input.paused);
  // The generation of the user's controls the plan had seen when it started this node.
  if (!input.carried && input.controlGeneration !== undefined) s.controlGeneration = input.controlGeneration;
  const runStartMs = Date.now();
  // spec.hooks and uncordon AfterEachNode (src/workflows/node-roll.ts).
  const roll = spec.roll;
  const rolling = roll !== undefined;
  if (rolling) s.roll ??= initialRollState(input.released === true);
  if (spec.coordinatePdbs && !s.budget) s.budget = { grantSeq: 0, grants: {} };
  // A plan that names reporters tells each node its set with its first answer; until then the
  // node reports none (the plan names a reporter for each PDB as soon as it knows who tracks it).
  if (spec.pdbReporters && s.budget && s.budget.reports === undefined) s.budget.reports = [];
  // A node with a reporting set is woken only by new versions of the PDBs it reports (and by
  // those with evictions it has not seen counted yet) and spends the plan's grants as they come
  // (src/drain/node/, grants-only spending): in `scale` (20 running nodes, each with one
  // pod behind each of 20 PDBs) waking every node for every version of every PDB it watches cost
  // about 48 observations per node instead of about 11. Such a node looks again at once when an
  // eviction is answered and when the plan changes its reporting set while an observation waits.
  const grantsOnly = s.budget?.reports !== undefined;

  const evictor = proxyActivities<DrainActivities>({
    taskQueue: evictionTaskQueue(workflowInfo().taskQueue),
    startToCloseTimeout: `${spec.callTimeoutSeconds}s`,
    // Heartbeats carry the cancellation to the worker, which aborts the HTTP request.
    heartbeatTimeout: `${Math.max(2, Math.ceil(spec.callTimeoutSeconds / 2))}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 1 },
  });
  const deleter = proxyActivities<DrainActivities>({
    startToCloseTimeout: `${spec.callTimeoutSeconds}s`,
    retry: { initialInterval: '1s', maximumInterval: '10s', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  const observeWaitSeconds = backoff.maxSeconds;
  // An observation the node stops waiting for (the node ends, continues as new, or - grants-only -
  // the plan changed its reporting set) is abandoned, not cancelled: no RequestCancelActivityTask
  // command, so none can cross the observation's answer or its start. The time-skipping test
  // server refuses such a task completion with ACTIVITY_UNKNOWN on every retry (a known bug of that
  // server; the real server takes it), which froze a node that ended while its observation was
  // scheduled. An abandoned observation holds nothing but a worker slot: it only reads the
  // worker's watch cache, and its next heartbeat (at most 16 s) finds a closed run and stops it, or
  // it answers within its bound (ignored).
  const observer = proxyActivities<DrainActivities>({
    startToCloseTimeout: `${observeWaitSeconds + 60}s`,
    heartbeatTimeout: '20s',
    retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
    cancellationType: ActivityCancellationType.ABANDON,
  });

  // The wait for a held node's hand-back (waitClaimReleased): at most until the next try, after
  // retryBackoff.maxSeconds, plus the cache's sync. Not retried: when it fails, the round's timer
  // ends the round as before. Abandoned like observations when the round ends without it.
  const claimWaiter = proxyActivities<DrainActivities>({
    startToCloseTimeout: `${backoff.maxSeconds + 60}s`,
    heartbeatTimeout: '20s',
    retry: { maximumAttempts: 1 },
    cancellationType: ActivityCancellationType.ABANDON,
  });

  // ---- messages: one line each ----
  let woken = false;
  setHandler(nodeControlSignal, ({ action, generation }) => {
    // A pause or resume older than the newest generation seen is stale (a standby operator's late
    // direct stop crossing the leader's newer resume, forwarded by the plan): the newer spec wins.
    if (isStaleControl(s, action, generation)) return;
    applyControl(s, action, generation);
    woken = true;
  });
  // A cancellation request from Temporal is an abort that says where it came from.
  cancelRequested.catch(() => {
    s.cancelled = true;
    applyControl(s, 'abort');
    woken = true;
  });
  let belief: BudgetBelief | undefined;
  setHandler(pdbGrantSignal, (g) => {
    // A grant under a number already applied (sent again, or by a plan task the server refused and
    // ran again) may differ from the one applied: the plan's ledger is wrong, so the next request
    // goes out whole.
    if (s.budget && g.seq <= s.budget.grantSeq) belief = undefined;
    else if (belief && s.budget) beliefAfterGrant(belief, g);
    applyGrant(s, g);
    woken = true;
  });

  // ---- report: debounced progress signals to the plan ----
  const parent = getExternalWorkflowHandle(input.parentWorkflowId);
  let parentGone = false;
  let sending: Promise<void> | undefined;
  let lastSent: string | undefined;
  let lastSentAtMs = 0;
  const progress = (final: boolean): NodeProgress => {
    const now = Date.now();
    const next = nextActionAt(s, now);
    return {
      node,
      phase: s.phase,
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.message ? { message: s.message } : {}),
      ...(s.phase === NodePhase.Waiting && s.heldBy ? { heldBy: s.heldBy } : {}),
      ...nodeCounts(s),
      blockedBy: nodeBlockers(s, now),
      ...podPolicyProgress(s),
      attempts: s.attempts,
      tooManyRequests: s.tooManyRequests,
      ...(next !== undefined ? { nextActionAtMs: next } : {}),
      ...(s.lastError ? { lastError: s.lastError } : {}),
      cordonedByPlan: s.cordonedByPlan,
      claimed: s.claimed,
      ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}),
      ...(lastHook(s.roll) ? { hook: hookStatus(lastHook(s.roll)!) } : {}),
      ...(final ? { final: true } : {}),
    };
  };
  /** Follows a signal to the plan: `done` when it settled, then the loop wakes. */
  const signalParent = (sent: Promise<void>, done: () => void): Promise<void> =>
    sent.then(
      () => {
        done();
        woken = true;
      },
      () => {
        // Only a closed or missing plan workflow refuses a signal: nobody is left to report to.
        parentGone = true;
        done();
        woken = true;
      },
    );
  /** Sends the report when it changed and the interval allows; @returns when to try again, if due. */
  const report = (): number | undefined => {
    const p = progress(false);
    const key = JSON.stringify(p);
    if (key === lastSent) return undefined;
    const dueAt = lastSentAtMs + PROGRESS_INTERVAL_MS;
    if (sending || Date.now() < dueAt) return Math.max(dueAt, Date.now() + 1);
    lastSent = key;
    lastSentAtMs = Date.now();
    sending = signalParent(parent.signal(nodeProgressSignal, p), () => (sending = undefined));
    return undefined;
  };
  // ---- PDB budget: requests to the plan when what the node holds or wants changed ----
  let budgetSending: Promise<void> | undefined;
  const requestBudget = (quiesce: boolean) => {
    const req = nodeBudgetRequest(s, Date.now(), settings, quiesce);
    if (!req || budgetSending || parentGone) return;
    const out = budgetRequestToSend(belief, req, s.budget?.reports);
    if (!out) return;
    belief = beliefAfterRequest(req, s.budget?.reports);
    // The progress rides along when it changed (no separate nodeProgress signal for it), unless a
    // nodeProgress signal is in flight (two reports of one node must not cross).
    let msg: PdbBudgetMessage = out;
    if (spec.pdbReporters && !sending) {
      const p = progress(false);
      const key = JSON.stringify(p);
      if (key !== lastSent) {
        lastSent = key;
        lastSentAtMs = Date.now();
        msg = { ...out, progress: p };
      }
    }
    budgetSending = signalParent(parent.signal(pdbBudgetSignal, msg), () => (budgetSending = undefined));
  };
  // ---- Events of the deadline policy (best effort; followed so the end and continue-as-new wait) ----
  const eventsInFlight = new Set<Promise<void>>();
  const recordEvent = (reason: string, message: string) => {
    const t: Promise<void> = k8s.recordEvent
      .executeWithOptions({ summary: `event ${reason}` }, [{ plan, type: 'Warning', reason, message }])
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        eventsInFlight.delete(t);
        woken = true;
      });
    eventsInFlight.add(t);
  };
  /** onDeadline SkipNode: hands the node back (uncordoned unless it was unschedulable before the plan). */
  const handBack = async (outcome: NodeOutcome): Promise<NodeOutcome> => {
    try {
      const answer = await k8s.releaseNode.executeWithOptions({ summary: `hand back ${node}` }, [
        { plan, node, uncordon: true, ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}) },
      ]);
      s.claimed = false;
      return {
        ...outcome,
        message: `${outcome.message}${
          answer.uncordoned
            ? ' (uncordoned)'
            : answer.left === 'replaced'
              ? ` (${handBackWording(answer)})`
              : ' (left unschedulable: it was before the plan)'
        }`,
      };
    } catch (err) {
      return { ...outcome, message: `${outcome.message}; handing it back failed: ${errorMessage(err)}` };
    }
  };
  const finish = async (outcome: NodeOutcome): Promise<NodeProgress> => {
    if (s.cancelled && outcome.phase === NodePhase.Aborted)
      outcome = {
        phase: NodePhase.Aborted,
        reason: NodeReason.WorkflowCanceled,
        message: `cancelled from Temporal: ${outcome.message}`,
      };
    if (outcome.phase === NodePhase.Skipped && s.claimed) outcome = await handBack(outcome);
    // The claimed Node is gone (deleted, or deleted and created again): nothing is left to hand
    // back, and no Node of that name is this plan's.
    if (outcome.phase === NodePhase.Deleted) s.claimed = false;
    await Promise.all([...eventsInFlight]);
    s.phase = outcome.phase;
    s.reason = outcome.reason;
    s.message = outcome.message;
    await budgetSending;
    await sending;
    const p = progress(true);
    if (!parentGone) {
      await parent.signal(nodeProgressSignal, p).catch(() => undefined);
    }
    return p;
  };

  // ---- 1. claim and cordon; a node held by another plan is tried again with a growing backoff ----
  // ---- and as soon as the other plan hands it back; never while paused ----
  /**
   * Whether the node, unclaimed, must not try to claim now: it is paused (a cordon takes the node's
   * capacity away, and a pause stops new work).
   */
  const noClaimWhilePaused = (): boolean => s.paused;
  /**
   * Waits while the node is paused before its claim, with no claim attempt and no wait for a
   * hand-back (`waitClaimReleased`): until it is resumed, aborted (or its plan workflow is gone) or
   * its deadline passes; the claim loop then decides. Continues as new by age or history length.
   */
  const waitPausedBeforeClaim = async (): Promise<void> => {
    pausedBeforeClaim(s);
    for (;;) {
      if (parentGone && !s.aborted) {
        s.aborted = true;
        s.lastError = 'the plan workflow is gone; stopping';
      }
      if (s.aborted || !s.paused || Date.now() >= s.deadlineMs) return;
      if (continueAsNewDue() && !sending) await continueAsNewNow();
      const again = report();
      const ageAt = runStartMs + CONTINUE_AS_NEW_AGE_MS;
      const until = Math.min(s.deadlineMs, again ?? Infinity, ageAt > Date.now() ? ageAt : Infinity);
      woken = false;
      await condition(() => woken || s.aborted || !s.paused, Math.max(1, until - Date.now()));
    }
  };
  /** The holder whose hand-back ended the last round (the claim attempt then decides). */
  let wokeFor: string | undefined;
  while (!s.claimed) {
    if (s.aborted)
      return finish({
        phase: NodePhase.Aborted,
        reason: NodeReason.Aborted,
        message: 'aborted before the node was cordoned',
      });
    if (Date.now() >= s.deadlineMs)
      return finish(
        settings.onDeadline === 'SkipNode'
          ? {
              phase: NodePhase.Skipped,
              reason: DeadlineReason.SkippedAtDeadline,
              message: 'deadline passed before the node could be claimed: skipped',
            }
          : {
              phase: NodePhase.Blocked,
              reason: NodeReason.DeadlineExceeded,
              message: 'deadline passed before the node could be claimed',
            },
      );
    if (noClaimWhilePaused()) {
      await waitPausedBeforeClaim();
      continue;
    }
    let res;
    try {
      // A node the plan claimed already (spec.cordon AllAtStart) is that Node, by uid.
      const claimedUid = s.nodeUid ?? input.nodeUid;
      res = await k8s.cordonNode.executeWithOptions({ summary: `cordon ${node}` }, [
        { plan, node, ...(claimedUid !== undefined ? { nodeUid: claimedUid } : {}) },
      ]);
    } catch (err) {
      return finish({
        phase: NodePhase.Failed,
        reason: NodeReason.ActivityFailed,
        message: `cordon ${node}: ${errorMessage(err)}`,
      });
    }
    if (res.outcome === 'Cordoned') {
      s.claimed = true;
      s.cordonedByPlan = !res.wasUnschedulable;
      if (res.nodeUid !== undefined) s.nodeUid = res.nodeUid;
      delete s.heldBy;
      s.phase = NodePhase.Cordoned;
      s.reason = undefined;
      s.message = undefined;
      break;
    }
    if (res.outcome === 'NodeReplaced') {
      s.nodeUid = input.nodeUid;
      return finish({
        phase: NodePhase.Deleted,
        reason: NodeReason.NodeDeleted,
        message: `node ${node} was deleted and created again under its name before its drain started (uid ${input.nodeUid ?? '?'}, now ${res.nodeUid}): the new node is another node, not claimed by this plan, so it is not drained, cordoned or uncordoned by it`,
      });
    }
    if (res.outcome === 'NodeNotFound')
      return finish({
        phase: NodePhase.Failed,
        reason: NodeReason.NodeNotFound,
        message: `node ${node} does not exist`,
      });
    s.claimRounds++;
    s.phase = NodePhase.Waiting;
    s.reason = NodeReason.NodeHeldByOtherPlan;
    s.message = `node ${node} is held by plan ${res.heldBy}`;
    s.heldBy = res.heldBy;
    const retryAt = Date.now() + backoffSeconds(s.claimRounds, backoff) * 1000;
    // The round waits for the backoff and for the hand-back (waitClaimReleased), and tries again
    // as soon as it comes.
    const watchUntil = Math.min(retryAt, s.deadlineMs);
    const watchSeconds = Math.ceil((watchUntil - Date.now()) / 1000);
    // A hand-back the cache showed that the claim attempt then did not see (a lagging cache) makes
    // the next round wait for its timer only: no tight loop of claim attempts.
    const holder = res.heldBy;
    const watchRound = watchSeconds >= 1 && wokeFor !== holder;
    wokeFor = undefined;
    let handedBack = false;
    let watch: CancellationScope | undefined;
    let watched: Promise<void> | undefined;
    if (watchRound) {
      const scope = new CancellationScope();
      watch = scope;
      watched = scope
        .run(() =>
          claimWaiter.waitClaimReleased.executeWithOptions({ summary: `await hand-back of ${node}` }, [
            { plan, node, heldBy: holder, maxWaitSeconds: watchSeconds },
          ]),
        )
        .then(
          (r) => {
            if (r.outcome !== 'StillHeld') handedBack = true;
          },
          // Failed or abandoned: the timer below still ends the round.
          () => undefined,
        )
        .finally(() => {
          if (watch === scope) watch = undefined;
        });
    }
    for (;;) {
      const again = report();
      const until = Math.min(retryAt, s.deadlineMs, again ?? Infinity);
      woken = false;
      await condition(() => woken || s.aborted || handedBack, Math.max(1, until - Date.now()));
      // Paused: the round ends, the paused wait follows without the watch.
      if (
        s.aborted ||
        handedBack ||
        Date.now() >= retryAt ||
        Date.now() >= s.deadlineMs ||
        noClaimWhilePaused()
      )
        break;
    }
    if (handedBack) wokeFor = holder;
    // Still waiting (abort, deadline, the next try): abandoned, not cancelled (see `observer`).
    if (watch) {
      watch.cancel();
      watch = undefined;
    }
    // Settles at once once abandoned (ABANDON: the cancelled call's promise rejects at once).
    await watched;
    if (continueAsNewDue() && !sending) await continueAsNewNow();
  }

  // ---- 2. the loop ----
  const inbox: LoopInput[] = [];
  const inFlight = new Map<string, Promise<void>>();
  const evictions = new CancellationScope();
  let cancelledEvictions = false;
  let observing: { seq: number; scope: CancellationScope; done: Promise<void>; reports?: string } | undefined;
  /**
   * The PDBs a grants-only node's observations are woken by: those it reports, and those with
   * evictions answered 201 that no observation shows yet (an unchanged answer confirms them, so it
   * must mean that these PDBs did not change either). Sorted keys.
   */
  const watchedPdbs = (): string[] =>
    [...new Set([...(s.budget?.reports ?? []), ...unconfirmedPdbs(s)])].sort();
  /** The reporting set an observation of a grants-only node is woken by, as one string. */
  const watchedReports = (): string | undefined =>
    grantsOnly ? JSON.stringify(s.budget?.reports ?? []) : undefined;
  let nextObserveAtMs = 0;
  let outcome: NodeOutcome | undefined;
  let confirmUntilMs: number | undefined;
  const timer = new WakeTimer();

  /** Starts an observation; `maxWaitSeconds` overrides its wait (0: answer at once, changed or not). */
  const startObserve = (maxWaitSeconds?: number) => {
    const seq = ++s.observeSeq;
    const startedAtMs = Date.now();
    // While an answered eviction is not yet confirmed by an observation, look again soon even if
    // nothing changes: the confirmation frees the PDB budget that eviction still holds.
    const waitSeconds =
      maxWaitSeconds ??
      (hasUnconfirmedEvictions(s) ? Math.min(CONFIRM_WAIT_SECONDS, observeWaitSeconds) : observeWaitSeconds);
    const scope = new CancellationScope();
    const done = scope
      .run(() =>
        observer.observeNode.executeWithOptions({ summary: `observe ${node}` }, [
          {
            node,
            selection: spec.podSelection,
            ...(s.view ? { since: s.view.fingerprint } : {}),
            maxWaitSeconds: waitSeconds,
            ...(s.budget
              ? {
                  pdbs: unconfirmedPdbs(s),
                  pdbVersions: grantsOnly ? watchedPdbs() : true,
                  ...(grantsOnly ? { listedPdbsOnly: true } : {}),
                }
              : {}),
            ...(spec.podOrder ? { podOrder: spec.podOrder } : {}),
            ...(s.nodeUid !== undefined ? { nodeUid: s.nodeUid } : {}),
          },
        ]),
      )
      .then(
        (obs) => {
          inbox.push({ kind: 'observed', seq, startedAtMs, waitSeconds, obs });
        },
        (err: unknown) => {
          inbox.push({
            kind: 'observeFailed',
            seq,
            message: errorMessage(err),
            cancelled: isCancellation(err),
          });
        },
      )
      .finally(() => {
        // A newer observation may have replaced this one already (a reporting set changed).
        if (observing?.seq === seq) observing = undefined;
      });
    const reports = watchedReports();
    observing = { seq, scope, done, ...(reports !== undefined ? { reports } : {}) };
  };

  const startEvict = (uid: string) => {
    const p = s.pods[uid]!;
    const call = evictions
      .run(() =>
        evictor.evictPod.executeWithOptions({ summary: `evict ${p.key}` }, [
          {
            namespace: p.namespace,
            name: p.name,
            uid: p.uid,
            ...(spec.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: spec.gracePeriodSeconds } : {}),
          },
        ]),
      )
      .then(
        (answer) => {
          inbox.push({ kind: 'answered', uid, answer });
        },
        (err: unknown) => {
          const cancelled = isCancellation(err);
          const timedOut = err instanceof ActivityFailure && err.cause instanceof TimeoutFailure;
          // A non-retryable failure is not an answer of the API server that waiting may change
          // (those are results): the node ends Failed naming it. The pod is still checked first.
          if (
            err instanceof ActivityFailure &&
            err.cause instanceof ApplicationFailure &&
            err.cause.nonRetryable
          )
            inbox.push({ kind: 'fatal', message: `evict ${p.key}: ${errorMessage(err)}` });
          inbox.push({
            kind: 'answered',
            uid,
            answer: {
              outcome: 'CallFailed',
              timedOut,
              cancelled,
              message: timedOut
                ? `eviction of ${p.key} timed out`
                : `eviction of ${p.key} failed: ${errorMessage(err)}`,
            },
          });
        },
      )
      .finally(() => {
        inFlight.delete(uid);
      });
    inFlight.set(uid, call);
  };

  const startDelete = (uid: string, gracePeriodSeconds: number) => {
    const p = s.pods[uid]!;
    const call = deleter.deletePod
      .executeWithOptions({ summary: `delete ${p.key} (deadline)` }, [
        { namespace: p.namespace, name: p.name, uid: p.uid, gracePeriodSeconds },
      ])
      .then(
        (answer) => {
          inbox.push({ kind: 'deleted', uid, answer });
          if (answer.outcome === 'Deleted')
            recordEvent(
              DeadlineReason.PodDeletedAtDeadline,
              `node ${node}: pod ${p.key} deleted without the Eviction API at the deadline (PodDisruptionBudgets bypassed), grace period ${gracePeriodSeconds} s`,
            );
        },
        (err: unknown) => {
          // As for evictions: a non-retryable failure ends the node Failed naming it (a deletion
          // the API server refused is a result, `Failed`, and a blocker retried after the backoff).
          if (
            err instanceof ActivityFailure &&
            err.cause instanceof ApplicationFailure &&
            err.cause.nonRetryable
          )
            inbox.push({ kind: 'fatal', message: `delete ${p.key}: ${errorMessage(err)}` });
          inbox.push({
            kind: 'deleted',
            uid,
            answer: { outcome: 'CallFailed', message: `deletion of ${p.key} failed: ${errorMessage(err)}` },
          });
        },
      )
      .finally(() => {
        inFlight.delete(uid);
      });
    inFlight.set(uid, call);
  };

  function continueAsNewDue(): boolean {
    const info = workflowInfo();
    return (
      info.continueAsNewSuggested ||
      info.historyLength >= CONTINUE_AS_NEW_EVENTS ||
      Date.now() - runStartMs >= CONTINUE_AS_NEW_AGE_MS
    );
  }
  async function continueAsNewNow(): Promise<never> {
    await condition(allHandlersFinished);
    const next: DrainNodeInput = {
      plan: input.plan,
      node: input.node,
      drain: spec,
      deadlineMs: s.deadlineMs,
      parentWorkflowId: input.parentWorkflowId,
      paused: s.paused,
      carried: s,
    };
    return continueAsNew<typeof drainNodeWorkflow>(next);
  }

  // ---- spec.hooks / uncordon AfterEachNode: the beforeDrain hook, or where a continued run is ----
  const rollContext = () => ({
    plan,
    node,
    s: s as NodeDrainState & { roll: NonNullable<NodeDrainState['roll']> },
    spec: roll!,
    selection: spec.podSelection,
    deadlineMs: () => spec.planDeadlineMs ?? s.deadlineMs,
    report,
    continueAsNewDue,
    continueAsNewNow,
  });
  if (rolling) {
    const early = await runRoll(rollContext());
    if (early) return finish(early);
  }

  for (;;) {
    // Apply what settled.
    for (const item of inbox.splice(0)) {
      const now = Date.now();
      if (item.kind === 'observed') {
        if (item.obs.changed) applyObservation(s, item.obs, item.seq, now);
        else applyUnchangedObservation(s, item.seq);
        // An unchanged answer means the activity waited its bound; never look again sooner.
        if (!item.obs.changed) nextObserveAtMs = item.startedAtMs + item.waitSeconds * 1000;
      } else if (item.kind === 'fatal') {
        outcome ??= { phase: NodePhase.Failed, reason: NodeReason.ActivityFailed, message: item.message };
      } else if (item.kind === 'observeFailed') {
        if (!item.cancelled)
          outcome ??= {
            phase: NodePhase.Failed,
            reason: NodeReason.ActivityFailed,
            message: `observe ${node}: ${item.message}`,
          };
      } else if (item.kind === 'deleted') {
        applyDeleteAnswer(s, item.uid, item.answer, now, backoff);
      } else {
        applyEvictionAnswer(s, item.uid, item.answer, now, backoff);
        // The answer changes what an observation shows (the pod terminating or gone): a node
        // that no other PDB wakes must not sit out an unchanged observation's bound first.
        if (grantsOnly) nextObserveAtMs = 0;
      }
    }
    if (parentGone && !s.aborted) {
      s.aborted = true;
      s.lastError = 'the plan workflow is gone; stopping';
    }
    if (s.aborted && !cancelledEvictions && inFlight.size > 0) {
      cancelledEvictions = true;
      evictions.cancel();
    }
    const now = Date.now();
    if (deleteTimeout !== undefined)
      for (const p of applyDeleteTimeout(s, now, deleteTimeout))
        recordEvent(
          PodPolicyReason.DeleteTimeoutPassed,
          `node ${node}: pod ${p.key} ${s.timedOut?.[p.uid]?.message ?? 'counted as gone'}`,
        );
    const quiesce = continueAsNewDue();
    const decision = decideNode(s, now, settings, quiesce || outcome !== undefined);
    // At the deadline, a view observed after it: an observation started before is dropped (it may
    // wait retryBackoff.maxSeconds for a change) and one that waits for nothing starts below.
    if (decision.freshView && observing && observing.seq <= (s.deadlineView?.afterSeq ?? 0)) {
      observing.scope.cancel();
      observing = undefined;
    }
    for (const uid of decision.evict) startEvict(uid);
    for (const d of decision.delete ?? []) startDelete(d.uid, d.gracePeriodSeconds);
    const warning = deletionWarning(s, now, settings);
    if (warning) {
      s.warned = true;
      recordEvent(DeadlineReason.PodsWillBeDeleted, warning.message);
    }
    // Pods that come back: one Warning per node and controller (src/drain/returning.ts).
    for (const w of returningWarnings(s.returning, node)) {
      s.returning!.owners[w.ownerUid]!.warned = true;
      recordEvent(PodPolicyReason.ReturnsToNode, w.message);
    }
    if (decision.outcome && inFlight.size === 0) outcome ??= decision.outcome;
    // A drain that ends forgets its holdings in the plan's ledger: with reporters, evictions
    // answered 201 that no observation shows yet are confirmed first (at most CONFIRM_HOLD_MS), or
    // the plan would hand out a disruption its ledger cannot see spent yet.
    const confirming =
      outcome !== undefined &&
      spec.pdbReporters === true &&
      hasUnconfirmedEvictions(s) &&
      (confirmUntilMs ??= now + CONFIRM_HOLD_MS) > now;
    if (confirming) timer.ensure(confirmUntilMs!);
    if (outcome && inFlight.size === 0 && !confirming) {
      requestBudget(true); // the last request gives everything back, with the freshest PDB reports
      break;
    }
    // A quiet point: nothing in flight, no observation running (a waiting one is cancelled).
    if (quiesce && inFlight.size === 0 && observing) observing.scope.cancel();
    // The plan changed the node's reporting set while an observation waits: look again with the
    // new set, or the PDBs it now reports would not wake it (up to retryBackoff.maxSeconds). The
    // old one is forgotten at once (its cancellation is ignored), so the new one starts now.
    else if (grantsOnly && observing && observing.reports !== watchedReports()) {
      observing.scope.cancel();
      observing = undefined;
      nextObserveAtMs = 0;
    }
    if (
      quiesce &&
      inFlight.size === 0 &&
      !observing &&
      !sending &&
      !budgetSending &&
      eventsInFlight.size === 0
    )
      await continueAsNewNow();
    if (!observing && !quiesce && decision.freshView) {
      // Not paced by an earlier unchanged answer's bound: the next look follows this one's answer.
      nextObserveAtMs = 0;
      startObserve(0);
    } else if (!observing && !quiesce && now >= nextObserveAtMs) startObserve();
    requestBudget(quiesce || outcome !== undefined);
    const reportAt = report();
    // A wake time that has passed asks for nothing (a node paused past its deadline waits for the
    // resume): ensuring it would wake the loop at once, again and again, within one task.
    const wakeAt = decision.wakeAtMs ?? s.deadlineMs;
    if (wakeAt > now) timer.ensure(wakeAt);
    const timeoutAt = deleteTimeout !== undefined ? nextDeleteTimeoutAt(s, deleteTimeout) : undefined;
    if (timeoutAt !== undefined) timer.ensure(timeoutAt);
    if (reportAt !== undefined) timer.ensure(reportAt);
    if (!observing && nextObserveAtMs > now) timer.ensure(nextObserveAtMs);
    woken = false;
    await condition(() => inbox.length > 0 || woken || timer.fired);
    timer.fired = false;
  }

  // Ending: stop observing; evictions in flight were awaited above.
  if (observing) {
    observing.scope.cancel();
    await observing.done;
  }
  // Drained: the afterDrain hook and the per-node hand-back.
  if (rolling && outcome.phase === NodePhase.Drained) {
    drained(s.roll!);
    outcome = (await runRoll(rollContext())) ?? outcome;
  }
  return finish(outcome);
}
