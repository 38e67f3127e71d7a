/**
 * The contract between the drain workflows and the activities: argument and result shapes of every
 * activity. Pure types only, so workflow code may import this module. The payloads other layers
 * share as well (observations, eviction answers, the plan reference) are in src/contract.
 *
 * Conventions: pods are named `namespace/name` ("pod keys"); PodDisruptionBudgets likewise
 * ("PDB keys"); all durations are in seconds unless the name ends in `Ms`; times are RFC 3339.
 */
import type { MaintenancePlanStatus, PodSelection, LabelSelector, PodOrderRule } from '../api/plan.js';
import type { NotUncordoned } from '../drain/hand-back.js';
import type { NodePreflight } from '../drain/preflight.js';
import type { PlanStatusInput } from '../drain/plan-status.js';
import type { EvictInput, EvictResult } from '../contract/eviction.js';
import type { PlanRef } from '../contract/names.js';
import type { NodeObservation, ObservedPod, PdbObservation } from '../contract/observation.js';

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
      /**
       * The claimed Node's `metadata.uid`: the node this plan holds (a Node created again under the
       * same name is another one).
       */
      nodeUid?: string;
    }
  | {
      /**
       * The call named the node it claimed before (`nodeUid`), and a Node of that name with another
       * uid stands in its place: deleted and created again. Nothing was written.
       */
      outcome: 'NodeReplaced';
      /** The `metadata.uid` of the Node now under that name. */
      nodeUid: string;
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
   * without its own view of the others (`settings.grantsOnly` in src/drain/node/budget.ts).
   */
  listedPdbsOnly?: boolean;
  /**
   * spec.podOrder: each pod's order group is computed with it ({@link ObservedPod.order}). With a
   * namespaceSelector in it the activity lists the namespaces (RBAC: namespaces list) once per call.
   */
  podOrder?: PodOrderRule[];
  /**
   * The `metadata.uid` of the Node the plan claimed. A Node under that name with another uid (deleted
   * and created again) is observed without its pods and PDBs: its pods are not this drain's.
   */
  nodeUid?: string;
}

/** The pods of a node with the PDBs covering them (`buildNodePods` in ./node-pods.ts). */
export interface NodePods {
  /** Every pod bound to the node, sorted by key. */
  pods: ObservedPod[];
  /** Every PDB matching at least one pod of `pods`, sorted by key. */
  pdbs: PdbObservation[];
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
  cordonNode(input: {
    plan: PlanRef;
    node: string;
    /**
     * The `metadata.uid` of the Node this plan claimed before (spec.cordon AllAtStart), when there
     * was one: a Node under that name with another uid is not claimed (`NodeReplaced`).
     */
    nodeUid?: string;
  }): Promise<CordonResult>;
  /**
   * Hands a node back: uncordons it unless it was unschedulable before the plan, and removes the
   * claim. Does nothing to a node not claimed by this plan, nor to a Node created again under the
   * claimed node's name (another `metadata.uid` than `nodeUid`, or than the uid its copied claim
   * names). `uncordon: false` only removes the claim.
   * @returns whether the node was uncordoned, and when not, why (`left`, see NotUncordoned).
   */
  releaseNode(input: {
    plan: PlanRef;
    node: string;
    uncordon: boolean;
    /** The claimed Node's `metadata.uid` ({@link CordonResult} `nodeUid`), when known. */
    nodeUid?: string;
  }): Promise<{ uncordoned: boolean; left?: NotUncordoned }>;
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
   * Writes the plan's status through the status subresource, unless it already equals `status`
   * (deep comparison). Retries conflicts. A plan that no longer exists (or has another UID) is not
   * an error: returns `{ written: false, exists: false }`.
   */
  publishStatus(input: {
    plan: PlanRef;
    status: MaintenancePlanStatus;
  }): Promise<{ written: boolean; exists: boolean }>;
  /**
   * Renders the plan's status from the workflow's structured state (src/drain/plan-status.ts; the
   * conditions' previous lastTransitionTime from the stored status) and writes it as
   * {@link publishStatus} does. The words are rendered here, not in the workflow.
   */
  writePlanStatus(input: {
    plan: PlanRef;
    state: PlanStatusInput;
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
