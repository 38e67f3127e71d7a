/**
 * The node drain's words: every message a node's phase, blockers, Events and counts say, built from
 * the state's structured fields. The reducers and `decideNode` call these and never compare
 * their results, so a wording change is no change of what a node does.
 *
 * PURE: imported by workflow code.
 */
import { WARNING_POD_CAP } from '../../api/deadline.js';
import type { OnDeadline } from '../../api/plan.js';
import { deletedNodePods } from './report.js';
import type { NodeDrainState } from './state.js';

/** `; 3 pod(s) came back …` when returning pods are left on the node (src/drain/returning.ts), else empty. */
export function returnedWords(s: Pick<NodeDrainState, 'returned'>): string {
  const n = Object.keys(s.returned ?? {}).length;
  return n > 0
    ? `; ${n} pod(s) came back to the node after the cordon and were left there (ReturnsToNode, listed in skipped)`
    : '';
}

/**
 * The words for how a node's pods left: `all 6 pod(s) evicted`, or `3 pod(s) evicted, 3 gone
 * without eviction (deleted by someone else, finished or already terminating)`, plus
 * `, 1 deleted at the deadline` under onDeadline DeletePods.
 */
export function goneMessage(
  s: Pick<NodeDrainState, 'podsGone' | 'deletedGone' | 'goneWithoutEviction'>,
): string {
  const deleted = s.deletedGone ?? 0;
  const other = s.goneWithoutEviction ?? 0;
  const evicted = s.podsGone - deleted - other;
  if (deleted === 0 && other === 0) return `all ${s.podsGone} pod(s) evicted`;
  return (
    `${evicted} pod(s) evicted` +
    (other
      ? `, ${other} gone without eviction (deleted by someone else, finished or already terminating)`
      : '') +
    (deleted ? `, ${deleted} deleted at the deadline` : '')
  );
}

/** What a policy does at the resume of a node paused past its deadline, for its Paused message. */
const AT_RESUME: Record<OnDeadline, string> = {
  Stop: 'the node ends Blocked/DeadlineExceeded, still cordoned',
  SkipNode: 'the node is skipped and handed back',
  DeletePods: 'the pods left are deleted without the Eviction API',
};

/**
 * The message of a node paused past its deadline: nothing happens while paused (a pause stops
 * every disruption, the deadline's deletions included), and `onDeadline` applies at the resume.
 */
export function pausedPastDeadlineMessage(s: NodeDrainState, policy: OnDeadline, left: number): string {
  return `paused past the deadline ${new Date(s.deadlineMs).toISOString()} with ${left} pod(s) left: onDeadline ${policy} applies when resumed (${AT_RESUME[policy]})`;
}

/**
 * The end message of a node deleted during the drain, with how its pods left (`deletedNodeCounts`):
 * `node n1 was deleted during the drain: 2 pod(s) evicted, 2 never evicted went with the node`;
 * `replacedBy`: the uid of the Node created again under its name, which the message names.
 */
export function deletedNodeMessage(s: NodeDrainState, replacedBy?: string): string {
  const { evicted, deleted, withNode } = deletedNodePods(s);
  const other = s.goneWithoutEviction ?? 0;
  const deletedAll = (s.deletedGone ?? 0) + deleted;
  const evictedAll = s.podsGone - (s.deletedGone ?? 0) - other + evicted;
  const what =
    replacedBy === undefined
      ? 'was deleted during the drain'
      : `was deleted and created again under its name during the drain (uid ${s.nodeUid ?? '?'}, now ${replacedBy}): the new node is another node, not claimed by this plan, so it is not drained, cordoned or uncordoned by it`;
  return (
    `node ${s.node} ${what}: ${evictedAll} pod(s) evicted` +
    (other ? `, ${other} gone without eviction before` : '') +
    (deletedAll ? `, ${deletedAll} deleted at the deadline` : '') +
    (withNode ? `, ${withNode} never evicted went with the node` : '')
  );
}

/** Aborted before the claim. */
export const ABORTED_BEFORE_CLAIM_MESSAGE = 'aborted before the node was cordoned';

/** The deadline passed before the claim; under onDeadline SkipNode the node is skipped. */
export function unclaimedAtDeadlineMessage(skipped: boolean): string {
  return skipped
    ? 'deadline passed before the node could be claimed: skipped'
    : 'deadline passed before the node could be claimed';
}

/** The claim found another Node under the name than the one the plan claimed (`NodeReplaced`). */
export function replacedBeforeDrainMessage(
  node: string,
  claimedUid: string | undefined,
  nowUid: string,
): string {
  return `node ${node} was deleted and created again under its name before its drain started (uid ${claimedUid ?? '?'}, now ${nowUid}): the new node is another node, not claimed by this plan, so it is not drained, cordoned or uncordoned by it`;
}

/** The claim found no Node of the name. */
export function nodeNotFoundMessage(node: string): string {
  return `node ${node} does not exist`;
}

/** Waiting: another plan holds the node. */
export function heldByMessage(node: string, heldBy: string): string {
  return `node ${node} is held by plan ${heldBy}`;
}

/** Paused before the claim, after another plan held the node at the last try (`pausedBeforeClaim`). */
export function heldWhilePausedMessage(node: string, heldBy: string): string {
  return `node ${node} was held by plan ${heldBy} at the last try; paused: not claimed (cordoned) until resumed, then tried again at once`;
}

/** Paused before the claim was tried (`pausedBeforeClaim`). */
export const PAUSED_BEFORE_CLAIM_MESSAGE = 'paused before the node was claimed: not cordoned until resumed';

/** An aborted node's end. */
export const ABORTED_MESSAGE = 'drain aborted';

/** A paused node (no new evictions). */
export const PAUSED_MESSAGE = 'no new evictions until resumed';

/** onDeadline SkipNode: the node's end at the deadline. */
export function skippedAtDeadlineMessage(left: number): string {
  return `still not drained at its deadline with ${left} pod(s) left: skipped and handed back`;
}

/** onDeadline DeletePods: the node deletes its pods. */
export function deletingPodsMessage(left: number): string {
  return `deadline passed: deleting ${left} pod(s) without the Eviction API`;
}

/** Blocked/DeadlineExceeded: on a cordoned node, or on one someone else uncordoned (no deletion then). */
export function deadlineExceededMessage(left: number, unschedulable: boolean, policy: OnDeadline): string {
  return unschedulable
    ? `deadline passed with ${left} pod(s) not evicted`
    : `deadline passed while the node was uncordoned by someone else (${left} pod(s) left${policy === 'DeletePods' ? ', none deleted: onDeadline DeletePods deletes pods only on a cordoned node' : ''})`;
}

/** Blocked/NodeUncordonedExternally. */
export function uncordonedMessage(node: string): string {
  return `node ${node} was uncordoned by someone else; no evictions until it is cordoned again`;
}

/** Blocked/PodsNotEvictable: every pod left is blocked. */
export function notEvictableMessage(stuck: number): string {
  return `${stuck} pod(s) cannot be evicted`;
}

/** Draining: the pods to go, and how many of them wait out their grace period. */
export function drainingMessage(left: number, terminating: number): string {
  return `${left} pod(s) to go${terminating ? `, ${terminating} of them terminating (eviction accepted, waiting out the grace period)` : ''}`;
}

/** Blocked/PodsNotEvictable: every pod of the current order group is blocked, later groups wait. */
export function groupStuckMessage(stuck: number, group: number, later: number): string {
  return `${stuck} pod(s) of order group ${group} cannot be evicted; ${later} pod(s) of later groups wait for them`;
}

/** Draining with order groups: {@link drainingMessage} and the group drained first. */
export function groupDrainingMessage(togo: string, group: number, inGroup: number, later: number): string {
  return `${togo}; order group ${group} first (${inGroup} pod(s)), ${later} pod(s) in later groups`;
}

/** The PodsWillBeDeleted Warning: the pods (sorted keys, capped) that the deadline will delete. */
export function deletionWarningMessage(node: string, pods: readonly string[], deadlineMs: number): string {
  const named = pods.slice(0, WARNING_POD_CAP).join(', ');
  const more = pods.length > WARNING_POD_CAP ? ` and ${pods.length - WARNING_POD_CAP} more` : '';
  return `node ${node}: ${pods.length} pod(s) will be deleted without the Eviction API (PodDisruptionBudgets bypassed) at ${new Date(deadlineMs).toISOString()} unless they leave before: ${named}${more}`;
}

/** A pod counted gone by eviction.skipWaitForDeleteTimeoutSeconds. */
export function deleteTimeoutMessage(timeoutSeconds: number, deletionMs: number): string {
  return `still terminating ${timeoutSeconds} s after its deletionTimestamp ${new Date(deletionMs).toISOString()}: counted as gone (eviction.skipWaitForDeleteTimeoutSeconds)`;
}

/** Blocked/MultiplePodDisruptionBudgets. */
export function multiplePdbsMessage(pdbs: readonly string[]): string {
  return `pod is covered by more than one PodDisruptionBudget (${pdbs.join(', ')}); the eviction subresource refuses such pods`;
}

/** A pod blocker waiting for its PDB's budget. */
export function waitingForBudgetMessage(pdb: string): string {
  return `waiting for PodDisruptionBudget ${pdb} to allow a disruption`;
}

/** A deadline blocker: the pod still terminating, or not evicted. */
export function deadlineBlockerMessage(terminating: boolean): string {
  return terminating ? 'pod is still terminating' : 'pod was not evicted before the deadline';
}
