/**
 * What a node drain observes of its node: each pod bound to it, classified, and the
 * PodDisruptionBudgets covering them. The observeNode activity (src/activities/observe.ts) answers
 * with it; the node drain's reducers (src/drain/node/observation.ts) take it in.
 *
 * Conventions: pods are named `namespace/name` ("pod keys"); PodDisruptionBudgets likewise
 * ("PDB keys"); times are ms since epoch where the name ends in `Ms`.
 *
 * Ground floor (src/contract): pure types, imports only API types.
 */
import type { DisruptionBlockKind, PodReason, RemedyKind } from '../api/reasons.js';

/** What to do with a pod: evict it, leave it alone, wait for it to go, or report it as blocking the drain. */
export type PodAction = 'Evict' | 'Skip' | 'Wait' | 'Block';

/**
 * One pod of a node as the observeNode activity reports it ({@link NodeObservation}`.pods`, recorded
 * in histories): its classification (a `PodDecision` of src/drain/pods.ts, made by
 * `buildNodePods` in src/activities/node-pods.ts) with the pod's identity, the PDBs selecting it
 * and what a deletion at the deadline needs. The node workflow turns it into its own per-pod state
 * (`PodRecord`, `applyObservation` in src/drain/node/observation.ts). docs/design-decisions.md, "A pod's
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
 * Why the eviction subresource evicts a pod without checking its PodDisruptionBudget's
 * `disruptionsAllowed` (src/drain/eviction-gate.ts decides): NotRunning, a pod not Running
 * (Pending, Succeeded, Failed) or terminating; UnhealthyPodEvictionPolicy, a Running pod that is
 * not Ready, which its PDB's `unhealthyPodEvictionPolicy` lets go.
 */
export type PdbExemption = 'NotRunning' | 'UnhealthyPodEvictionPolicy';

/**
 * How a pod can be placed on a node while it is cordoned (src/drain/returning.ts decides):
 * ToleratesCordon, it tolerates `node.kubernetes.io/unschedulable:NoSchedule`; PinnedToNode, its
 * spec requires this very node.
 */
export type ReturnPlacement = 'ToleratesCordon' | 'PinnedToNode';

/**
 * What the `observeNode` activity (src/activities/types.ts) saw. `changed: false` carries no
 * payload (the caller's view is still true), which keeps unchanged observations small in the
 * workflow history.
 */
export type NodeObservation =
  | { changed: false; fingerprint: string }
  | {
      changed: true;
      /**
       * Hash of the material content below (pods with their decisions and PDBs, node existence and
       * schedulability), then of the PDBs' diagnoses when any (answerFingerprint).
       */
      fingerprint: string;
      /**
       * The node itself: whether it exists and whether `spec.unschedulable` is true; `released` when
       * it carries the annotation drainflow.dev/release=true (a per-node release, uncordon AfterEachNode);
       * `uid`, its `metadata.uid` when it exists (a Node deleted and created again under the same
       * name has another: it is another node).
       */
      node: { exists: boolean; unschedulable: boolean; released?: boolean; uid?: string };
      /** Every pod bound to the node (`spec.nodeName`), classified, sorted by key. Empty when the node does not exist. */
      pods: ObservedPod[];
      /** Every PDB matching at least one of `pods`, sorted by key. */
      pdbs: PdbObservation[];
    };

/** A PodDisruptionBudget as a node observation ({@link NodeObservation}) reports it. */
export interface PdbObservation {
  /** `namespace/name`. */
  key: string;
  /** status.disruptionsAllowed, or 0 when status.observedGeneration < metadata.generation. */
  disruptionsAllowed: number;
  /** metadata.resourceVersion of the PDB as observed (not part of the fingerprint). */
  resourceVersion?: string;
  /**
   * Why it blocks, when it allows no disruption and selects a pod of the node to evict: gathered
   * by the observeNode activity when it answers, and again when a block turns lasting while
   * nothing else changes (src/activities/pdb-diagnose.ts); part of the answer's fingerprint
   * (src/activities/node-pods.ts answerFingerprint), so such a change is an answer of its own.
   */
  diagnosis?: PdbDiagnosis;
}

/** Why a PDB can never allow a disruption (kind Never). */
export type NeverCause = 'MaxUnavailableZero' | 'MinAvailableAll' | 'SingleReplica' | 'NoScale';

/** A pod named in a diagnosis, with its state: Pending, NotReady, Terminating, or its phase. */
export interface DiagnosedPod {
  pod: string;
  node?: string;
  state: string;
}

/**
 * Why a PodDisruptionBudget blocks (src/drain/pdb-diagnosis.ts decides): JSON-plain, it travels in
 * observations, the node's state and the preflight report.
 */
export interface PdbDiagnosis {
  kind: DisruptionBlockKind;
  /** The PDB as `namespace/name`. */
  pdb: string;
  /** The pods' controller as `Kind namespace/name`, when known. */
  owner?: string;
  /** Never: why. */
  cause?: NeverCause;
  /** Pods expected (replicas) and pods the PDB wants healthy, as computed. */
  expected?: number;
  desired?: number;
  /** Transient: how many more pods must become Ready before it allows a disruption. */
  waitingFor?: number;
  /** UnhealthyElsewhere, ReplacementsUnschedulable: the pods (at most 3, src/drain/pdb-diagnosis.ts). */
  pods?: DiagnosedPod[];
  /** How many more such pods were not named. */
  morePods?: number;
  /** ReplacementsUnschedulable: the scheduler's message of the first Pending pod. */
  scheduler?: string;
  /** SpentByOthers: disruptions spent by others. */
  spent?: number;
  /** Never: the safe remedy, if any (src/drain/remedy.ts `rolloutRemedy`). */
  remedy?: RemedyFinding;
}

/** Why no safe remedy exists for a Never block (src/drain/remedy.ts). */
export type NoRemedyCause =
  /** The pods have no controller (or it is unknown). */
  | 'NoController'
  /** A StatefulSet deletes a pod before it creates its replacement: no surge. */
  | 'StatefulSet'
  /** Another controller (a ReplicaSet without Deployment, a Job, …): nothing rolls by surge. */
  | 'NotDeployment'
  /** The Deployment's strategy is Recreate: every pod goes before the new ones start. */
  | 'Recreate'
  /** The Deployment's rolling update may lower availability (computed maxUnavailable above 0, or maxSurge 0). */
  | 'LowersAvailability'
  /** The Deployment could not be read. */
  | 'Unknown';

/**
 * The safe remedy of a Never block: a rollout restart of the Deployment (`workload`:
 * `namespace/name`), or none, with why (and the Deployment's computed rollout bounds when read).
 */
export type RemedyFinding =
  | { kind: typeof RemedyKind.RolloutRestart; workload: string }
  | { kind: typeof RemedyKind.None; cause: NoRemedyCause; maxUnavailable?: number; maxSurge?: number };
