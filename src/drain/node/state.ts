/**
 * The node drain's state: the one JSON-plain {@link NodeDrainState} the node workflow keeps (carried
 * whole across continue-as-new), its per-pod and per-PDB records, the settings a node reads, and the
 * shapes of a decision and of the answers the reducers take in.
 *
 * The node drain is a level-triggered loop, observe → decide → act → report, whose pure half lives
 * in this folder, one purpose per module:
 * - observation.ts: what the `observeNode` activity saw (the node, its pods, their PDBs);
 * - answers.ts: what an Eviction API call or a deadline DELETE answered (or that it failed), and
 *   pods counted gone after eviction.skipWaitForDeleteTimeoutSeconds;
 * - controls.ts: pause, resume, abort, release from the plan (or a stop from the operator);
 * - decide.ts: which pods to evict now, the node's phase, whether it is done, when to look again,
 *   and what blocks it; deadline.ts: the deadline's fresh view, deletions and advance notice;
 * - budget.ts: the PDB budgets (the node's own count and the plan's grants);
 * - report.ts: counts and skipped pods for the plan; words.ts: every message.
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
 * - At the deadline the drain acts only on a view observed after it (deadline.ts): the deadline
 *   timer of a worker that was down over it fires at its restart, when the last view dates from
 *   before the downtime. One observation that waits for nothing comes first, for at most
 *   `FRESH_VIEW_WAIT_MS`.
 * - An externally uncordoned node (`spec.unschedulable` false) gets no eviction and is never
 *   `Drained` while schedulable; the plan does not cordon it again (it does not fight the admin).
 */
import type { OnDeadline, RetryBackoff, SkippedPod } from '../../api/plan.js';
import { NodePhase } from '../../api/reasons.js';
import type { PdbDiagnosis, PdbExemption } from '../../contract/observation.js';
import type { RollState } from '../hooks.js';
import type { ReturnLedger } from '../returning.js';

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
  /** Why it blocks, as the last observation said (src/drain/pdb-diagnosis.ts), while it allows nothing. */
  diagnosis?: PdbDiagnosis;
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
   * Absent before the claim (then not compared).
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

/** Orders records by `key` (namespace/name). */
export const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Orders skipped pods by `pod` (namespace/name). */
export const byPod = (a: { pod: string }, b: { pod: string }) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0);

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
