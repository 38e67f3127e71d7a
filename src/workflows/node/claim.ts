/**
 * The claim: `cordonNode` claims and cordons the node. A node held by another plan is Waiting
 * (NodeHeldByOtherPlan) and tried again after a growing backoff (`retryBackoff`) or, sooner, as
 * soon as the `waitClaimReleased` activity (a wait on the worker's watch cache) sees the other plan
 * hand it back. While paused an unclaimed node neither tries nor watches: it waits for the resume,
 * then tries at once (a cordon takes the node's capacity away, and a pause stops new work).
 * Deterministic: workflow code.
 */
import { CancellationScope } from '@temporalio/workflow';
import { DeadlineReason, NodePhase, NodeReason } from '../../api/reasons.js';
import { backoffSeconds } from '../../drain/backoff.js';
import { pausedBeforeClaim } from '../../drain/node/controls.js';
import type { NodeOutcome } from '../../drain/node/state.js';
import {
  ABORTED_BEFORE_CLAIM_MESSAGE,
  heldByMessage,
  nodeNotFoundMessage,
  replacedBeforeDrainMessage,
  unclaimedAtDeadlineMessage,
} from '../../drain/node/words.js';
import { activitySummary, timerSummary } from '../../drain/summaries.js';
import { conditionUntil } from '../wake-timer.js';
import { k8s, type NodeActivities } from './activities.js';
import { CONTINUE_AS_NEW_AGE_MS, continueAsNewDue, continueAsNewNow } from './continue-as-new.js';
import type { Reporter } from './reporter.js';
import { errorMessage, type NodeRun } from './run.js';

/** What the claim needs of the node workflow. */
export interface ClaimContext {
  run: NodeRun;
  reporter: Reporter;
  acts: NodeActivities;
}

/** Aborts the run when its plan workflow is gone (nobody is left to report to). */
export function stopIfPlanGone(run: NodeRun, reporter: Reporter): void {
  if (reporter.parentGone && !run.s.aborted) {
    run.s.aborted = true;
    run.s.lastError = 'the plan workflow is gone; stopping';
  }
}

/** Claims the node. @returns undefined once claimed, else how the node ends without a claim. */
export async function claimNode(ctx: ClaimContext): Promise<NodeOutcome | undefined> {
  const { run } = ctx;
  const { s, input, settings } = run;
  const node = input.node;
  /** The holder whose hand-back ended the last round (the claim attempt then decides). */
  let wokeFor: string | undefined;
  while (!s.claimed) {
    if (s.aborted)
      return {
        phase: NodePhase.Aborted,
        reason: NodeReason.Aborted,
        message: ABORTED_BEFORE_CLAIM_MESSAGE,
      };
    if (Date.now() >= s.deadlineMs) {
      const skip = settings.onDeadline === 'SkipNode';
      return {
        phase: skip ? NodePhase.Skipped : NodePhase.Blocked,
        reason: skip ? DeadlineReason.SkippedAtDeadline : NodeReason.DeadlineExceeded,
        message: unclaimedAtDeadlineMessage(skip),
      };
    }
    if (s.paused) {
      await waitPausedBeforeClaim(ctx);
      continue;
    }
    let res;
    try {
      // A node the plan claimed already (spec.cordon AllAtStart) is that Node, by uid.
      const claimedUid = s.nodeUid ?? input.nodeUid;
      res = await k8s.cordonNode.executeWithOptions({ summary: activitySummary.cordon(node) }, [
        { plan: input.plan, node, ...(claimedUid !== undefined ? { nodeUid: claimedUid } : {}) },
      ]);
    } catch (err) {
      return {
        phase: NodePhase.Failed,
        reason: NodeReason.ActivityFailed,
        message: `cordon ${node}: ${errorMessage(err)}`,
      };
    }
    if (res.outcome === 'Cordoned') {
      s.claimed = true;
      s.cordonedByPlan = !res.wasUnschedulable;
      if (res.nodeUid !== undefined) s.nodeUid = res.nodeUid;
      delete s.heldBy;
      s.phase = NodePhase.Cordoned;
      s.reason = undefined;
      s.message = undefined;
      return undefined;
    }
    if (res.outcome === 'NodeReplaced') {
      s.nodeUid = input.nodeUid;
      return {
        phase: NodePhase.Deleted,
        reason: NodeReason.NodeDeleted,
        message: replacedBeforeDrainMessage(node, input.nodeUid, res.nodeUid),
      };
    }
    if (res.outcome === 'NodeNotFound')
      return {
        phase: NodePhase.Failed,
        reason: NodeReason.NodeNotFound,
        message: nodeNotFoundMessage(node),
      };
    s.claimRounds++;
    s.phase = NodePhase.Waiting;
    s.reason = NodeReason.NodeHeldByOtherPlan;
    s.message = heldByMessage(node, res.heldBy);
    s.heldBy = res.heldBy;
    const handedBack = await heldRound(ctx, res.heldBy, wokeFor);
    wokeFor = handedBack ? res.heldBy : undefined;
    if (continueAsNewDue(run) && !ctx.reporter.sending) await continueAsNewNow(run);
  }
  return undefined;
}

/**
 * One round of a node held by `holder`: waits for the retry backoff and, at the same time, for the
 * hand-back (waitClaimReleased), ending as soon as it comes, or at an abort, the deadline or a
 * pause. A hand-back the cache showed that the claim attempt then did not see (`wokeFor`, a
 * lagging cache) makes this round wait for its timer only: no tight loop of claim attempts.
 * @returns whether the hand-back ended the round.
 */
async function heldRound(ctx: ClaimContext, holder: string, wokeFor: string | undefined): Promise<boolean> {
  const { run, reporter } = ctx;
  const { s, input } = run;
  const retryAt = Date.now() + backoffSeconds(s.claimRounds, run.spec.retryBackoff) * 1000;
  const watchUntil = Math.min(retryAt, s.deadlineMs);
  const watchSeconds = Math.ceil((watchUntil - Date.now()) / 1000);
  let handedBack = false;
  let watch: CancellationScope | undefined;
  let watched: Promise<void> | undefined;
  if (watchSeconds >= 1 && wokeFor !== holder) {
    const scope = new CancellationScope();
    watch = scope;
    watched = scope
      .run(() =>
        ctx.acts.claimWaiter.waitClaimReleased.executeWithOptions(
          { summary: activitySummary.awaitHandBack(input.node, holder) },
          [{ plan: input.plan, node: input.node, heldBy: holder, maxWaitSeconds: watchSeconds }],
        ),
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
    const again = reporter.report();
    const until = Math.min(retryAt, s.deadlineMs, again ?? Infinity);
    run.woken = false;
    await conditionUntil(
      () => run.woken || s.aborted || handedBack,
      until,
      (at) => timerSummary.claimRetry(input.node, holder, at),
    );
    // Paused: the round ends, the paused wait follows without the watch.
    if (s.aborted || handedBack || Date.now() >= retryAt || Date.now() >= s.deadlineMs || s.paused) break;
  }
  // Still waiting (abort, deadline, the next try): abandoned, not cancelled (see `observer`).
  if (watch) {
    watch.cancel();
    watch = undefined;
  }
  // Settles at once once abandoned (ABANDON: the cancelled call's promise rejects at once).
  await watched;
  return handedBack;
}

/**
 * Waits while the node is paused before its claim, with no claim attempt and no wait for a
 * hand-back: until it is resumed, aborted (or its plan workflow is gone) or its deadline passes;
 * the claim loop then decides. Continues as new by age or history length.
 */
async function waitPausedBeforeClaim(ctx: ClaimContext): Promise<void> {
  const { run, reporter } = ctx;
  const s = run.s;
  pausedBeforeClaim(s);
  for (;;) {
    stopIfPlanGone(run, reporter);
    if (s.aborted || !s.paused || Date.now() >= s.deadlineMs) return;
    if (continueAsNewDue(run) && !reporter.sending) await continueAsNewNow(run);
    const again = reporter.report();
    const ageAt = run.runStartMs + CONTINUE_AS_NEW_AGE_MS;
    const until = Math.min(s.deadlineMs, again ?? Infinity, ageAt > Date.now() ? ageAt : Infinity);
    run.woken = false;
    await conditionUntil(
      () => run.woken || s.aborted || !s.paused,
      until,
      (at) => timerSummary.pausedBeforeClaim(s.node, at),
    );
  }
}
