/**
 * The node drain takes in what the `observeNode` activity saw: the node (by uid), its pods, their
 * PDBs; and keeps returning pods (src/drain/returning.ts) off the eviction queue.
 * PURE: imported by workflow code.
 */
import type { NodeObservation, ObservedPod } from '../../contract/observation.js';
import type { SkippedPod } from '../../api/plan.js';
import { BlockerReason, PodPolicyReason } from '../../api/reasons.js';
import { SKIPPED_POD_CAP } from '../pod-policy.js';
import {
  evictionBoundReached,
  ownerEntry,
  returningPodMessage,
  returnsAfterCordon,
  startLedger,
} from '../returning.js';
import { blockByRule, dropGone, newRecord, unblock } from './pod-record.js';
import { byKey, byPod, type NodeDrainState, type PdbRecord, type PodRecord } from './state.js';
import { multiplePdbsMessage } from './words.js';

/**
 * The uid of the Node that stands under the claimed node's name in its place, when it is another
 * one: the node exists, both uids are known (`claimedUid` is absent before the claim) and they differ. The
 * API server gives every created object a new `metadata.uid`, so a Node deleted and created again
 * under the same name (a re-provisioned machine, a Node restored from a saved manifest) has another
 * uid: it is not the node the plan claimed. `undefined` otherwise.
 */
export function replacingUid(
  claimedUid: string | undefined,
  node: { exists: boolean; uid?: string },
): string | undefined {
  if (!node.exists || claimedUid === undefined || node.uid === undefined) return undefined;
  return node.uid === claimedUid ? undefined : node.uid;
}

/**
 * Applies one observation with material changes. `seq` is the sequence number the observation was
 * started with (see {@link NodeDrainState.observeSeq}).
 *
 * - Node absent: only the view changes (the pods go with the node; {@link decideNode} ends it).
 *   So it is when a Node of another uid than the claimed one ({@link replacingUid}) stands under
 *   the name: the claimed node was deleted, this one is another node and its pods are not this
 *   drain's.
 * - A pod that must leave and is not tracked is added (Pending; Terminating when it already has a
 *   deletionTimestamp; Blocked when a rule blocks it or it has more than one PDB).
 * - A tracked pod missing from the observation, or now skipped (e.g. finished), is gone: counted and
 *   dropped (a late eviction answer for it is ignored).
 * - A pod blocked by a rule is re-evaluated: when the rule no longer applies it is Pending again.
 * - PDBs take the observed allowance; evictions answered before this observation started no longer
 *   count against it; a refusal is lifted when the allowance changed.
 */
export function applyObservation(
  s: NodeDrainState,
  obs: Extract<NodeObservation, { changed: true }>,
  seq: number,
  nowMs: number,
): NodeDrainState {
  const replacedBy = replacingUid(s.nodeUid, obs.node);
  s.view = {
    fingerprint: obs.fingerprint,
    exists: obs.node.exists && replacedBy === undefined,
    unschedulable: obs.node.unschedulable,
    seq,
    ...(replacedBy !== undefined ? { replacedBy } : {}),
  };
  if (!s.view.exists) return s;

  const pdbs: Record<string, PdbRecord> = {};
  for (const o of obs.pdbs) {
    const known = s.pdbs[o.key];
    const rec: PdbRecord = known ?? {
      key: o.key,
      observedAllowed: o.disruptionsAllowed,
      spentAtSeq: [],
      refusalRounds: 0,
    };
    rec.observedAllowed = o.disruptionsAllowed;
    if (o.resourceVersion !== undefined) rec.resourceVersion = o.resourceVersion;
    if (o.diagnosis && o.disruptionsAllowed <= 0) rec.diagnosis = o.diagnosis;
    else delete rec.diagnosis;
    rec.spentAtSeq = rec.spentAtSeq.filter((x) => x >= seq);
    if (
      (rec.refusedAllowed !== undefined && rec.observedAllowed !== rec.refusedAllowed) ||
      (rec.refusedVersion !== undefined && rec.resourceVersion !== rec.refusedVersion)
    ) {
      rec.refusedAllowed = undefined;
      rec.refusedVersion = undefined;
      rec.refusedUntilMs = undefined;
      rec.refusalRounds = 0;
    }
    pdbs[o.key] = rec;
  }
  if (s.budget) {
    // The plan's budget counts an eviction until an observation shows it in the PDB: a PDB that
    // left this observation (its last pod went) while evictions behind it are unconfirmed is kept,
    // and the next observation asks for it (unconfirmedPdbs).
    for (const rec of Object.values(s.pdbs)) {
      if (pdbs[rec.key]) continue;
      rec.spentAtSeq = rec.spentAtSeq.filter((x) => x >= seq);
      if (rec.spentAtSeq.length > 0) pdbs[rec.key] = rec;
    }
  }
  s.pdbs = pdbs;

  const seen = new Set<string>();
  const optedOut: SkippedPod[] = [];
  const timedOut: Record<string, SkippedPod> = {};
  // The first observation after the claim: the pods at the cordon, counted per controller.
  const firstView = s.returning === undefined;
  s.returning ??= startLedger(
    obs.pods
      .filter((i) => i.action !== 'Skip')
      .map((i) => (i.controller ? { ownerUid: i.controller.uid, owner: i.controller.ref } : {})),
  );
  const ledger = s.returning;
  const returned: NonNullable<NodeDrainState['returned']> = {};
  for (const item of obs.pods) {
    if (item.action === 'Skip') {
      if (item.reason === PodPolicyReason.DrainLabelSkip)
        optedOut.push({ pod: item.key, reason: item.reason, message: item.message });
      continue;
    }
    const gone = s.timedOut?.[item.uid];
    if (gone) {
      timedOut[item.uid] = gone; // counted gone already; still shown, so still reported
      continue;
    }
    const back = s.returned?.[item.uid];
    if (back) {
      returned[item.uid] = back; // never evicted; still shown, so still reported
      continue;
    }
    let p = s.pods[item.uid];
    if (
      !p &&
      !firstView &&
      item.action === 'Evict' &&
      item.controller &&
      returnsAfterCordon(ledger, {
        ownerUid: item.controller.uid,
        ...(item.returns ? { returns: item.returns } : {}),
      })
    ) {
      // Bound to the node after the cordon and it comes back: never evicted (src/drain/returning.ts).
      returned[item.uid] = returnedPod(item.key, item.controller, item.returns);
      continue;
    }
    seen.add(item.uid);
    if (!p) {
      p = newRecord(item);
      s.pods[item.uid] = p;
      if (!firstView) {
        p.afterCordon = true;
        if (item.controller) ownerEntry(ledger, item.controller.uid, item.controller.ref);
      }
    }
    p.pdbs = [...item.pdbs];
    if (item.pdbExempt !== undefined) p.pdbExempt = item.pdbExempt;
    else delete p.pdbExempt;
    if (item.order !== undefined) p.order = item.order;
    else delete p.order;
    if (item.deletionTimestampMs !== undefined) p.deletionMs = item.deletionTimestampMs;
    if (item.terminationGracePeriodSeconds !== undefined) p.graceSeconds = item.terminationGracePeriodSeconds;
    if (p.state === 'Deleting') continue; // the DELETE's answer comes first
    if (p.state === 'Evicting') {
      // The call's answer comes first; but a terminating pod stays terminating, whatever it says.
      if (item.action === 'Wait') p.terminatingSeen = true;
      continue;
    }
    if (item.action === 'Wait') {
      // Terminating now: an earlier block or refusal no longer describes the pod.
      unblock(p);
      p.blockingPdb = undefined;
      p.state = 'Terminating';
      continue;
    }
    if (p.state === 'Terminating') continue; // evicted by us; deletion is not reversible
    if (item.action === 'Block') {
      blockByRule(p, item.reason, item.message, nowMs);
      continue;
    }
    if (p.pdbs.length > 1 && p.pdbExempt !== 'NotRunning') {
      blockByRule(p, BlockerReason.MultiplePodDisruptionBudgets, multiplePdbsMessage(p.pdbs), nowMs);
      continue;
    }
    if (p.ruleBlocked) unblock(p);
  }
  for (const uid of Object.keys(s.pods)) if (!seen.has(uid)) dropGone(s, uid);
  if (optedOut.length > 0) s.optedOut = optedOut.sort(byPod).slice(0, SKIPPED_POD_CAP);
  else delete s.optedOut;
  if (Object.keys(timedOut).length > 0) s.timedOut = timedOut;
  else delete s.timedOut;
  setReturned(s, returned);
  return s;
}

/** A returning pod as listed in {@link NodeDrainState.returned}. */
export function returnedPod(
  key: string,
  controller: { uid: string; ref: string },
  returns: ObservedPod['returns'],
): SkippedPod & { ownerUid: string } {
  return {
    pod: key,
    reason: PodPolicyReason.ReturnsToNode,
    message: returningPodMessage(controller.ref, returns),
    ownerUid: controller.uid,
  };
}

/** Sets the returning pods and each controller's count of them (the Warning names it). */
export function setReturned(s: NodeDrainState, returned: NonNullable<NodeDrainState['returned']>): void {
  if (Object.keys(returned).length > 0) s.returned = returned;
  else delete s.returned;
  if (!s.returning) return;
  const counts: Record<string, number> = {};
  for (const r of Object.values(returned)) counts[r.ownerUid] = (counts[r.ownerUid] ?? 0) + 1;
  for (const [uid, o] of Object.entries(s.returning.owners)) {
    if (counts[uid]) o.returned = counts[uid];
    else delete o.returned;
  }
}

/**
 * Rule 3 of src/drain/returning.ts: a pod to evict whose controller's evictions (answered 201 or in
 * flight) reached its pods at the cordon plus RETURN_SLACK is a returning pod, never evicted.
 * Only pods bound after the cordon are held to it: each pod at the cordon is evicted once (until
 * an eviction takes effect), as kubectl drain evicts the pods it listed.
 */
export function applyReturnBound(s: NodeDrainState): void {
  const l = s.returning;
  if (!l) return;
  let moved = false;
  const returned = { ...(s.returned ?? {}) };
  for (const p of Object.values(s.pods).sort(byKey)) {
    if (p.state !== 'Pending' || !p.afterCordon || p.ownerUid === undefined || p.attempts > 0) continue;
    const inFlight = Object.values(s.pods).filter(
      (q) => q.ownerUid === p.ownerUid && q.state === 'Evicting',
    ).length;
    if (!evictionBoundReached(l, p.ownerUid, inFlight)) continue;
    const o = l.owners[p.ownerUid]!;
    returned[p.uid] = returnedPod(p.key, { uid: p.ownerUid, ref: o.owner }, undefined);
    delete s.pods[p.uid];
    moved = true;
  }
  if (moved) setReturned(s, returned);
}

/**
 * Whether evicting `p` now would exceed its controller's bound (rule 3 of src/drain/returning.ts),
 * counting the calls in flight and those chosen in this decision (`chosen`, UIDs).
 */
export function overReturnBound(s: NodeDrainState, p: PodRecord, chosen: readonly string[]): boolean {
  if (!s.returning || !p.afterCordon || p.ownerUid === undefined || p.attempts > 0) return false;
  const calls = Object.values(s.pods).filter(
    (q) => q.ownerUid === p.ownerUid && (q.state === 'Evicting' || chosen.includes(q.uid)),
  ).length;
  return evictionBoundReached(s.returning, p.ownerUid, calls);
}

/**
 * Applies an observation that found nothing material changed since the state's view (`seq` as in
 * {@link applyObservation}): the view is confirmed as of that observation's start, so evictions
 * answered before it started are counted in the PDBs it saw, and no longer held against their
 * budget (without this, a budget spent just before the last changed observation would stay spent).
 */
export function applyUnchangedObservation(s: NodeDrainState, seq: number): NodeDrainState {
  if (!s.view) return s;
  s.view.seq = seq;
  for (const pdb of Object.values(s.pdbs)) pdb.spentAtSeq = pdb.spentAtSeq.filter((x) => x >= seq);
  return s;
}

/**
 * Keys of the PDBs with evictions answered 201 that no observation shows yet: observations keep
 * reporting them after the node's last pod behind them left, so the plan's budget sees them spent.
 */
export function unconfirmedPdbs(s: NodeDrainState): string[] {
  return Object.values(s.pdbs)
    .filter((p) => p.spentAtSeq.length > 0)
    .map((p) => p.key)
    .sort();
}

/** Whether an eviction answered 201 still holds a PDB's budget, waiting for an observation to confirm it. */
export function hasUnconfirmedEvictions(s: NodeDrainState): boolean {
  return Object.values(s.pdbs).some((p) => p.spentAtSeq.length > 0);
}
