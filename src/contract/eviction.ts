/**
 * One Eviction API call: what the node drain asks for (src/activities/eviction.ts sends it, the
 * preflight sends it as a dry run) and what the API server answered, classified. The node drain's
 * reducers (src/drain/node/answers.ts) and the preflight report (src/drain/preflight.ts) take the answer in.
 *
 * Ground floor (src/contract): pure types, imports only API types.
 */
import type { BlockerReason } from '../api/reasons.js';

/** Input of the `evictPod` activity (src/activities/types.ts). */
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

/**
 * What one Eviction API call answered (CONTRIBUTING.md, "Eviction API answers, as observed"),
 * classified by status code and Status cause, never by message text.
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
