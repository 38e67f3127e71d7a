/**
 * Whether the API server checks a PodDisruptionBudget's `disruptionsAllowed` before it evicts a pod:
 * the one rule shared by the drain (src/drain/node/, through the observation of
 * src/activities/node-pods.ts) and the preflight report (src/drain/preflight.ts).
 *
 * The eviction subresource (k8s.io/kubernetes/pkg/registry/core/pod/storage/eviction.go) decides,
 * in this order:
 *
 * 1. `canIgnorePDB`: a pod whose `status.phase` is Pending, Succeeded or Failed, or that is already
 *    terminating (`metadata.deletionTimestamp` set), is deleted without looking at any PDB (not even
 *    at how many select it). Running and Unknown (and an absent phase) go on.
 * 2. No PDB selects the pod: deleted. More than one: refused (HTTP 500).
 * 3. The pod is not Ready (condition Ready not True, `podutil.IsPodReady`): deleted without
 *    touching the budget when the PDB's `spec.unhealthyPodEvictionPolicy` is `AlwaysAllow`, or
 *    when it is `IfHealthyBudget` (the default when absent) and `status.currentHealthy >=
 *    status.desiredHealthy` with `desiredHealthy > 0` (the guarded application is not disrupted).
 * 4. Otherwise the budget decides: refused (429) while the PDB's status is not in sync or
 *    `disruptionsAllowed` is 0, else one disruption is spent (the status is decremented) and the
 *    pod deleted.
 *
 * In cases 1 and 3 the eviction spends no disruption: the PDB's status is not written, and the
 * disruption controller, which counts only Ready pods in `currentHealthy`, computes the same
 * `disruptionsAllowed` once the pod is gone. So such an eviction needs no grant of the plan's
 * coordinated budget (src/drain/pdb-budget.ts) and is not counted against it.
 *
 * PURE and DETERMINISTIC: imported by workflow code.
 */
import type { PdbExemption } from '../contract/observation.js';
import type { PodInfo } from './pods.js';

/** The fields of a pod the rule reads. */
export interface GatePod {
  /** `status.phase`: Pending, Running, Succeeded, Failed, Unknown; absent is treated like Unknown. */
  phase?: string;
  /** Whether the condition Ready is True. */
  ready: boolean;
  /** Whether `metadata.deletionTimestamp` is set. */
  terminating?: boolean;
}

/** The fields of the one PodDisruptionBudget selecting the pod that the rule reads. */
export interface GatePdb {
  /** `spec.unhealthyPodEvictionPolicy`: `IfHealthyBudget` (also when absent) or `AlwaysAllow`. */
  unhealthyPodEvictionPolicy?: string;
  /** `status.currentHealthy`, pods (absent: 0). */
  currentHealthy?: number;
  /** `status.desiredHealthy`, pods (absent: 0). */
  desiredHealthy?: number;
}

/** The phases the eviction subresource evicts without a PDB check (`canIgnorePDB`). */
const NO_PDB_CHECK_PHASES: ReadonlySet<string> = new Set(['Pending', 'Succeeded', 'Failed']);

/**
 * Whether (and why) the eviction subresource evicts `pod` without checking a PDB's
 * `disruptionsAllowed` (see the module comment for the rules).
 *
 * @param pod the pod's phase, readiness and whether it is terminating.
 * @param pdbs the PDBs selecting the pod (0, 1 or more).
 * @returns the exemption, or `undefined` when the pod's eviction depends on the budget (one PDB),
 *   is refused whatever the budget (more than one PDB), or needs no PDB at all (none): the caller
 *   tells those apart by the number of PDBs.
 */
export function pdbExemption(pod: GatePod, pdbs: readonly GatePdb[]): PdbExemption | undefined {
  if (pod.terminating === true || (pod.phase !== undefined && NO_PDB_CHECK_PHASES.has(pod.phase)))
    return 'NotRunning';
  if (pdbs.length !== 1 || pod.ready) return undefined;
  const pdb = pdbs[0]!;
  if (pdb.unhealthyPodEvictionPolicy === 'AlwaysAllow') return 'UnhealthyPodEvictionPolicy';
  const desired = pdb.desiredHealthy ?? 0;
  if ((pdb.currentHealthy ?? 0) >= desired && desired > 0) return 'UnhealthyPodEvictionPolicy';
  return undefined;
}

/** Whether the pod's condition Ready is True (`podutil.IsPodReady`, what a PDB counts as healthy). */
export function isPodReady(pod: Pick<PodInfo, 'status'>): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** {@link pdbExemption} of a pod as classification reads it ({@link PodInfo}). */
export function exemptionOf(
  pod: Pick<PodInfo, 'metadata' | 'status'>,
  pdbs: readonly GatePdb[],
): PdbExemption | undefined {
  return pdbExemption(
    {
      ...(pod.status?.phase !== undefined ? { phase: pod.status.phase } : {}),
      ready: isPodReady(pod),
      terminating: pod.metadata.deletionTimestamp !== undefined,
    },
    pdbs,
  );
}
