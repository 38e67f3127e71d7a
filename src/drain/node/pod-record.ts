/**
 * How one pod record moves, shared by the reducers of observations and answers: made from an
 * observed pod, blocked and unblocked by a rule, dropped and counted when gone, counted as an
 * eviction of its controller. PURE: imported by workflow code.
 */
import type { ObservedPod } from '../../contract/observation.js';
import type { NodeDrainState, PodRecord } from './state.js';

/** A Pending record of an observed pod that must leave. */
export function newRecord(item: ObservedPod): PodRecord {
  return {
    key: item.key,
    namespace: item.namespace,
    name: item.name,
    uid: item.uid,
    pdbs: [...item.pdbs],
    state: 'Pending',
    attempts: 0,
    refusals: 0,
    notBeforeMs: 0,
    ...(item.terminationGracePeriodSeconds !== undefined
      ? { graceSeconds: item.terminationGracePeriodSeconds }
      : {}),
    ...(item.order !== undefined ? { order: item.order } : {}),
    ...(item.controller ? { ownerUid: item.controller.uid } : {}),
  };
}

/**
 * Drops a pod that is gone and counts it: as deleted at the deadline when this drain deleted it,
 * as evicted when this drain's eviction took effect (201) or its call is still in flight, else as
 * gone without eviction.
 */
export function dropGone(s: NodeDrainState, uid: string): void {
  const p = s.pods[uid];
  delete s.pods[uid];
  s.podsGone++;
  if (p?.deleted) s.deletedGone = (s.deletedGone ?? 0) + 1;
  // A pod gone while this drain's call is in flight (an observation came before the answer) counts
  // as the drain's: its eviction or deletion most likely did it.
  else if (p && !p.evicted && !p.mayHaveEvicted && p.state !== 'Evicting' && p.state !== 'Deleting')
    s.goneWithoutEviction = (s.goneWithoutEviction ?? 0) + 1;
}

/** Puts a pod into Blocked by a rule of the observation (classification or two PDBs). */
export function blockByRule(p: PodRecord, reason: string, message: string, nowMs: number): void {
  p.state = 'Blocked';
  p.ruleBlocked = true;
  p.reason = reason;
  p.message = message;
  p.blockedSinceMs ??= nowMs;
}

/** Takes a rule block away again (the observation no longer blocks the pod). */
export function unblock(p: PodRecord): void {
  p.state = 'Pending';
  p.ruleBlocked = false;
  p.reason = undefined;
  p.message = undefined;
  p.blockedSinceMs = undefined;
}

/** Counts an eviction of a pod of a controller that took effect (or may have). */
export function countEviction(s: NodeDrainState, p: PodRecord): void {
  if (p.ownerUid !== undefined && s.returning) {
    const o = s.returning.owners[p.ownerUid];
    if (o) o.evicted++;
  }
}
