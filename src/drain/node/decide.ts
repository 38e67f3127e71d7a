/**
 * The node drain's decision: what the node does now (evict, delete, wait, end), what blocks it,
 * and when to look again. Rules are listed in state.ts. PURE: imported by workflow code.
 */
import type { Blocker } from '../../api/plan.js';
import { BlockerReason, DeadlineReason, NodePhase, NodeReason } from '../../api/reasons.js';
import { sortAndCapBlockers } from '../conditions.js';
import { diagnosisMessage } from '../pdb-diagnosis-words.js';
import type { PdbDiagnosis } from '../pdb-diagnosis.js';
import { currentOrderGroup } from '../pod-policy.js';
import { budgetOf } from './budget.js';
import {
  DELETE_WAIT_SLACK_MS,
  FRESH_VIEW_WAIT_MS,
  awaitsFreshView,
  deletionGraceSeconds,
  policyAppliedAtMs,
} from './deadline.js';
import { applyReturnBound, overReturnBound } from './observation.js';
import {
  byKey,
  type NodeDecision,
  type NodeDrainSettings,
  type NodeDrainState,
  type NodeOutcome,
  type PdbRecord,
  type PodDeletion,
  type PodRecord,
} from './state.js';
import {
  ABORTED_MESSAGE,
  PAUSED_MESSAGE,
  deadlineBlockerMessage,
  deadlineExceededMessage,
  deletedNodeMessage,
  deletingPodsMessage,
  drainingMessage,
  goneMessage,
  groupDrainingMessage,
  groupStuckMessage,
  notEvictableMessage,
  pausedPastDeadlineMessage,
  returnedWords,
  skippedAtDeadlineMessage,
  uncordonedMessage,
  waitingForBudgetMessage,
} from './words.js';

/**
 * Decides what the node does now; writes the phase (and reason, message) into the state.
 *
 * In order: no observation yet → wait; node deleted → ends `Deleted`/NodeDeleted; abort → ends
 * Aborted (once nothing is in flight); no pod left on a cordoned node → ends Drained; deadline
 * passed → (with {@link NodeDrainSettings.freshDeadlineView}, first a view observed after it, or
 * {@link FRESH_VIEW_WAIT_MS} without one: {@link NodeDecision.freshView}) the `onDeadline` policy:
 * Skipped, deletions, else ends Blocked/DeadlineExceeded; node schedulable →
 * Blocked/NodeUncordonedExternally, no eviction; paused → Paused; otherwise evict what cooldowns, the PDB budgets and
 * `maxConcurrentPerNode` allow. `quiesce` (a continue-as-new is due) starts no new eviction.
 *
 * A pause disrupts nothing (the user's, or the plan's outside its maintenance windows): no
 * eviction, and a deadline that passes while paused applies its policy only after the resume (the
 * node stays Paused, saying what the policy will do; the resume then waits for a view observed
 * after it, as at the deadline). DeletePods deletes nothing on a node an admin uncordoned: it
 * ends Blocked/DeadlineExceeded as under Stop. Such decisions carry no `wakeAtMs` (a resume or an
 * observation wakes the node).
 */
export function decideNode(
  s: NodeDrainState,
  nowMs: number,
  settings: NodeDrainSettings,
  quiesce = false,
): NodeDecision {
  applyReturnBound(s);
  const pods = Object.values(s.pods).sort(byKey);
  const inFlight = pods.filter((p) => p.state === 'Evicting' || p.state === 'Deleting').length;
  const result = (
    phase: NodePhase,
    reason?: string,
    message?: string,
    extra: Partial<NodeDecision> = {},
  ): NodeDecision => {
    s.phase = phase;
    s.reason = reason;
    s.message = message;
    return { evict: [], phase, ...(reason ? { reason } : {}), ...(message ? { message } : {}), ...extra };
  };
  const end = (outcome: NodeOutcome): NodeDecision =>
    inFlight > 0
      ? {
          evict: [],
          phase: s.phase,
          ...(s.reason ? { reason: s.reason } : {}),
          ...(s.message ? { message: s.message } : {}),
        }
      : result(outcome.phase, outcome.reason, outcome.message, { outcome });

  if (s.aborted)
    return end({ phase: NodePhase.Aborted, reason: NodeReason.Aborted, message: ABORTED_MESSAGE });
  const policy = settings.onDeadline ?? 'Stop';
  // Paused past the deadline: the policy waits for the resume, which then takes a fresh view.
  if (s.paused && nowMs >= s.deadlineMs) delete s.deadlineView;
  // The first decision past the deadline: every observation started so far started before it.
  else if (nowMs >= s.deadlineMs)
    s.deadlineView ??= { afterSeq: s.observeSeq, untilMs: nowMs + FRESH_VIEW_WAIT_MS };
  const view = s.view;
  if (!view)
    return result(s.phase === NodePhase.Pending ? NodePhase.Cordoned : s.phase, s.reason, s.message, {
      wakeAtMs: s.deadlineMs,
    });
  if (!view.exists)
    return end({
      phase: NodePhase.Deleted,
      reason: NodeReason.NodeDeleted,
      message: deletedNodeMessage(s, view.replacedBy),
    });
  if (pods.length === 0 && view.unschedulable)
    return end(
      s.podsDeleted
        ? {
            phase: NodePhase.Drained,
            reason: DeadlineReason.PodsDeletedAtDeadline,
            message: goneMessage(s),
          }
        : { phase: 'Drained', reason: NodeReason.Drained, message: goneMessage(s) + returnedWords(s) },
    );
  if (s.paused && nowMs >= s.deadlineMs)
    return result(
      NodePhase.Paused,
      NodeReason.PausedPastDeadline,
      pausedPastDeadlineMessage(s, policy, pods.length),
    );
  if (awaitsFreshView(s, nowMs))
    return result(s.phase, s.reason, s.message, { freshView: true, wakeAtMs: s.deadlineView!.untilMs });
  if (nowMs >= s.deadlineMs && policy === 'SkipNode')
    return end({
      phase: NodePhase.Skipped,
      reason: DeadlineReason.SkippedAtDeadline,
      message: skippedAtDeadlineMessage(pods.length),
    });
  // DeletePods deletes only on a cordoned node: one an admin uncordoned ends as under Stop.
  if (nowMs >= s.deadlineMs && policy === 'DeletePods' && pods.length > 0 && view.unschedulable) {
    const graces = pods.map((p) => p.graceSeconds ?? 30);
    const giveUpAtMs =
      Math.max(s.deadlineMs, settings.planDeadlineMs ?? s.deadlineMs, policyAppliedAtMs(s)) +
      Math.max(...graces) * 1000 +
      DELETE_WAIT_SLACK_MS;
    if (nowMs < giveUpAtMs) {
      let wakeAt = giveUpAtMs;
      const del: PodDeletion[] = [];
      for (const p of pods) {
        if (p.state !== 'Pending' && p.state !== 'Blocked') continue;
        if (p.notBeforeMs > nowMs && p.reason === DeadlineReason.DeleteFailed) {
          wakeAt = Math.min(wakeAt, p.notBeforeMs);
          continue;
        }
        if (p.checkAfterSeq !== undefined && view.seq < p.checkAfterSeq) continue;
        del.push({
          uid: p.uid,
          gracePeriodSeconds: deletionGraceSeconds(
            settings.planDeadlineMs ?? s.deadlineMs,
            nowMs,
            p.graceSeconds,
          ),
        });
        p.state = 'Deleting';
        p.checkAfterSeq = undefined;
      }
      return {
        ...result(NodePhase.Draining, DeadlineReason.DeletingPods, deletingPodsMessage(pods.length)),
        delete: del,
        wakeAtMs: wakeAt,
      };
    }
  }
  if (nowMs >= s.deadlineMs) {
    const left = pods.length;
    return end({
      phase: NodePhase.Blocked,
      reason: NodeReason.DeadlineExceeded,
      message: deadlineExceededMessage(left, view.unschedulable, policy),
    });
  }
  let wakeAtMs = s.deadlineMs;
  const wake = (t: number) => {
    if (t > nowMs && t < wakeAtMs) wakeAtMs = t;
  };
  if (policy === 'DeletePods' && settings.deadlineWarningSeconds !== undefined && !s.warned)
    wake(s.deadlineMs - settings.deadlineWarningSeconds * 1000);
  if (!view.unschedulable)
    return result(NodePhase.Blocked, NodeReason.NodeUncordonedExternally, uncordonedMessage(s.node), {
      wakeAtMs,
    });

  // Blocked pods whose refusal backoff ended go back to the queue (rule blocks wait for observations).
  for (const p of pods) {
    if (p.state === 'Blocked' && !p.ruleBlocked) {
      if (p.notBeforeMs <= nowMs) p.state = 'Pending';
      else wake(p.notBeforeMs);
    }
  }
  const evict: string[] = [];
  const budgets = new Map<string, number>();
  for (const pdb of Object.values(s.pdbs)) {
    const own = budgetOf(s, pdb, nowMs);
    const granted = s.budget?.grants[pdb.key] ?? 0;
    const trustGrant = s.budget?.reports !== undefined && pdb.refusedUntilMs === undefined;
    budgets.set(pdb.key, !s.budget ? own : trustGrant ? granted : Math.min(own, granted));
    if (pdb.refusedUntilMs !== undefined) wake(pdb.refusedUntilMs);
  }
  let running = inFlight;
  // Order groups: only the lowest group still on the node is evicted (the others wait for it).
  const group = currentOrderGroup(pods.map((p) => p.order));
  for (const p of pods) {
    if (p.state !== 'Pending') continue;
    if (group !== undefined && (p.order ?? 0) !== group) continue;
    if (p.notBeforeMs > nowMs) {
      wake(p.notBeforeMs);
      continue;
    }
    if (p.checkAfterSeq !== undefined && view.seq < p.checkAfterSeq) continue;
    if (s.paused || quiesce || running >= settings.maxConcurrentPerNode) continue;
    if (overReturnBound(s, p, evict)) continue; // a returning pod at the next decision
    // A pod the API server evicts without a PDB check waits for no budget and spends none.
    const key = p.pdbExempt === undefined ? p.pdbs[0] : undefined;
    if (key !== undefined) {
      const left = budgets.get(key) ?? 0;
      if (left <= 0) continue;
      budgets.set(key, left - 1);
      if (s.budget) s.budget.grants[key] = (s.budget.grants[key] ?? 0) - 1;
    }
    evict.push(p.uid);
    running++;
  }
  for (const uid of evict) {
    const p = s.pods[uid]!;
    p.state = 'Evicting';
    p.attempts++;
    p.checkAfterSeq = undefined;
    s.attempts++;
  }
  if (s.paused)
    return {
      ...result(NodePhase.Paused, NodeReason.PausedByUser, PAUSED_MESSAGE),
      evict,
      wakeAtMs,
    };
  const stuck = pods.filter((p) => p.state === 'Blocked');
  if (stuck.length > 0 && stuck.length === pods.length)
    return {
      ...result(NodePhase.Blocked, NodeReason.PodsNotEvictable, notEvictableMessage(stuck.length)),
      evict,
      wakeAtMs,
    };
  const terminating = pods.filter((p) => p.state === 'Terminating').length;
  const togo = drainingMessage(pods.length, terminating);
  if (group !== undefined) {
    const inGroup = pods.filter((p) => (p.order ?? 0) === group);
    const later = pods.length - inGroup.length;
    const stuckInGroup = inGroup.filter((p) => p.state === 'Blocked').length;
    if (later > 0 && stuckInGroup > 0 && stuckInGroup === inGroup.length)
      return {
        ...result(
          NodePhase.Blocked,
          NodeReason.PodsNotEvictable,
          groupStuckMessage(stuckInGroup, group, later),
        ),
        evict,
        wakeAtMs,
      };
    if (later > 0)
      return {
        ...result(
          NodePhase.Draining,
          NodeReason.Draining,
          groupDrainingMessage(togo, group, inGroup.length, later),
        ),
        evict,
        wakeAtMs,
      };
  }
  return { ...result('Draining', NodeReason.Draining, togo), evict, wakeAtMs };
}

/**
 * Whether a pod that has not been tried waits for its PDB's budget (for the blocker list): its own
 * view allows nothing, or (a node of a plan that hands out budgets) the node holds no grant of
 * that PDB: such a node's view of a PDB it does not report can be stale, so the plan's grants, not
 * that view, say whether the pod may go (it shows as blocked by its `DisruptionBudget`, and as
 * `NotEvicted` at the deadline).
 */
function waitsForBudget(s: NodeDrainState, p: PodRecord, nowMs: number): PdbRecord | undefined {
  if (p.state !== 'Pending' || p.pdbs.length !== 1 || p.pdbExempt !== undefined) return undefined;
  const pdb = s.pdbs[p.pdbs[0]!];
  if (!pdb) return undefined;
  if (budgetOf(s, pdb, nowMs) <= 0) return pdb;
  return s.budget && (s.budget.grants[pdb.key] ?? 0) <= 0 ? pdb : undefined;
}

/** A blocker's kind, owner and (kind Never) remedy, from its PDB's diagnosis. */
function blockKind(d: PdbDiagnosis): Pick<Blocker, 'kind' | 'owner' | 'remedy'> {
  return {
    kind: d.kind,
    ...(d.owner ? { owner: d.owner } : {}),
    ...(d.remedy ? { remedy: d.remedy.kind } : {}),
  };
}

/**
 * What blocks the node now: pods refused, blocked, or waiting for their PDB (capped, sorted); past
 * the deadline also the pods not evicted (`NotEvicted`) or still terminating (`Terminating`), once
 * the view is one observed after the deadline ({@link awaitsFreshView}).
 */
export function nodeBlockers(s: NodeDrainState, nowMs: number): Blocker[] {
  const out: Blocker[] = [];
  if (s.view && !s.view.exists) return out; // the node and its pods are gone: nothing blocks
  // The deadline's blockers (NotEvicted, Terminating) come from a view observed after it.
  const deadline = nowMs >= s.deadlineMs && !awaitsFreshView(s, nowMs);
  for (const p of Object.values(s.pods)) {
    const since = p.blockedSinceMs !== undefined ? { since: new Date(p.blockedSinceMs).toISOString() } : {};
    const pdb = p.blockingPdb ?? (p.pdbs.length === 1 ? p.pdbs[0] : undefined);
    if (p.reason) {
      const d = p.reason === BlockerReason.DisruptionBudget && pdb ? s.pdbs[pdb]?.diagnosis : undefined;
      out.push({
        pod: p.key,
        ...(pdb ? { pdb } : {}),
        reason: p.reason,
        ...(d ? blockKind(d) : {}),
        message: d ? diagnosisMessage(d) : (p.message ?? ''),
        ...since,
        attempts: p.attempts,
      });
      continue;
    }
    const waiting = waitsForBudget(s, p, nowMs);
    if (waiting) {
      // Why the PDB blocks (src/drain/pdb-diagnosis.ts), when the last observation said.
      const d = waiting.diagnosis;
      out.push({
        pod: p.key,
        pdb: waiting.key,
        reason: BlockerReason.DisruptionBudget,
        ...(d ? blockKind(d) : {}),
        message: d ? diagnosisMessage(d) : waitingForBudgetMessage(waiting.key),
        attempts: p.attempts,
      });
    } else if (deadline) {
      out.push({
        pod: p.key,
        ...(pdb ? { pdb } : {}),
        reason: p.state === 'Terminating' ? BlockerReason.Terminating : BlockerReason.NotEvicted,
        message: deadlineBlockerMessage(p.state === 'Terminating'),
        attempts: p.attempts,
      });
    }
  }
  return sortAndCapBlockers(out).blockers;
}

/** The earliest future cooldown end (a pod's `notBeforeMs` or a PDB refusal's bound), if any. */
export function nextActionAt(s: NodeDrainState, nowMs: number): number | undefined {
  let at: number | undefined;
  const consider = (t: number | undefined) => {
    if (t !== undefined && t > nowMs) at = at === undefined ? t : Math.min(at, t);
  };
  for (const p of Object.values(s.pods))
    if (p.state === 'Pending' || p.state === 'Blocked') consider(p.notBeforeMs);
  for (const pdb of Object.values(s.pdbs)) consider(pdb.refusedUntilMs);
  return at;
}
