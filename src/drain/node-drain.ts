/**
 * The node drain as a level-triggered loop: the pure half (observe → **decide** → act → report).
 *
 * The node workflow keeps one JSON-plain {@link NodeDrainState} (carried whole across
 * continue-as-new) and feeds it three kinds of input, each through one reducer here:
 * - {@link applyObservation}: what the `observeNode` activity saw (the node, its pods, their PDBs);
 * - {@link applyEvictionAnswer}: what one Eviction API call answered (or that it failed);
 * - {@link applyControl}: pause, resume, abort from the plan (or a stop from the operator).
 * {@link decideNode} then says which pods to evict now, what the node's phase is, whether the node
 * is done, and when to look again. {@link nodeProgress} is the report to the plan.
 *
 * PURE and DETERMINISTIC: imported by workflow code. No I/O, no clock: the time is a parameter.
 * Mutating reducers change the state they are given (the workflow owns exactly one) and return it.
 *
 * Rules and where they come from:
 * - A node is `Drained` only when an observation shows it exists, is still unschedulable and holds
 *   no pod that must leave (kubectl drain waits for every evicted pod to be deleted).
 * - Blockers are re-evaluated on every observation: a pod blocked by a rule (no controller, emptyDir,
 *   two PDBs) returns to the queue when the observation no longer blocks it. `PodsNotEvictable` is a
 *   phase the node leaves, not an end; the end is the deadline.
 * - Evictions behind one PodDisruptionBudget never exceed what the PDB allows: the last observed
 *   `disruptionsAllowed`, minus calls in flight behind it, minus evictions answered since the
 *   observation was taken (the eviction subresource spends a disruption in the PDB's status before it
 *   deletes the pod, so a later observation already counts it).
 * - A pod covered by more than one PDB is blocked without a call: the eviction subresource refuses
 *   it with a 500 whatever happens (registry/core/pod/storage/eviction.go).
 * - 429 with a `DisruptionBudget` cause and no `Retry-After`: the PDB's budget counts as 0 until an
 *   observation shows it changed, or a backoff bound passes (then one pod probes); never a blind
 *   per-pod retry. 429 `Throttled` (API Priority and Fairness): the server's `Retry-After`, else the
 *   backoff. `Retry-After: 0` and a 429 naming no known PDB use the backoff: never a 0 s loop.
 * - 409 Conflict and 403 `NamespaceTerminating` heal by themselves: the pod is retried after the
 *   backoff (a terminating namespace deletes the pod, which the observation then shows).
 * - A call that failed or timed out may still have taken effect: the pod is not evicted again
 *   before an observation taken after the failure shows it still there and not terminating. A pod
 *   an observation showed terminating while its call was in flight is Terminating whatever the call
 *   answers (an unchanged observation later only confirms that view).
 * - At the deadline the drain acts only on a view observed after it (`freshDeadlineView`): the
 *   deadline timer of a worker that was down over it fires at its restart, when the last view
 *   dates from before the downtime. One observation that waits for nothing comes first, for at
 *   most {@link FRESH_VIEW_WAIT_MS}.
 * - An externally uncordoned node (`spec.unschedulable` false) gets no eviction and is never
 *   `Drained` while schedulable; the plan does not cordon it again (it does not fight the admin).
 */
import type { EvictResult } from '../contract/eviction.js';
import type { NodeObservation, ObservedPod } from '../contract/observation.js';
import { WARNING_POD_CAP } from '../api/deadline.js';
import type { Blocker, OnDeadline, RetryBackoff, SkippedPod } from '../api/plan.js';
import { BlockerReason, DeadlineReason, NodePhase, NodeReason, PodPolicyReason } from '../api/reasons.js';
import { SKIPPED_POD_CAP, currentOrderGroup, deleteTimeoutAt } from './pod-policy.js';
import { backoffSeconds } from './backoff.js';
import { sortAndCapBlockers } from './conditions.js';
import type { PdbBudgetRequest, PdbGrant, PdbReport } from '../contract/budget.js';
import type { RollState } from './hooks.js';
import type { PdbExemption } from '../contract/observation.js';
import {
  evictionBoundReached,
  ownerEntry,
  returningPodMessage,
  returnsAfterCordon,
  startLedger,
  type ReturnLedger,
} from './returning.js';

/** Where one pod is in the drain. */
export type PodDrainState =
  /** To be evicted, from `notBeforeMs` on (and, after a failed call, after a fresh observation). */
  | 'Pending'
  /** An Eviction API call is in flight. */
  | 'Evicting'
  /** Evicted by this drain or found terminating: waiting for an observation without it. */
  | 'Terminating'
  /** Cannot be evicted now (a rule, two PDBs, a refusal): re-evaluated on every observation. */
  | 'Blocked'
  /** onDeadline DeletePods: a DELETE call (no Eviction API) is in flight. */
  | 'Deleting';

/**
 * The node workflow's state of one pod of the node that must leave (gone pods are dropped and
 * counted): made by {@link applyObservation} from an `ObservedPod` whose action is not Skip,
 * changed by the eviction and deletion answers, carried over continue-as-new in
 * {@link NodeDrainState}`.pods`, and shown as a `Blocker` ({@link nodeBlockers}) while it has a
 * reason.
 */
export interface PodRecord {
  /** `namespace/name`. */
  key: string;
  namespace: string;
  name: string;
  uid: string;
  /** Keys of the PDBs covering the pod, as last observed. */
  pdbs: string[];
  state: PodDrainState;
  /** Eviction calls sent for this pod. */
  attempts: number;
  /** Consecutive refusals and failures (drives the backoff). */
  refusals: number;
  /** Earliest next eviction call, ms since epoch (the cooldown's end). */
  notBeforeMs: number;
  /** After a failed call: the observation sequence number that must have been applied first. */
  checkAfterSeq?: number;
  /** Whether this drain's eviction took effect (201). */
  evicted?: boolean;
  /**
   * Whether this drain's last eviction call may have taken effect without an answer saying so (it
   * timed out or failed in transport, or the pod was seen terminating while it was in flight): a
   * pod that then goes counts as evicted, not as gone without eviction.
   */
  mayHaveEvicted?: boolean;
  /** Whether this drain deleted the pod at the deadline (onDeadline DeletePods; the DELETE took effect). */
  deleted?: boolean;
  /** The pod's spec.terminationGracePeriodSeconds as last observed (bounds a deadline deletion's grace). */
  graceSeconds?: number;
  /** When the pod was first refused or blocked, ms since epoch. */
  blockedSinceMs?: number;
  /** CamelCase reason of the last refusal or of the block. */
  reason?: string;
  message?: string;
  /** The PDB named by the last refusal, when any. */
  blockingPdb?: string;
  /** Blocked by the classification rules (cleared by an observation that no longer blocks it). */
  ruleBlocked?: boolean;
  /**
   * An observation applied while the call was in flight showed the pod terminating: whatever the
   * call answers (or if it fails), the pod is going and is not evicted again.
   */
  terminatingSeen?: boolean;
  /** The pod's order group as last observed (absent: 0; src/drain/pod-policy.ts). */
  order?: number;
  /** metadata.deletionTimestamp as last observed, ms since epoch (eviction.skipWaitForDeleteTimeoutSeconds). */
  deletionMs?: number;
  /**
   * As last observed: the API server evicts the pod without checking its PDB's budget
   * (src/drain/eviction-gate.ts), so its eviction neither waits for nor spends a disruption.
   */
  pdbExempt?: PdbExemption;
  /** UID of the pod's controller (src/drain/returning.ts counts evictions per controller). */
  ownerUid?: string;
  /** First seen after the first observation following the claim (bound to the node after the cordon). */
  afterCordon?: boolean;
}

/** One PodDisruptionBudget covering pods of the node, as this drain sees it. */
export interface PdbRecord {
  key: string;
  /** status.disruptionsAllowed at the last observation (0 while not yet processed). */
  observedAllowed: number;
  /** metadata.resourceVersion at the last observation (orders reports in the plan's budget). */
  resourceVersion?: string;
  /** Observation sequence numbers current when evictions behind this PDB were answered 201. */
  spentAtSeq: number[];
  /** Set after a 429 DisruptionBudget: the budget counts as 0 until this time, ms since epoch... */
  refusedUntilMs?: number;
  /** ...or until an observation shows `observedAllowed` different from this value... */
  refusedAllowed?: number;
  /**
   * ...or (set only with {@link NodeDrainSettings.refusalEndsAtNewVersion}) another
   * metadata.resourceVersion than this one, the version the drain had seen when it was refused.
   */
  refusedVersion?: string;
  /** Consecutive refusals without the budget changing (drives the probe backoff). */
  refusalRounds: number;
}

/** What the node's last observation said about the node itself. */
export interface NodeView {
  fingerprint: string;
  /**
   * Whether the node this drain claimed exists: a Node of its name with the claimed uid
   * ({@link NodeDrainState.nodeUid}). A Node deleted and created again under the name is another
   * node: the claimed one does not exist, and {@link NodeView.replacedBy} names the new one.
   */
  exists: boolean;
  /** The `metadata.uid` of the Node that stands under the name in place of the claimed one. */
  replacedBy?: string;
  unschedulable: boolean;
  /** Sequence number of that observation. */
  seq: number;
}

/** The node drain's whole state: JSON-plain, carried across continue-as-new. */
export interface NodeDrainState {
  node: string;
  /**
   * A cancellation request from Temporal stopped the drain (an abort; the node's final reason is
   * WorkflowCanceled).
   */
  cancelled?: boolean;
  phase: NodePhase;
  reason?: string;
  message?: string;
  /** Whether this plan holds the node's claim. */
  claimed: boolean;
  /** Whether this plan cordoned the node (false when it was unschedulable before). */
  cordonedByPlan: boolean;
  /**
   * The `metadata.uid` of the Node this plan claimed (the claim's answer). Nodes are identified by
   * uid: a Node deleted and created again under the same name has another, and is not this plan's.
   * Absent before the claim (and in states of workers from before it existed: then not compared).
   */
  nodeUid?: string;
  /** Claim attempts refused because another plan holds the node (drives the retry backoff). */
  claimRounds: number;
  /** The plan that held the node at the last refused claim attempt; absent once claimed. */
  heldBy?: string;
  paused: boolean;
  aborted: boolean;
  /** Absolute deadline, ms since epoch. */
  deadlineMs: number;
  /** Pods that must leave and are not gone yet, by UID. */
  pods: Record<string, PodRecord>;
  /** PDBs covering those pods, by key. */
  pdbs: Record<string, PdbRecord>;
  /**
   * Set when the plan hands out PDB budgets (src/drain/pdb-budget.ts): an eviction behind a PDB
   * also needs one of the plan's grants for it.
   */
  budget?: NodeBudget;
  /** The last observation; absent before the first. */
  view?: NodeView;
  /** Observations started so far (the next one gets `observeSeq + 1`). */
  observeSeq: number;
  /**
   * Set by {@link decideNode} the first time it runs at or after the deadline (not aborted;
   * {@link NodeDrainSettings.freshDeadlineView}): which views count as observed after the deadline.
   */
  deadlineView?: DeadlineView;
  /** Pods that must leave and are gone (evicted, deleted, or finished). */
  podsGone: number;
  /** Eviction calls sent. */
  attempts: number;
  /** Eviction calls answered 429. */
  tooManyRequests: number;
  lastError?: string;
  /** onDeadline DeletePods: pods whose deletion at the deadline took effect. */
  podsDeleted?: number;
  /** onDeadline DeletePods: of {@link podsGone}, the pods that went after such a deletion. */
  deletedGone?: number;
  /**
   * Of {@link podsGone}, the pods that went without this drain's eviction or deletion taking effect:
   * deleted by someone else, finished, already terminating, or gone before the call (404).
   */
  goneWithoutEviction?: number;
  /** onDeadline DeletePods: whether the advance-notice Event PodsWillBeDeleted went out. */
  warned?: boolean;
  /** Pods the last observation showed skipped by their opt-out label (DrainLabelSkip), sorted, capped. */
  optedOut?: SkippedPod[];
  /**
   * Pods counted gone while still terminating (eviction.skipWaitForDeleteTimeoutSeconds), by UID:
   * ignored by later observations, kept while observations still show them.
   */
  timedOut?: Record<string, SkippedPod>;
  /** spec.hooks / uncordon AfterEachNode: the node's rolling part (src/drain/hooks.ts). */
  roll?: RollState;
  /**
   * Pods that come back (src/drain/returning.ts): per controller its pods at the cordon (the first
   * observation after the claim) and its evictions. Absent before that observation.
   */
  returning?: ReturnLedger;
  /** Returning pods left on the node, never evicted (by UID): kept while observations show them. */
  returned?: Record<string, SkippedPod & { ownerUid: string }>;
  /**
   * The newest plan metadata.generation a control signal carried (from the operator directly or
   * forwarded by the plan); absent until one carried any. See {@link isStaleControl}.
   */
  controlGeneration?: number;
}

/**
 * When a node first decided at or after its deadline, as {@link NodeDrainState.deadlineView}:
 * JSON-plain, carried across continue-as-new.
 */
export interface DeadlineView {
  /**
   * {@link NodeDrainState.observeSeq} then: every observation started until then started before
   * the deadline, so only a view with a higher `seq` was observed after it.
   */
  afterSeq: number;
  /** Until when the drain waits for such a view, ms since epoch (that moment + {@link FRESH_VIEW_WAIT_MS}). */
  untilMs: number;
}

/** The plan's grants as one node holds them. */
export interface NodeBudget {
  /** Sequence number of the last grant applied (0: none). */
  grantSeq: number;
  /** PDB key → granted disruptions not yet spent. */
  grants: Record<string, number>;
  /**
   * The PDBs this node reports, as the plan last named them (a grant's `reports`). Absent: the
   * plan assigns no reporters; the node reports every change and bounds its wants by its own view.
   */
  reports?: string[];
}

/** The drain settings a node reads (a subset of the plan's spec). */
export interface NodeDrainSettings {
  /** eviction.maxConcurrentPerNode. */
  maxConcurrentPerNode: number;
  /** eviction.retryBackoff, seconds. */
  retryBackoff: RetryBackoff;
  /** spec.onDeadline; absent: Stop. */
  onDeadline?: OnDeadline;
  /** The plan's deadline, ms since epoch: DeletePods cuts grace periods to what is left until it. */
  planDeadlineMs?: number;
  /** spec.deadlineWarningSeconds (DeletePods advance notice); absent: no notice. */
  deadlineWarningSeconds?: number;
}

/**
 * How long a node at its deadline waits for a view observed after the deadline before it decides
 * from the view it holds, ms, counted from the first decision at or after the deadline (a worker
 * that was down over the deadline decides first at its restart). The observation asked for waits
 * for nothing (`maxWaitSeconds` 0): it answers as soon as the worker's watch cache has synced
 * (at most `SYNC_TIMEOUT_MS`, 15 s, on a cold cache, src/activities/observe.ts), so the bound is
 * reached only when the API server cannot be read; the deadline's outcome then comes at most this
 * much later, from the old view.
 */
export const FRESH_VIEW_WAIT_MS = 30_000;

/**
 * After a DeletePods deadline, how long past the longest grace period given the drain waits for the
 * deleted pods to go before it ends Blocked/DeadlineExceeded naming them (a finalizer can hold a pod), ms.
 */
export const DELETE_WAIT_SLACK_MS = 120_000;

/** Final outcome of a node drain. */
export interface NodeOutcome {
  phase: Extract<
    NodePhase,
    'Drained' | 'Released' | 'Blocked' | 'Aborted' | 'Failed' | 'Deleted' | 'Skipped'
  >;
  reason: string;
  message: string;
}

/** Output of {@link decideNode}. */
export interface NodeDecision {
  /** UIDs of the pods to evict now, in pod-key order. */
  evict: string[];
  /** The node's phase now (also written into the state). */
  phase: NodePhase;
  reason?: string;
  message?: string;
  /** Set when the drain is over (and nothing is in flight). */
  outcome?: NodeOutcome;
  /** When to decide again without new input, ms since epoch (cooldown end, probe, deadline). */
  wakeAtMs?: number;
  /**
   * onDeadline DeletePods, past the deadline: pods to delete now (DELETE with the pod's UID as
   * precondition, no Eviction API), each with its grace period in seconds.
   */
  delete?: PodDeletion[];
  /**
   * Set when the deadline has passed and the drain waits for a view observed after it
   * ({@link awaitsFreshView}): the caller starts an observation now (dropping one started before
   * the deadline) that waits for nothing. `wakeAtMs` is then the bound of that wait.
   */
  freshView?: true;
}

/** One deletion of {@link NodeDecision.delete}. */
export interface PodDeletion {
  uid: string;
  /**
   * Seconds left until the plan's deadline, at least 1, at most the pod's own
   * terminationGracePeriodSeconds (a longer grace than the pod asks for would only delay it).
   */
  gracePeriodSeconds: number;
}

/** What one DELETE of a pod answered (the `deletePod` activity), or that the call failed. */
export type DeleteAnswer =
  /** 200/202: the pod is terminating now. */
  | { outcome: 'Deleted' }
  /** 404, or the UID precondition failed (another incarnation): the pod is gone. */
  | { outcome: 'Gone' }
  /** Any other refusal (403, 422…): a blocker, tried again after the backoff. */
  | { outcome: 'Failed'; code: number; message: string }
  /** No answer (timeout, transport error): the pod is looked at before it is deleted again. */
  | { outcome: 'CallFailed'; message: string };

/** Failure of an eviction call as the workflow saw it (no answer from the API server). */
export interface EvictionCallFailure {
  outcome: 'CallFailed';
  /** Whether the call hit its start-to-close timeout (`eviction.callTimeoutSeconds`). */
  timedOut: boolean;
  /** Whether the call was cancelled (abort): not a failure, the pod is simply not evicted. */
  cancelled?: boolean;
  message: string;
}

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** A fresh state for `node`: nothing claimed, nothing observed. */
export function initialNodeState(node: string, deadlineMs: number, paused: boolean): NodeDrainState {
  return {
    node,
    phase: NodePhase.Pending,
    claimed: false,
    cordonedByPlan: false,
    claimRounds: 0,
    paused,
    aborted: false,
    deadlineMs,
    pods: {},
    pdbs: {},
    observeSeq: 0,
    podsGone: 0,
    attempts: 0,
    tooManyRequests: 0,
  };
}

/** An action of the `nodeControl` signal (src/contract/node-messages.ts). */
export type NodeControlAction = 'pause' | 'resume' | 'abort' | 'release';

/**
 * Whether a `pause` or `resume` relayed for plan generation `generation` is stale: older than the
 * newest generation the node has seen ({@link NodeDrainState.controlGeneration}). The rule of the
 * plan workflow (`control` in src/workflows/plan.ts) for the node: the operator
 * signals stops to the node workflows directly too (src/operator/node-stops.ts), so a standby
 * replica's late relay of an old pause may reach a node after the plan forwarded the leader's newer
 * resume; the newer spec wins. A control without a generation (maintenance windows, `drainflow`
 * Updates) is never stale, nor is an abort
 * or a release (they only ever stop more).
 */
export function isStaleControl(
  s: Pick<NodeDrainState, 'controlGeneration'>,
  action: NodeControlAction,
  generation: number | undefined,
): boolean {
  return (
    (action === 'pause' || action === 'resume') &&
    generation !== undefined &&
    s.controlGeneration !== undefined &&
    generation < s.controlGeneration
  );
}

/**
 * Applies pause, resume, abort or release (signals from the plan, or a stop from the operator).
 * Abort wins over everything; release only concerns a rolling node. A `generation` newer than
 * {@link NodeDrainState.controlGeneration} becomes it. Applies stale controls too: the caller
 * drops them first ({@link isStaleControl}).
 */
export function applyControl(
  s: NodeDrainState,
  action: NodeControlAction,
  generation?: number,
): NodeDrainState {
  if (generation !== undefined && (s.controlGeneration === undefined || generation > s.controlGeneration))
    s.controlGeneration = generation;
  if (action === 'pause') s.paused = true;
  else if (action === 'resume') s.paused = false;
  else if (action === 'release') {
    if (s.roll) s.roll.released = true;
  } else s.aborted = true;
  return s;
}

/**
 * Words a node paused before this plan claimed it: no claim (cordon) is tried while paused, since a
 * cordon takes the node's capacity away and a pause stops new work (the claim loop of
 * src/workflows/node.ts). On resume the claim is tried at once.
 *
 * - Refused at its last try because another plan held it ({@link NodeDrainState.heldBy}): phase
 *   Waiting, reason NodeHeldByOtherPlan, a message naming that plan and the pause (the other plan
 *   may have handed it back since; the node does not look while paused).
 * - Not tried yet (started paused: outside a maintenance window, after a continue-as-new): phase
 *   Paused, reason PausedByUser (shown as OutsideMaintenanceWindow while the windows hold the plan).
 */
export function pausedBeforeClaim(s: NodeDrainState): NodeDrainState {
  if (s.heldBy !== undefined) {
    s.phase = NodePhase.Waiting;
    s.reason = NodeReason.NodeHeldByOtherPlan;
    s.message = `node ${s.node} was held by plan ${s.heldBy} at the last try; paused: not claimed (cordoned) until resumed, then tried again at once`;
  } else {
    s.phase = NodePhase.Paused;
    s.reason = NodeReason.PausedByUser;
    s.message = 'paused before the node was claimed: not cordoned until resumed';
  }
  return s;
}

function newRecord(item: ObservedPod): PodRecord {
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
function dropGone(s: NodeDrainState, uid: string): void {
  const p = s.pods[uid];
  delete s.pods[uid];
  s.podsGone++;
  if (p?.deleted) s.deletedGone = (s.deletedGone ?? 0) + 1;
  // A pod gone while this drain's call is in flight (an observation came before the answer) counts
  // as the drain's: its eviction or deletion most likely did it.
  else if (p && !p.evicted && !p.mayHaveEvicted && p.state !== 'Evicting' && p.state !== 'Deleting')
    s.goneWithoutEviction = (s.goneWithoutEviction ?? 0) + 1;
}

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

/** Puts a pod into Blocked by a rule of the observation (classification or two PDBs). */
function blockByRule(p: PodRecord, reason: string, message: string, nowMs: number): void {
  p.state = 'Blocked';
  p.ruleBlocked = true;
  p.reason = reason;
  p.message = message;
  p.blockedSinceMs ??= nowMs;
}

/** Takes a rule block away again (the observation no longer blocks the pod). */
function unblock(p: PodRecord): void {
  p.state = 'Pending';
  p.ruleBlocked = false;
  p.reason = undefined;
  p.message = undefined;
  p.blockedSinceMs = undefined;
}

/**
 * The uid of the Node that stands under the claimed node's name in its place, when it is another
 * one: the node exists, both uids are known (`claimedUid` is absent before the claim and in states of
 * workers from before it was recorded; `node.uid` in answers of such workers) and they differ. The
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
      blockByRule(
        p,
        BlockerReason.MultiplePodDisruptionBudgets,
        `pod is covered by more than one PodDisruptionBudget (${p.pdbs.join(', ')}); the eviction subresource refuses such pods`,
        nowMs,
      );
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
function returnedPod(
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
function setReturned(s: NodeDrainState, returned: NonNullable<NodeDrainState['returned']>): void {
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
function applyReturnBound(s: NodeDrainState): void {
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
function overReturnBound(s: NodeDrainState, p: PodRecord, chosen: readonly string[]): boolean {
  if (!s.returning || !p.afterCordon || p.ownerUid === undefined || p.attempts > 0) return false;
  const calls = Object.values(s.pods).filter(
    (q) => q.ownerUid === p.ownerUid && (q.state === 'Evicting' || chosen.includes(q.uid)),
  ).length;
  return evictionBoundReached(s.returning, p.ownerUid, calls);
}

/** Counts an eviction of a pod of a controller that took effect (or may have). */
function countEviction(s: NodeDrainState, p: PodRecord): void {
  if (p.ownerUid !== undefined && s.returning) {
    const o = s.returning.owners[p.ownerUid];
    if (o) o.evicted++;
  }
}

const byPod = (a: { pod: string }, b: { pod: string }) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0);

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
        message: `still terminating ${timeoutSeconds} s after its deletionTimestamp ${new Date(p.deletionMs).toISOString()}: counted as gone (eviction.skipWaitForDeleteTimeoutSeconds)`,
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

/** The order group being drained now (the lowest among the pods still to leave), if any. */
export function nodeOrderGroup(s: NodeDrainState): number | undefined {
  return currentOrderGroup(Object.values(s.pods).map((p) => p.order));
}

/** The node's report of the per-pod policy: its current order group and the pods it skipped. */
export function podPolicyProgress(s: NodeDrainState): { orderGroup?: number; skipped?: SkippedPod[] } {
  const group = nodeOrderGroup(s);
  const skipped = nodeSkipped(s);
  return {
    ...(group !== undefined ? { orderGroup: group } : {}),
    ...(skipped.length > 0 ? { skipped } : {}),
  };
}

/** The pods to list in status.nodes[].skipped: opted out by label and counted gone after the timeout. */
export function nodeSkipped(s: NodeDrainState): SkippedPod[] {
  const returned = Object.values(s.returned ?? {}).map(({ pod, reason, message }) => ({
    pod,
    reason,
    message,
  }));
  return [...(s.optedOut ?? []), ...Object.values(s.timedOut ?? {}), ...returned]
    .sort(byPod)
    .slice(0, SKIPPED_POD_CAP);
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
 * The grace period of a deadline deletion (onDeadline DeletePods), seconds: what is left until the
 * plan's deadline, rounded up, at least 1, at most the pod's own terminationGracePeriodSeconds.
 */
export function deletionGraceSeconds(
  planDeadlineMs: number,
  nowMs: number,
  podGraceSeconds: number | undefined,
): number {
  const left = Math.max(1, Math.ceil((planDeadlineMs - nowMs) / 1000));
  return podGraceSeconds !== undefined ? Math.max(1, Math.min(left, podGraceSeconds)) : left;
}

/** The advance notice of a DeletePods deadline (see {@link deletionWarning}). */
export interface DeletionWarning {
  /** When it is due, ms since epoch: deadlineWarningSeconds before the node's deadline. */
  atMs: number;
  /** The Event's message, naming the pods (capped). */
  message: string;
}

/**
 * The PodsWillBeDeleted Warning due now, if any: onDeadline DeletePods, not sent yet, before the
 * deadline, at or after `deadline − deadlineWarningSeconds` (at once when the deadline is closer),
 * the node observed and cordoned, not paused (a paused node deletes nothing at the deadline; the
 * notice goes out after the resume), not aborted, and pods still to leave. Does not mark it sent (the caller sets
 * {@link NodeDrainState.warned} once it recorded the Event).
 */
export function deletionWarning(
  s: NodeDrainState,
  nowMs: number,
  settings: NodeDrainSettings,
): DeletionWarning | undefined {
  if (settings.onDeadline !== 'DeletePods' || settings.deadlineWarningSeconds === undefined) return undefined;
  if (s.warned || s.aborted || s.paused || !s.view?.exists || !s.view.unschedulable || nowMs >= s.deadlineMs)
    return undefined;
  const atMs = s.deadlineMs - settings.deadlineWarningSeconds * 1000;
  if (nowMs < atMs) return undefined;
  const pods = Object.values(s.pods)
    .filter((p) => p.state !== 'Terminating')
    .sort(byKey)
    .map((p) => p.key);
  if (pods.length === 0) return undefined;
  const named = pods.slice(0, WARNING_POD_CAP).join(', ');
  const more = pods.length > WARNING_POD_CAP ? ` and ${pods.length - WARNING_POD_CAP} more` : '';
  return {
    atMs,
    message: `node ${s.node}: ${pods.length} pod(s) will be deleted without the Eviction API (PodDisruptionBudgets bypassed) at ${new Date(s.deadlineMs).toISOString()} unless they leave before: ${named}${more}`,
  };
}

/**
 * When the deadline's policy started to apply, ms since epoch: the first decision past the
 * deadline while not paused ({@link DeadlineView}; at the resume for a node paused over the
 * deadline), 0 before. DeletePods' wait for the pods it deleted counts from it too.
 */
function policyAppliedAtMs(s: NodeDrainState): number {
  return s.deadlineView ? s.deadlineView.untilMs - FRESH_VIEW_WAIT_MS : 0;
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
function pausedPastDeadlineMessage(s: NodeDrainState, policy: OnDeadline, left: number): string {
  return `paused past the deadline ${new Date(s.deadlineMs).toISOString()} with ${left} pod(s) left: onDeadline ${policy} applies when resumed (${AT_RESUME[policy]})`;
}

/** Disruptions this drain may still spend behind `pdb` now. */
function budgetOf(s: NodeDrainState, pdb: PdbRecord, nowMs: number): number {
  if (pdb.refusedUntilMs !== undefined) {
    if (nowMs < pdb.refusedUntilMs) return 0;
    // The probe bound passed without the budget changing: let one pod try (the status may be stale).
    // An eviction answered since the refusal is that one try until an observation accounts for it.
    return 1 - pdb.spentAtSeq.length - evictingBehind(s, pdb.key);
  }
  return pdb.observedAllowed - pdb.spentAtSeq.length - evictingBehind(s, pdb.key);
}

function evictingBehind(s: NodeDrainState, key: string): number {
  let n = 0;
  for (const p of Object.values(s.pods))
    if (p.state === 'Evicting' && p.pdbExempt === undefined && p.pdbs.includes(key)) n++;
  return n;
}

/**
 * Whether the drain, past its deadline, still waits for a view observed after the deadline: the
 * deadline was seen ({@link NodeDrainState.deadlineView} set by {@link decideNode} under
 * {@link NodeDrainSettings.freshDeadlineView}), the view it holds comes from an observation started
 * before (its `seq` is not above `afterSeq`; an unchanged answer of a later observation raises it
 * too, see {@link applyUnchangedObservation}), and the wait's bound `untilMs` has not passed.
 * A node decides its deadline's outcome (Blocked/DeadlineExceeded, SkipNode, DeletePods' deletions)
 * and lists deadline blockers ({@link nodeBlockers}) only once this is false.
 */
export function awaitsFreshView(s: NodeDrainState, nowMs: number): boolean {
  const d = s.deadlineView;
  return d !== undefined && s.view !== undefined && s.view.seq <= d.afterSeq && nowMs < d.untilMs;
}

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
    return end({ phase: NodePhase.Aborted, reason: NodeReason.Aborted, message: 'drain aborted' });
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
      message: `still not drained at its deadline with ${pods.length} pod(s) left: skipped and handed back`,
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
        ...result(
          NodePhase.Draining,
          DeadlineReason.DeletingPods,
          `deadline passed: deleting ${pods.length} pod(s) without the Eviction API`,
        ),
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
      message: view.unschedulable
        ? `deadline passed with ${left} pod(s) not evicted`
        : `deadline passed while the node was uncordoned by someone else (${left} pod(s) left${policy === 'DeletePods' ? ', none deleted: onDeadline DeletePods deletes pods only on a cordoned node' : ''})`,
    });
  }
  let wakeAtMs = s.deadlineMs;
  const wake = (t: number) => {
    if (t > nowMs && t < wakeAtMs) wakeAtMs = t;
  };
  if (policy === 'DeletePods' && settings.deadlineWarningSeconds !== undefined && !s.warned)
    wake(s.deadlineMs - settings.deadlineWarningSeconds * 1000);
  if (!view.unschedulable)
    return result(
      NodePhase.Blocked,
      NodeReason.NodeUncordonedExternally,
      `node ${s.node} was uncordoned by someone else; no evictions until it is cordoned again`,
      { wakeAtMs },
    );

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
      ...result(NodePhase.Paused, NodeReason.PausedByUser, 'no new evictions until resumed'),
      evict,
      wakeAtMs,
    };
  const stuck = pods.filter((p) => p.state === 'Blocked');
  if (stuck.length > 0 && stuck.length === pods.length)
    return {
      ...result(NodePhase.Blocked, NodeReason.PodsNotEvictable, `${stuck.length} pod(s) cannot be evicted`),
      evict,
      wakeAtMs,
    };
  const terminating = pods.filter((p) => p.state === 'Terminating').length;
  const togo = `${pods.length} pod(s) to go${terminating ? `, ${terminating} of them terminating (eviction accepted, waiting out the grace period)` : ''}`;
  if (group !== undefined) {
    const inGroup = pods.filter((p) => (p.order ?? 0) === group);
    const later = pods.length - inGroup.length;
    const stuckInGroup = inGroup.filter((p) => p.state === 'Blocked').length;
    if (later > 0 && stuckInGroup > 0 && stuckInGroup === inGroup.length)
      return {
        ...result(
          NodePhase.Blocked,
          NodeReason.PodsNotEvictable,
          `${stuckInGroup} pod(s) of order group ${group} cannot be evicted; ${later} pod(s) of later groups wait for them`,
        ),
        evict,
        wakeAtMs,
      };
    if (later > 0)
      return {
        ...result(
          NodePhase.Draining,
          NodeReason.Draining,
          `${togo}; order group ${group} first (${inGroup.length} pod(s)), ${later} pod(s) in later groups`,
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
      out.push({
        pod: p.key,
        ...(pdb ? { pdb } : {}),
        reason: p.reason,
        message: p.message ?? '',
        ...since,
        attempts: p.attempts,
      });
      continue;
    }
    const waiting = waitsForBudget(s, p, nowMs);
    if (waiting) {
      out.push({
        pod: p.key,
        pdb: waiting.key,
        reason: BlockerReason.DisruptionBudget,
        message: `waiting for PodDisruptionBudget ${waiting.key} to allow a disruption`,
        attempts: p.attempts,
      });
    } else if (deadline) {
      out.push({
        pod: p.key,
        ...(pdb ? { pdb } : {}),
        reason: p.state === 'Terminating' ? BlockerReason.Terminating : BlockerReason.NotEvicted,
        message:
          p.state === 'Terminating' ? 'pod is still terminating' : 'pod was not evicted before the deadline',
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

/**
 * How the pods still recorded on a node deleted during the drain count: those this drain evicted
 * (201, or a call that may have taken effect) or deleted at the deadline, and the others, which go
 * with the node without eviction (the pod garbage collector deletes pods bound to a Node that no
 * longer exists; PodDisruptionBudgets do not apply to that).
 */
function deletedNodePods(s: NodeDrainState): { evicted: number; deleted: number; withNode: number } {
  let evicted = 0;
  let deleted = 0;
  let withNode = 0;
  for (const p of Object.values(s.pods))
    if (p.deleted) deleted++;
    else if (p.evicted || p.mayHaveEvicted) evicted++;
    else withNode++;
  return { evicted, deleted, withNode };
}

/**
 * The end message of a node deleted during the drain, with how its pods left (`deletedNodeCounts`):
 * `node n1 was deleted during the drain: 2 pod(s) evicted, 2 never evicted went with the node`;
 * `replacedBy`: the uid of the Node created again under its name, which the message names.
 */
function deletedNodeMessage(s: NodeDrainState, replacedBy?: string): string {
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

/**
 * The pods still recorded that this drain evicted and that are terminating: its eviction was
 * answered 201, or its call got no answer (timed out, cancelled) while an observation showed the
 * pod terminating. They count as evicted once an observation shows them gone ({@link dropGone}),
 * as on a node deleted during the drain ({@link deletedNodePods}). Pods deleted at the deadline
 * are not among them (they count in `podsDeleted`), nor pods found terminating by someone else's
 * doing.
 */
export function terminatingEvicted(s: NodeDrainState): number {
  let n = 0;
  for (const p of Object.values(s.pods))
    if (p.state === 'Terminating' && !p.deleted && (p.evicted || p.mayHaveEvicted)) n++;
  return n;
}

/**
 * Counts for the node's report (pods).
 *
 * A node deleted during the drain keeps its pods counted: those this drain evicted (or deleted) as
 * evicted (deleted), every other pod still on it as gone without eviction (the pod garbage
 * collector deletes pods bound to a Node that no longer exists).
 *
 * A node that ended `Aborted` counts as evicted the pods this drain evicted that are still
 * terminating ({@link terminatingEvicted}). The Eviction API's 201 means the API server accepted
 * the eviction: the pod is terminating and will go, and kubectl drain reports such a pod as
 * evicted. An aborted node ends as soon as no call is in flight, before any observation shows
 * those pods gone. A running node's Draining message counts its terminating pods already.
 */
export function nodeCounts(s: NodeDrainState): {
  podsTotal: number;
  podsEvicted: number;
  podsFailed: number;
  podsDeleted?: number;
  podsGoneWithoutEviction?: number;
} {
  if (s.view && !s.view.exists) {
    // Pods deleted at the deadline are in s.podsDeleted already (counted when the DELETE took effect).
    const { evicted, withNode } = deletedNodePods(s);
    const gone = (s.goneWithoutEviction ?? 0) + withNode;
    const podsDeleted = s.podsDeleted ?? 0;
    return {
      podsTotal: s.podsGone + Object.keys(s.pods).length,
      podsEvicted: s.podsGone - (s.deletedGone ?? 0) - (s.goneWithoutEviction ?? 0) + evicted,
      podsFailed: 0,
      ...(podsDeleted ? { podsDeleted } : {}),
      ...(gone ? { podsGoneWithoutEviction: gone } : {}),
    };
  }
  const pods = Object.values(s.pods);
  // An aborted node's evicted pods still terminating will go: they count as evicted.
  const going = s.phase === NodePhase.Aborted ? terminatingEvicted(s) : 0;
  return {
    podsTotal: s.podsGone + pods.length,
    podsEvicted: s.podsGone - (s.deletedGone ?? 0) - (s.goneWithoutEviction ?? 0) + going,
    podsFailed: pods.filter((p) => p.state === 'Blocked').length,
    ...(s.podsDeleted ? { podsDeleted: s.podsDeleted } : {}),
    ...(s.goneWithoutEviction ? { podsGoneWithoutEviction: s.goneWithoutEviction } : {}),
  };
}

/** Applies a grant of the plan (signal `pdbGrant`); repeated or older grants change nothing. */
export function applyGrant(s: NodeDrainState, g: PdbGrant): NodeDrainState {
  const b = s.budget;
  if (!b || g.seq <= b.grantSeq) return s;
  b.grantSeq = g.seq;
  for (const [key, n] of Object.entries(g.grants)) b.grants[key] = (b.grants[key] ?? 0) + n;
  if (g.reports !== undefined) b.reports = [...g.reports];
  return s;
}

/**
 * The node's budget request to the plan now (see src/drain/pdb-budget.ts), or undefined when the
 * plan hands out no budgets. Gives back grants the node cannot use now (more than the pods that
 * could be evicted now behind that PDB), so other nodes get them.
 *
 * - holding: unused grants + evictions in flight + evictions answered 201 that no observation of
 *   this node shows yet;
 * - wants: per PDB, the pods that could be evicted now (not cooling down, not paused, node
 *   cordoned, before the deadline), bounded by the node's own view of the budget, minus the
 *   grants it holds;
 * - room: how many more evictions `maxConcurrentPerNode` lets it start beyond those grants (the
 *   plan spreads that room over the PDBs, so nodes do not all crowd the first PDB by name).
 *
 * Once the plan named the node's reporting set ({@link NodeBudget.reports}), wants are bounded
 * only by a refusal the node counts now, not by its own view of the allowance (the plan bounds
 * them by its freshest report, so a PDB's rise does not change every waiting node's wants), and
 * the request carries `tracked`; {@link budgetRequestToSend} then leaves out unchanged reports.
 */
export function nodeBudgetRequest(
  s: NodeDrainState,
  nowMs: number,
  settings: NodeDrainSettings,
  quiesce = false,
): PdbBudgetRequest | undefined {
  const b = s.budget;
  if (!b) return undefined;
  const pods = Object.values(s.pods).sort(byKey);
  const eligible = new Map<string, number>();
  const canEvict =
    !s.paused &&
    !s.aborted &&
    !quiesce &&
    s.view?.exists === true &&
    s.view.unschedulable &&
    nowMs < s.deadlineMs;
  const group = currentOrderGroup(pods.map((p) => p.order));
  if (canEvict)
    for (const p of pods) {
      if (p.state !== 'Pending' || p.pdbs.length !== 1 || p.notBeforeMs > nowMs) continue;
      if (p.pdbExempt !== undefined) continue; // needs no grant (src/drain/eviction-gate.ts)
      if (group !== undefined && (p.order ?? 0) !== group) continue;
      if (p.checkAfterSeq !== undefined && s.view!.seq < p.checkAfterSeq) continue;
      eligible.set(p.pdbs[0]!, (eligible.get(p.pdbs[0]!) ?? 0) + 1);
    }
  for (const key of Object.keys(b.grants)) {
    const keep = Math.min(b.grants[key]!, eligible.get(key) ?? 0);
    if (keep > 0) b.grants[key] = keep;
    else delete b.grants[key];
  }
  const holding: Record<string, number> = {};
  const wants: Record<string, number> = {};
  const pdbs: PdbReport[] = [];
  let room = settings.maxConcurrentPerNode - pods.filter((p) => p.state === 'Evicting').length;
  for (const n of Object.values(b.grants)) room -= n;
  for (const pdb of Object.values(s.pdbs).sort(byKey)) {
    const held = (b.grants[pdb.key] ?? 0) + evictingBehind(s, pdb.key) + pdb.spentAtSeq.length;
    if (held > 0) holding[pdb.key] = held;
    const refusal = pdb.refusedUntilMs !== undefined;
    const refused = refusal && nowMs < pdb.refusedUntilMs!;
    const bound = b.reports === undefined ? budgetOf(s, pdb, nowMs) : refused ? 0 : Infinity;
    const want = Math.min(eligible.get(pdb.key) ?? 0, bound) - (b.grants[pdb.key] ?? 0);
    if (want > 0) wants[pdb.key] = want;
    pdbs.push({
      key: pdb.key,
      allowed: refused ? 0 : refusal ? 1 : pdb.observedAllowed,
      ...(pdb.resourceVersion !== undefined ? { resourceVersion: pdb.resourceVersion } : {}),
      ...(refused ? { refused: true } : {}),
    });
  }
  return {
    node: s.node,
    grantSeq: b.grantSeq,
    holding,
    wants,
    room: Math.max(0, room),
    pdbs,
    ...(b.reports !== undefined ? { tracked: pdbs.map((p) => p.key) } : {}),
  };
}

/**
 * What the plan believes of this node's budget: the node's last request as sent, plus the grants
 * it applied since (each one raises what the node holds and lowers what it still wants).
 */
export interface BudgetBelief {
  holding: Record<string, number>;
  wants: Record<string, number>;
  room: number;
  /** Every report the plan has from this node (the last of each PDB it sent). */
  pdbs: PdbReport[];
  /** The `tracked` last sent (absent: none sent). */
  tracked?: string[];
  /** The node's reporting set when it sent its last request (absent: it had none). */
  reports?: string[];
}

/**
 * The belief after the node sent `full` (the request before {@link budgetRequestToSend} filtered
 * it) while it reported `reports`.
 */
export function beliefAfterRequest(full: PdbBudgetRequest, reports?: string[]): BudgetBelief {
  return {
    holding: { ...full.holding },
    wants: { ...full.wants },
    room: full.room ?? 0,
    pdbs: full.pdbs,
    ...(full.tracked ? { tracked: [...full.tracked] } : {}),
    ...(reports ? { reports: [...reports] } : {}),
  };
}

/** The belief after the node applied grant `g` (see {@link BudgetBelief}). Mutates and returns `b`. */
export function beliefAfterGrant(b: BudgetBelief, g: PdbGrant): BudgetBelief {
  for (const [key, n] of Object.entries(g.grants)) {
    b.holding[key] = (b.holding[key] ?? 0) + n;
    const left = (b.wants[key] ?? 0) - n;
    if (left > 0) b.wants[key] = left;
    else delete b.wants[key];
    b.room = Math.max(0, b.room - n);
  }
  return b;
}

const sameReport = (a: PdbReport, b: PdbReport | undefined) =>
  b !== undefined &&
  a.allowed === b.allowed &&
  a.resourceVersion === b.resourceVersion &&
  (a.refused ?? false) === (b.refused ?? false);

/**
 * What the node sends of request `req` (from {@link nodeBudgetRequest}), or undefined when it is
 * no news to the plan. A node without a reporting set (`reports` undefined) sends the whole
 * request when {@link budgetRequestIsNews}. One with a set sends when the plan's belief of its
 * holdings, wants or room is wrong, when the PDBs it tracks changed (the plan may have to name
 * another reporter), when a PDB refused it anew (the plan must stop granting it), or when its
 * report of a PDB it reports differs from the last one it sent — any new version, not only a
 * changed allowance: another node's request may have brought the plan a version this
 * reporter's observations skipped (a lower allowance), and only the reporter's next version
 * brings the rise after it; a node just named reporter sends nothing while its view is the one
 * it last sent (the plan has that one or a newer one). A PDB it does not report is some other
 * node's to report. The request sent then carries only the reports that differ from the
 * ones the plan has from this node. A reporter with no belief (a new run) sends its baseline.
 */
export function budgetRequestToSend(
  belief: BudgetBelief | undefined,
  req: PdbBudgetRequest,
  reports: string[] | undefined,
): PdbBudgetRequest | undefined {
  if (reports === undefined) return budgetRequestIsNews(belief, req) ? req : undefined;
  const last = new Map((belief?.pdbs ?? []).map((r) => [r.key, r]));
  const changed = req.pdbs.filter((r) => !sameReport(r, last.get(r.key)));
  const send = () => ({ ...req, pdbs: changed });
  if (!belief)
    return Object.keys(req.wants).length > 0 || Object.keys(req.holding).length > 0 || reports.length > 0
      ? send()
      : undefined;
  const total = (w: Record<string, number>) => Object.values(w).reduce((a, n) => a + n, 0);
  const takes = (room: number | undefined, w: Record<string, number>) => Math.min(room ?? Infinity, total(w));
  const tracked = req.tracked ?? [];
  const news =
    !sameCounts(req.holding, belief.holding) ||
    !sameCounts(req.wants, belief.wants) ||
    takes(req.room, req.wants) !== takes(belief.room, belief.wants) ||
    belief.tracked === undefined ||
    tracked.length !== belief.tracked.length ||
    tracked.some((k, i) => k !== belief.tracked![i]) ||
    changed.some((r) => reports.includes(r.key) || (r.refused === true && !last.get(r.key)?.refused));
  return news ? send() : undefined;
}

const sameCounts = (a: Record<string, number>, b: Record<string, number>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if ((a[k] ?? 0) !== (b[k] ?? 0)) return false;
  return true;
};

/**
 * Whether request `req` tells the plan something it does not believe already: the node holds less
 * (it gave disruptions back) or more, it wants more or less, it can take more or fewer at once
 * (the smaller of its room and its wants), or, while it wants something, it saw a PDB change.
 * Applying a grant or spending one is no news (the plan counted it when it issued it).
 */
export function budgetRequestIsNews(belief: BudgetBelief | undefined, req: PdbBudgetRequest): boolean {
  const wanting = Object.keys(req.wants).length > 0;
  if (!belief) return wanting || Object.keys(req.holding).length > 0;
  const total = (w: Record<string, number>) => Object.values(w).reduce((a, n) => a + n, 0);
  const takes = (room: number | undefined, w: Record<string, number>) => Math.min(room ?? Infinity, total(w));
  return (
    !sameCounts(req.holding, belief.holding) ||
    !sameCounts(req.wants, belief.wants) ||
    takes(req.room, req.wants) !== takes(belief.room, belief.wants) ||
    (wanting && JSON.stringify(req.pdbs) !== JSON.stringify(belief.pdbs))
  );
}
