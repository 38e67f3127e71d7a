/**
 * What preflight reads from the API server, as plain JSON: a PodDisruptionBudget and the answer to
 * one dry-run eviction. Filled by src/activities/preflight.ts, read by the pure builder
 * (src/drain/preflight.ts). PURE: types only.
 */
import type { LabelSelector } from '../api/plan.js';

/** A PodDisruptionBudget as the builder reads it (plain JSON; see `toPreflightPdb` in src/activities/preflight.ts). */
export interface PreflightPdbInput {
  namespace: string;
  name: string;
  /** spec.selector; absent (nil) selects no pod, `{}` every pod of the namespace (policy/v1). */
  selector?: LabelSelector;
  /** metadata.generation. */
  generation?: number;
  /** Whether the PDB has a status at all (the disruption controller has not written one yet otherwise). */
  hasStatus: boolean;
  observedGeneration?: number;
  disruptionsAllowed?: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  /** status.expectedPods. */
  expectedPods?: number;
  /** spec.minAvailable / spec.maxUnavailable: an int or `"N%"` (src/drain/pdb-diagnosis.ts reads them). */
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  /** spec.unhealthyPodEvictionPolicy: IfHealthyBudget (the default when absent) or AlwaysAllow. */
  unhealthyPodEvictionPolicy?: string;
  /** status.conditions (the disruption controller sets DisruptionAllowed). */
  conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
}

/** The API server's answer to one dry-run eviction, as the builder reads it. */
export interface DryRunVerdict {
  verdict: 'Accepted' | 'Refused' | 'Gone' | 'Error';
  /** HTTP status code (absent: no answer). */
  code?: number;
  /** CamelCase reason of a refusal. */
  reason?: string;
  /** The PDB the server named (namespace/name). */
  pdb?: string;
  message?: string;
}
