/**
 * The node drain takes in answers: of an Eviction API call (or its failure), of a deadline DELETE
 * (onDeadline DeletePods), and the pods counted gone after eviction.skipWaitForDeleteTimeoutSeconds.
 * PURE: imported by workflow code.
 */
import type { EvictResult } from '../../contract/eviction.js';
import type { RetryBackoff } from '../../api/plan.js';
import { BlockerReason, DeadlineReason, PodPolicyReason } from '../../api/reasons.js';
import { backoffSeconds } from '../backoff.js';
import { deleteTimeoutAt } from '../pod-policy.js';
import { blockByRule, countEviction, dropGone, unblock } from './pod-record.js';
import {
  byKey,
  type DeleteAnswer,
  type EvictionCallFailure,
  type NodeDrainState,
  type PodRecord,
} from './state.js';
import { deleteTimeoutMessage } from './words.js';

/**
 * Applies one eviction answer (or call failure) for the pod `uid`. `seq` is {@link
 * NodeDrainState.observeSeq} at the time of the answer (the newest observation started).
 * Answers for pods no longer tracked (seen gone meanwhile) change nothing but the counters.
 *
 * A pod an observation showed terminating while its eviction call was in flight, whose call was
 * then refused (409, 403, 429, other 4xx), counts as gone without eviction when it goes: the API
 * server did not evict it, someone else (e.g. a namespace deletion) did. Only a call that failed
 * without an answer (timeout, cancel) may have taken effect.
 *
 * A refusal (429 naming the PDB) also ends when an observation shows the PDB at another
 * metadata.resourceVersion, even with the same disruptionsAllowed: the PDB changed, so the drain
 * goes by what it shows instead of the probe's "one may try". A drain's view can lag the PDB (a
 * grants-only node is not woken by status writes of PDBs it does not report), and a refusal kept
 * past a newer version made the node report the probe's 1 at that newer version, which the plan's
 * budget took for the PDB's allowance.
 */
export function applyEvictionAnswer(
  s: NodeDrainState,
  uid: string,
  answer: EvictResult | EvictionCallFailure,
  nowMs: number,
  backoff: RetryBackoff,
): NodeDrainState {
  const p = s.pods[uid];
  if (answer.outcome === 'TooManyRequests') s.tooManyRequests++;
  if (!p) return s;
  const seenTerminating = p.terminatingSeen === true;
  p.terminatingSeen = undefined;
  if (seenTerminating && answer.outcome !== 'Evicted' && answer.outcome !== 'Gone') {
    // An observation during the call showed the pod terminating (the call took effect, or someone
    // else deleted it): a later unchanged observation confirms that view, so never evict it again.
    if (!(answer.outcome === 'CallFailed' && answer.cancelled)) s.lastError = answer.message;
    unblock(p);
    p.state = 'Terminating';
    // Whose doing it was: a refusal says not this call's; a call without an answer may have been.
    if (answer.outcome === 'CallFailed') {
      p.mayHaveEvicted = true;
      countEviction(s, p);
    } else p.mayHaveEvicted = undefined;
    return s;
  }
  const cooldown = (seconds: number, reason: string, message: string) => {
    p.mayHaveEvicted = undefined;
    p.state = 'Pending';
    p.refusals++;
    p.notBeforeMs = nowMs + Math.max(0, seconds) * 1000;
    p.reason = reason;
    p.message = message;
    p.blockedSinceMs ??= nowMs;
  };
  const pdbOf = (key: string | undefined) => (key ? s.pdbs[key] : undefined);
  switch (answer.outcome) {
    case 'Evicted': {
      p.state = 'Terminating';
      p.evicted = true;
      p.refusals = 0;
      p.reason = undefined;
      p.message = undefined;
      p.blockingPdb = undefined;
      p.blockedSinceMs = undefined;
      countEviction(s, p);
      // An exempt pod's eviction spends no disruption (src/drain/eviction-gate.ts).
      if (p.pdbExempt === undefined) for (const key of p.pdbs) pdbOf(key)?.spentAtSeq.push(s.observeSeq);
      return s;
    }
    case 'Gone':
      // 404: the pod was gone before this eviction, so it left without one.
      p.state = 'Pending';
      dropGone(s, uid);
      return s;
    case 'TooManyRequests': {
      s.lastError = answer.message;
      const retryAfter =
        answer.retryAfterSeconds !== undefined && answer.retryAfterSeconds > 0
          ? answer.retryAfterSeconds
          : undefined;
      if (answer.cause === 'DisruptionBudget') {
        const key = answer.pdb ?? (p.pdbs.length === 1 ? p.pdbs[0] : undefined);
        const pdb = pdbOf(key);
        p.blockingPdb = key;
        if (pdb) {
          // The PDB said no: its budget is 0 for this drain until it changes or the probe bound passes.
          pdb.refusalRounds++;
          pdb.refusedAllowed = pdb.observedAllowed;
          if (pdb.resourceVersion !== undefined) pdb.refusedVersion = pdb.resourceVersion;
          pdb.refusedUntilMs = nowMs + backoffSeconds(pdb.refusalRounds, backoff) * 1000;
          pdb.spentAtSeq = [];
          cooldown(retryAfter ?? 0, BlockerReason.DisruptionBudget, answer.message);
        } else {
          // A budget this drain does not know: nothing to watch, so back off (never 0 s).
          cooldown(
            retryAfter ?? backoffSeconds(p.refusals + 1, backoff),
            BlockerReason.DisruptionBudget,
            answer.message,
          );
        }
      } else {
        cooldown(
          retryAfter ?? backoffSeconds(p.refusals + 1, backoff),
          BlockerReason.TooManyRequests,
          answer.message,
        );
      }
      return s;
    }
    case 'Retry':
      s.lastError = answer.message;
      cooldown(backoffSeconds(p.refusals + 1, backoff), answer.reason, answer.message);
      return s;
    case 'Failed':
      s.lastError = answer.message;
      if (answer.reason === BlockerReason.MultiplePodDisruptionBudgets) {
        // Waiting never fixes it; an observation with at most one PDB over the pod does.
        p.refusals++;
        blockByRule(p, answer.reason, answer.message, nowMs);
        return s;
      }
      // Other refusals (403, 4xx): a blocker, tried again after the backoff until the deadline.
      p.state = 'Blocked';
      p.ruleBlocked = false;
      p.refusals++;
      p.reason = answer.reason;
      p.message = answer.message;
      p.blockedSinceMs ??= nowMs;
      p.notBeforeMs = nowMs + backoffSeconds(p.refusals, backoff) * 1000;
      return s;
    case 'CallFailed':
      if (answer.cancelled) {
        p.state = 'Pending';
        p.checkAfterSeq = s.observeSeq + 1;
        return s;
      }
      s.lastError = answer.message;
      cooldown(backoffSeconds(p.refusals + 1, backoff), BlockerReason.CallFailed, answer.message);
      // The call may have taken effect: look before evicting again.
      p.checkAfterSeq = s.observeSeq + 1;
      p.mayHaveEvicted = true;
      countEviction(s, p);
      return s;
  }
}

/**
 * Applies the answer of one deadline deletion (onDeadline DeletePods) for the pod `uid`: Deleted →
 * Terminating (counted in {@link NodeDrainState.podsDeleted}); Gone → dropped and counted; Failed →
 * Blocked with reason DeleteFailed, deleted again after the backoff; CallFailed → deleted again after
 * the backoff, once an observation taken after the failure shows the pod still there.
 */
export function applyDeleteAnswer(
  s: NodeDrainState,
  uid: string,
  answer: DeleteAnswer,
  nowMs: number,
  backoff: RetryBackoff,
): NodeDrainState {
  const p = s.pods[uid];
  if (!p) return s;
  switch (answer.outcome) {
    case 'Deleted':
      unblock(p);
      p.blockingPdb = undefined;
      p.state = 'Terminating';
      p.deleted = true;
      s.podsDeleted = (s.podsDeleted ?? 0) + 1;
      return s;
    case 'Gone':
      // 404/409: the pod was gone before this deletion, so it left without one.
      p.state = 'Pending';
      dropGone(s, uid);
      return s;
    case 'Failed':
    case 'CallFailed':
      s.lastError = answer.message;
      p.refusals++;
      p.state = 'Blocked';
      p.ruleBlocked = false;
      p.reason = DeadlineReason.DeleteFailed;
      p.message = answer.message;
      p.blockedSinceMs ??= nowMs;
      p.notBeforeMs = nowMs + backoffSeconds(p.refusals, backoff) * 1000;
      if (answer.outcome === 'CallFailed') p.checkAfterSeq = s.observeSeq + 1;
      return s;
  }
}

/**
 * eviction.skipWaitForDeleteTimeoutSeconds (kubectl drain `--skip-wait-for-delete-timeout`): every
 * pod still terminating `timeoutSeconds` or longer after its observed deletionTimestamp counts as
 * gone: it is dropped and counted like a pod that left, and remembered in
 * {@link NodeDrainState.timedOut} so later observations that still show it ignore it. A pod whose
 * call is in flight is left for its answer.
 *
 * @returns the pods counted gone now (for their Events), sorted by key.
 */
export function applyDeleteTimeout(s: NodeDrainState, nowMs: number, timeoutSeconds: number): PodRecord[] {
  const out: PodRecord[] = [];
  for (const p of Object.values(s.pods).sort(byKey)) {
    if (p.state !== 'Terminating' || p.deletionMs === undefined) continue;
    if (nowMs < deleteTimeoutAt(p.deletionMs, timeoutSeconds)) continue;
    out.push(p);
    s.timedOut = {
      ...(s.timedOut ?? {}),
      [p.uid]: {
        pod: p.key,
        reason: PodPolicyReason.DeleteTimeoutPassed,
        message: deleteTimeoutMessage(timeoutSeconds, p.deletionMs),
      },
    };
    dropGone(s, p.uid);
  }
  return out;
}

/** When the next terminating pod counts as gone under {@link applyDeleteTimeout}, ms since epoch. */
export function nextDeleteTimeoutAt(s: NodeDrainState, timeoutSeconds: number): number | undefined {
  let at: number | undefined;
  for (const p of Object.values(s.pods)) {
    if (p.state !== 'Terminating' || p.deletionMs === undefined) continue;
    const t = deleteTimeoutAt(p.deletionMs, timeoutSeconds);
    at = at === undefined ? t : Math.min(at, t);
  }
  return at;
}
