/**
 * The contract between the drain workflows and the activities: argument and result shapes of every
 * activity. Pure types only, so workflow code may import this module.
 *
 * Conventions: pods are named `namespace/name` ("pod keys"); PodDisruptionBudgets likewise
 * ("PDB keys"); all durations are in seconds unless the name ends in `Ms`; times are RFC 3339.
 */
import type { MaintenancePlanStatus, PodSelection, LabelSelector, PodOrderRule } from '../api/plan.js';
import type { BlockerReason, PodReason } from '../api/reasons.js';
import type { NotUncordoned } from '../drain/hand-back.js';
import type { NodePreflight } from '../drain/preflight.js';
import type { PodAction } from '../drain/pods.js';
import type { PdbExemption } from '../drain/eviction-gate.js';
import type { ReturnPlacement } from '../drain/returning.js';

/** Identifies the plan an activity works for (node claims and status writes are keyed by it). */
export interface PlanRef {
  /** metadata.name of the MaintenancePlan. */
  name: string;
  /** metadata.uid of the MaintenancePlan: a re-created plan of the same name is another plan. */
  uid: string;
}

/** Result of {@link DrainActivities.resolveNodes}. */
export interface ResolvedNodes {
  /** Existing nodes to drain, sorted by name, without duplicates. */
  nodes: string[];
  /** Names from spec.nodeNames that do not exist. */
  missing: string[];
}

/** Result of {@link DrainActivities.cordonNode}. */
export type CordonResult =
  | {
      outcome: 'Cordoned';
      /** Whether the node was already unschedulable before this plan first cordoned it. */
      wasUnschedulable: boolean;
    }
  | {
      outcome: 'HeldByOtherPlan';
      /** Name of the plan holding the node. */
      heldBy: string;
    }
  | { outcome: 'NodeNotFound' };

/** Input of {@link DrainActivities.waitClaimReleased}. */
export interface WaitClaimInput {
  /** The plan waiting for the node (its own claim does not count as held). */
  plan: PlanRef;
  node: string;
  /** Name of the plan holding the node, as {@link CordonResult} `heldBy` named it. */
  heldBy: string;
  /** Longest wait, seconds (>= 0): the node workflow's next try or the plan's deadline. */
  maxWaitSeconds: number;
}

/**
 * Result of {@link DrainActivities.waitClaimReleased}: `Released` when the node's claim no longer
 * names `heldBy` (no claim, this plan's, or a third plan's), `NodeNotFound` when the node is gone,
 * `StillHeld` after `maxWaitSeconds` without either.
 */
export type ClaimWaitResult =
  { outcome: 'Released' } | { outcome: 'StillHeld' } | { outcome: 'NodeNotFound' };

/**
 * One pod of a node as the observeNode activity reports it ({@link NodeObservation}`.pods`, recorded
 * in histories): its classification (a `PodDecision` of src/drain/pods.ts, made by
 * `buildNodePods` in src/activities/node-pods.ts) with the pod's identity, the PDBs selecting it
 * and what a deletion at the deadline needs. The node workflow turns it into its own per-pod state
 * (`PodRecord`, `applyObservation` in src/drain/node-drain.ts). docs/design-decisions.md, "A pod's
 * way through the code", shows the whole way.
 */
export interface ObservedPod {
  /** `namespace/name`. */
  key: string;
  namespace: string;
  name: string;
  uid: string;
  /** Evict: to be evicted; Skip: left alone; Wait: terminating, waited for; Block: cannot be evicted. */
  action: PodAction;
  /** The rule that decided (`PodDecision.reason` of src/drain/pods.ts, e.g. DaemonSetPod, NoController, EmptyDirData, Terminating). */
  reason: PodReason;
  message: string;
  /** metadata.deletionTimestamp as ms since epoch, when the pod is terminating. */
  deletionTimestampMs?: number;
  /**
   * spec.terminationGracePeriodSeconds, when set: bounds the grace period of a deletion at the
   * deadline (onDeadline DeletePods). Not part of the observation's fingerprint.
   */
  terminationGracePeriodSeconds?: number;
  /** Keys of the PodDisruptionBudgets whose selector matches the pod (0, 1 or more). */
  pdbs: string[];
  /**
   * The pod's order group (spec.podOrder, critical priority classes; src/drain/pod-policy.ts) when
   * it is not 0. Part of the fingerprint when set.
   */
  order?: number;
  /** status.phase (Pending, Running, Succeeded, Failed, Unknown), when set. Not part of the fingerprint. */
  phase?: string;
  /** Whether the condition Ready is True. Not part of the fingerprint. */
  ready?: boolean;
  /**
   * Set when the API server evicts the pod without checking its PDB's budget
   * (src/drain/eviction-gate.ts, from its phase, readiness and its PDB's
   * unhealthyPodEvictionPolicy and health): the drain evicts it without waiting for, or spending,
   * a disruption. Part of the fingerprint when set.
   */
  pdbExempt?: PdbExemption;
  /** The pod's controller (ownerReference with controller: true): its UID and `Kind namespace/name`. */
  controller?: { uid: string; ref: string };
  /**
   * Set when the pod's spec lets it be placed on the node while it is cordoned
   * (src/drain/returning.ts). Part of the fingerprint when set.
   */
  returns?: ReturnPlacement;
}

/**
 * Input of {@link DrainActivities.observeNode}: what to observe and what the caller already knows.
 */
export interface ObserveNodeInput {
  node: string;
  selection: PodSelection;
  /**
   * Fingerprint of the observation the caller holds ({@link NodeObservation.fingerprint}). The
   * activity answers as soon as the world differs from it; absent means "answer at once".
   */
  since?: string;
  /** Longest wait, seconds, before answering `{ changed: false }` when nothing material changed. */
  maxWaitSeconds: number;
  /**
   * Longest coalescing window, ms: after the first material change the activity collects more
   * changes for at most this long and answers them as one batch. Default 500.
   */
  coalesceMs?: number;
  /**
   * Quiet time, ms, that ends the coalescing window early: the answer goes out once no change came
   * for this long (a burst of pod deletions stays one answer; a lone change waits only this long).
   * Default 100; at most `coalesceMs` (equal to it: a fixed window).
   */
  quietMs?: number;
  /**
   * Keys (`namespace/name`) of PDBs to report although no pod of the node is behind them any more:
   * the drain waits to see its last evictions counted in them (the plan's PDB budget).
   */
  pdbs?: string[];
  /**
   * Count a new resourceVersion of a PDB as a material change (default false): the plan's PDB
   * budget orders the nodes' reports by it. `true`: of every PDB in the answer; a list of keys
   * (`namespace/name`): of those only (the PDBs the node reports to the plan), the others count
   * only when their disruptionsAllowed changes.
   */
  pdbVersions?: boolean | string[];
  /**
   * With a list of keys in `pdbVersions`: only those PDBs are material at all (allowance and
   * version); the others are still in the answer but never change the fingerprint, so they never
   * wake the caller (default false). A node with a reporting set asks for it, listing the PDBs it
   * reports and those with evictions it has not seen counted yet: it spends the plan's grants
   * without its own view of the others (`settings.grantsOnly` in src/drain/node-drain.ts).
   */
  listedPdbsOnly?: boolean;
  /**
   * spec.podOrder: each pod's order group is computed with it ({@link ObservedPod.order}). With a
   * namespaceSelector in it the activity lists the namespaces (RBAC: namespaces list) once per call.
   */
  podOrder?: PodOrderRule[];
}

/**
 * What {@link DrainActivities.observeNode} saw. `changed: false` carries no payload (the caller's
 * view is still true), which keeps unchanged observations small in the workflow history.
 */
export type NodeObservation =
  | { changed: false; fingerprint: string }
  | {
      changed: true;
      /** Hash of the material content below (pods with their decisions and PDBs, node existence and schedulability). */
      fingerprint: string;
      /**
       * The node itself: whether it exists and whether `spec.unschedulable` is true; `released` when
       * it carries the annotation drainflow.dev/release=true (a per-node release, uncordon AfterEachNode).
       */
      node: { exists: boolean; unschedulable: boolean; released?: boolean };
      /** Every pod bound to the node (`spec.nodeName`), classified, sorted by key. Empty when the node does not exist. */
      pods: ObservedPod[];
      /** Every PDB matching at least one of `pods`, sorted by key. */
      pdbs: PdbObservation[];
    };

/** A PodDisruptionBudget as observed by {@link DrainActivities.listNodePods}. */
export interface PdbObservation {
  /** `namespace/name`. */
  key: string;
  /** status.disruptionsAllowed, or 0 when status.observedGeneration < metadata.generation. */
  disruptionsAllowed: number;
  /** metadata.resourceVersion of the PDB as observed (not part of the fingerprint). */
  resourceVersion?: string;
}

/** Result of {@link DrainActivities.listNodePods}. */
export interface NodePods {
  /** Every pod bound to the node, sorted by key. */
  pods: ObservedPod[];
  /** Every PDB matching at least one pod of `pods`, sorted by key. */
  pdbs: PdbObservation[];
}

/**
 * What one Eviction API call answered (docs/local-stack.md), classified by status code and
 * Status cause, never by message text.
 */
export type EvictResult =
  /** 201/200: the pod was evicted (it now terminates within its grace period). */
  | { outcome: 'Evicted' }
  /** 404, or the pod now has another UID: the pod is already gone, which counts as success. */
  | { outcome: 'Gone' }
  /**
   * A refusal that heals by itself, to be retried after the backoff: 409 Conflict while the pod with
   * this UID still exists (reason `Conflict`), 403 with cause `NamespaceTerminating` (reason
   * `NamespaceTerminating`: the namespace is being deleted and takes the pod with it; the drain waits
   * for the pod to go rather than evicting it again).
   */
  | {
      outcome: 'Retry';
      code: number;
      reason: typeof BlockerReason.Conflict | typeof BlockerReason.NamespaceTerminating;
      message: string;
    }
  /**
   * 429. `cause` DisruptionBudget: a PDB allows no disruption now (no Retry-After) or is not yet
   * processed (Retry-After 10). `cause` Throttled: API Priority and Fairness or max-in-flight.
   */
  | {
      outcome: 'TooManyRequests';
      cause: 'DisruptionBudget' | 'Throttled';
      /** The server's Retry-After in seconds, when it sent one. */
      retryAfterSeconds?: number;
      /** The PDB named by the DisruptionBudget cause, as `namespace/name`, when known. */
      pdb?: string;
      message: string;
    }
  /**
   * An answer that waiting never fixes: 500 for a pod covered by several PDBs
   * (reason MultiplePodDisruptionBudgets), 403 (e.g. disruptionsAllowed negative), other 4xx.
   */
  | { outcome: 'Failed'; code: number; reason: string; message: string };

/** Result of {@link DrainActivities.checkPod}. */
export type PodState = 'Gone' | 'Terminating' | 'Present';

/** Input of {@link DrainActivities.evictPod}. */
export interface EvictInput {
  namespace: string;
  name: string;
  /** Only this incarnation is evicted (DeleteOptions.preconditions.uid). */
  uid: string;
  /** DeleteOptions.gracePeriodSeconds; absent means the pod's own. */
  gracePeriodSeconds?: number;
  /**
   * Preflight only: send the eviction with `dryRun: ["All"]` (query and DeleteOptions), so the API
   * server runs admission and the PodDisruptionBudget check but deletes nothing and spends no budget.
   */
  dryRun?: boolean;
}

/** Input of {@link DrainActivities.deletePod} (onDeadline DeletePods). */
export interface DeletePodInput {
  namespace: string;
  name: string;
  /** Only this incarnation is deleted (DeleteOptions.preconditions.uid). */
  uid: string;
  /** DeleteOptions.gracePeriodSeconds (at least 1). */
  gracePeriodSeconds: number;
}

/** Result of {@link DrainActivities.deletePod}. */
export type DeletePodResult =
  { outcome: 'Deleted' } | { outcome: 'Gone' } | { outcome: 'Failed'; code: number; message: string };

/** The activities the workflows call. Implemented by `createActivities` in ./index.ts. */
export interface DrainActivities {
  /**
   * Resolves spec.nodeNames and spec.nodeSelector to existing node names (union).
   * Retryable on transient API errors.
   */
  resolveNodes(input: { nodeNames?: string[]; nodeSelector?: LabelSelector }): Promise<ResolvedNodes>;
  /**
   * Claims the node for the plan (annotation `maintenance.drainflow.dev/held-by`) and cordons it
   * (spec.unschedulable=true), recording whether it was unschedulable before. Idempotent: a node
   * already claimed by this plan returns the recorded `wasUnschedulable`.
   */
  cordonNode(input: { plan: PlanRef; node: string }): Promise<CordonResult>;
  /**
   * Hands a node back: uncordons it unless it was unschedulable before the plan, and removes the
   * claim. Does nothing to a node not claimed by this plan. `uncordon: false` only removes the claim.
   * @returns whether the node was uncordoned, and when not, why (`left`, see NotUncordoned).
   */
  releaseNode(input: {
    plan: PlanRef;
    node: string;
    uncordon: boolean;
  }): Promise<{ uncordoned: boolean; left?: NotUncordoned }>;
  /**
   * Lists the pods bound to the node, classified, with the PDBs covering them. Only node runs
   * recorded before `patched('level-triggered-node')` call it (src/workflows/legacy/node-v1.ts);
   * the loop observes with {@link DrainActivities.observeNode}.
   */
  listNodePods(input: { node: string; selection: PodSelection }): Promise<NodePods>;
  /**
   * Sends one Eviction API call. Heartbeats while the call is in flight, and aborts the HTTP request
   * when the activity is cancelled (then throws the cancellation). Throws (retryable) only on
   * transport errors and 5xx other than the multiple-PDB 500.
   */
  evictPod(input: EvictInput): Promise<EvictResult>;
  /**
   * Observes one node, its pods and the PDBs covering them (list, then watch), heartbeating, and
   * answers when what the caller holds (`since`) is no longer true (after coalescing), or after
   * `maxWaitSeconds` with `{ changed: false }`. Cancellable.
   */
  observeNode(input: ObserveNodeInput): Promise<NodeObservation>;
  /**
   * Waits (from the worker's watch cache, heartbeating) until the node's claim no longer names the
   * plan `heldBy`, the node is gone, or `maxWaitSeconds` passed; answers at once when that is so
   * already. Cancellable. Reads the cache only: its answer may lag the API server by the watch's
   * delay, and `Released` is a hint to try `cordonNode` now, not a claim.
   */
  waitClaimReleased(input: WaitClaimInput): Promise<ClaimWaitResult>;
  /**
   * onDeadline DeletePods: deletes the pod with DELETE (no Eviction API, so PodDisruptionBudgets are
   * bypassed), its UID as precondition and the given grace period. 404 and a failed UID precondition
   * (409) are `Gone`; other 4xx `Failed`; transport errors and 5xx throw (retryable).
   */
  deletePod(input: DeletePodInput): Promise<DeletePodResult>;
  /**
   * Reads the pod by name and compares UIDs. As an activity, only the legacy node runs call it
   * (see {@link DrainActivities.listNodePods}); `evictPod` calls the same function to resolve a 409.
   */
  checkPod(input: { namespace: string; name: string; uid: string }): Promise<PodState>;
  /**
   * Waits (watching, heartbeating) until the pod with this UID no longer exists, at most
   * `timeoutSeconds`. @returns whether it is gone. Only the legacy node runs call it (see
   * {@link DrainActivities.listNodePods}): the loop learns of a pod's end from `observeNode`.
   */
  waitPodGone(input: {
    namespace: string;
    name: string;
    uid: string;
    timeoutSeconds: number;
  }): Promise<{ gone: boolean }>;
  /**
   * Waits (watching, heartbeating) until the PDB allows a disruption (status.disruptionsAllowed > 0
   * and status.observedGeneration >= metadata.generation), at most `timeoutSeconds`.
   * @returns the last observed disruptionsAllowed (0 on timeout) and whether the PDB still exists.
   * Only the legacy node runs call it (see {@link DrainActivities.listNodePods}).
   */
  waitDisruptionAllowed(input: {
    pdb: string;
    timeoutSeconds: number;
  }): Promise<{ disruptionsAllowed: number; exists: boolean }>;
  /**
   * Writes the plan's status through the status subresource, unless it already equals `status`
   * (deep comparison). Retries conflicts. A plan that no longer exists (or has another UID) is not
   * an error: returns `{ written: false, exists: false }`.
   */
  publishStatus(input: {
    plan: PlanRef;
    status: MaintenancePlanStatus;
  }): Promise<{ written: boolean; exists: boolean }>;
  /** Records a Kubernetes Event on the plan (type Normal or Warning, CamelCase reason). Best effort. */
  recordEvent(input: {
    plan: PlanRef;
    type: 'Normal' | 'Warning';
    reason: string;
    message: string;
  }): Promise<void>;
}

/** Input of {@link PreflightActivities.preflightNode}. */
export interface PreflightNodeInput {
  node: string;
  /** spec.podSelection with defaults applied. */
  selection: PodSelection;
  /** The plan doing the preflight (its own claim on the node is not a blocker); absent for the CLI. */
  planName?: string;
  /** Send a dry-run eviction for every pod to evict (default true). */
  dryRun?: boolean;
}

/**
 * The preflight activity (`spec.mode: Preflight`), apart from {@link DrainActivities} so fakes of
 * the drain contract need not implement it. Implemented in ./preflight.ts.
 */
export interface PreflightActivities {
  /**
   * Examines one node without changing anything: reads the node, its pods and the
   * PodDisruptionBudgets of their namespaces, sends a dry-run eviction (`dryRun: ["All"]`) for
   * every pod a drain would evict, and builds the node's report (src/drain/preflight.ts).
   * A node that does not exist is reported with an `error`. Retryable on transient API errors.
   */
  preflightNode(input: PreflightNodeInput): Promise<NodePreflight>;
}
