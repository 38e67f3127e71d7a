/**
 * The words of a PodDisruptionBudget diagnosis (src/drain/pdb-diagnosis.ts): the blocker message in
 * `status.nodes[].blockedBy[]`, the DisruptionBlocked condition and Warning Event, the preflight
 * report and `drainflow status`. Nothing compares them: a wording change changes no decision.
 *
 * PURE: no I/O, no clock.
 */
import { DisruptionBlockKind } from '../api/reasons.js';
import type { DiagnosedPod, NeverCause, PdbDiagnosis } from './pdb-diagnosis.js';
import type { NoRemedyCause, RemedyFinding } from './remedy.js';

/** Why a PDB can never allow a disruption, in words. */
const NEVER_WORDS: Record<NeverCause, (d: PdbDiagnosis) => string> = {
  MaxUnavailableZero: () => 'maxUnavailable is 0',
  MinAvailableAll: (d) => `minAvailable requires all ${d.expected ?? '?'} pod(s) to stay available`,
  SingleReplica: () => 'a single replica behind minAvailable: 1',
  NoScale: () =>
    'its pods have no controller with a scale, so the disruption controller cannot count the pods expected',
};

/** Why drainflow has no safe remedy, in words. */
const NO_REMEDY_WORDS: Record<NoRemedyCause, (r: RemedyFinding & { kind: 'None' }) => string> = {
  NoController: () => 'the pods have no controller',
  StatefulSet: () =>
    'a StatefulSet deletes a pod before it starts its replacement, so it cannot move by surge',
  NotDeployment: () => 'only a Deployment rolls by surge',
  Recreate: () => "the Deployment's strategy is Recreate, which removes the pods before starting new ones",
  LowersAvailability: (r) =>
    `the Deployment's rolling update may lower availability (computed maxUnavailable ${r.maxUnavailable ?? '?'}, maxSurge ${r.maxSurge ?? '?'}; it must be 0 and at least 1)`,
  Unknown: () => 'the Deployment could not be read',
};

/** What a Never block's remedy says: a rollout restart drainflow can make, or why none is safe. */
export function remedyWords(r: RemedyFinding | undefined): string {
  if (!r) return '';
  if (r.kind === 'RolloutRestart')
    return `; drainflow can move it by surge: a rollout restart of Deployment ${r.workload} (spec.remedies.rolloutRestart Approve or Auto)`;
  return `; no safe remedy by drainflow: ${NO_REMEDY_WORDS[r.cause](r)}`;
}

/** `ns/a on n2 (NotReady), ns/b (Pending) and 2 more`. */
export function diagnosedPodsWords(pods: readonly DiagnosedPod[] = [], more = 0): string {
  const list = pods.map((p) => `${p.pod}${p.node ? ` on ${p.node}` : ''} (${p.state})`).join(', ');
  return more > 0 ? `${list} and ${more} more` : list;
}

/** ` of Deployment ns/app` when the owner is known, else empty. */
function ofOwner(d: PdbDiagnosis): string {
  return d.owner ? ` of ${d.owner}` : '';
}

/**
 * The blocker message: what blocks and, for a block waiting does not fix, what a person can do.
 * E.g. `PodDisruptionBudget shop/web can never allow a disruption (Never: a single replica behind
 * minAvailable: 1) of Deployment shop/web: scale it up, relax the PodDisruptionBudget, or delete the pod`.
 */
export function diagnosisMessage(d: PdbDiagnosis): string {
  const pdb = `PodDisruptionBudget ${d.pdb}`;
  switch (d.kind) {
    case DisruptionBlockKind.Never:
      return `${pdb} can never allow a disruption (Never: ${NEVER_WORDS[d.cause ?? 'MinAvailableAll'](d)}) for the pods${ofOwner(d)}: a person must act (scale the owner up, relax the PodDisruptionBudget, or move the pod)${remedyWords(d.remedy)}`;
    case DisruptionBlockKind.ReplacementsUnschedulable:
      return `${pdb} waits for pods${ofOwner(d)} that cannot be scheduled (ReplacementsUnschedulable): ${diagnosedPodsWords(d.pods, d.morePods)}${d.scheduler ? `; the scheduler says "${d.scheduler}"` : ''}`;
    case DisruptionBlockKind.SpentByOthers:
      return `${pdb}'s budget is spent by ${d.spent ?? 1} eviction(s) not of this plan (SpentByOthers): another plan or tool disrupts pods${ofOwner(d)}`;
    case DisruptionBlockKind.UnhealthyElsewhere:
      return `${pdb} has fewer healthy pods than it wants (${d.desired ?? '?'}) because of pods${ofOwner(d)} on other nodes (UnhealthyElsewhere): ${diagnosedPodsWords(d.pods, d.morePods)}`;
    default:
      return `waiting for PodDisruptionBudget ${d.pdb} to allow a disruption (Transient: ${d.waitingFor ?? 1} more pod(s)${ofOwner(d)} must become Ready${d.pods?.length ? `; not Ready now: ${diagnosedPodsWords(d.pods, d.morePods)}` : ''})`;
  }
}

/** The DisruptionBlocked Warning Event's message: the node and pod, then {@link diagnosisMessage}. */
export function diagnosisEventMessage(node: string, pod: string, d: PdbDiagnosis): string {
  return `node ${node}: pod ${pod}: ${diagnosisMessage(d)}`;
}
