/**
 * Why a PodDisruptionBudget blocks a pod: the kind of block ({@link DisruptionBlockKind}) from the
 * PDB's spec and status, the pods it selects (on any node) and their owner. The observeNode and
 * preflight activities gather the inputs; the words are in ./pdb-diagnosis-words.ts.
 *
 * How Kubernetes computes the status read here (pkg/controller/disruption/disruption.go,
 * `getExpectedPodCount` and `updatePdbStatus`): with `maxUnavailable` (int or percent) or a percent
 * `minAvailable`, `expectedPods` is the sum of the scales of the pods' controllers and
 * `desiredHealthy` is `expected - maxUnavailable` (the percent rounded up) or
 * `ceil(minAvailable% × expected)`; with an integer `minAvailable`, `expectedPods` is the number of
 * pods selected and `desiredHealthy` is `minAvailable`. `disruptionsAllowed` is
 * `max(0, currentHealthy - desiredHealthy)`, where `currentHealthy` counts the Ready pods not being
 * disrupted. Pods whose controller has no scale make the controller give up (`disruptionsAllowed` 0).
 *
 * PURE and DETERMINISTIC: no I/O, no clock. Imported by workflow code (through the node state).
 */
import { DisruptionBlockKind } from '../api/reasons.js';
import type { DiagnosedPod, NeverCause, PdbDiagnosis } from '../contract/observation.js';
import { rolloutRemedy, type DeploymentShape } from './remedy.js';

export type { DiagnosedPod, NeverCause, PdbDiagnosis };

/** Pods named at most in an UnhealthyElsewhere diagnosis. */
export const DIAGNOSIS_POD_CAP = 3;

/** The fields of a PDB's spec the diagnosis reads (`minAvailable`/`maxUnavailable`: an int or `"N%"`). */
export interface DiagnosisPdbSpec {
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  /** IfHealthyBudget (default) or AlwaysAllow. */
  unhealthyPodEvictionPolicy?: string;
}

/** The fields of a PDB's status the diagnosis reads (counts of pods). */
export interface DiagnosisPdbStatus {
  disruptionsAllowed: number;
  currentHealthy?: number;
  desiredHealthy?: number;
  expectedPods?: number;
}

/** One pod the PDB selects, on any node. */
export interface DiagnosisPod {
  /** `namespace/name`. */
  key: string;
  /** spec.nodeName; absent while unscheduled. */
  node?: string;
  /** status.phase. */
  phase?: string;
  /** Whether its condition Ready is True. */
  ready: boolean;
  /** Whether it has a deletionTimestamp. */
  terminating?: boolean;
  /** Its PodScheduled condition when False: the scheduler's reason (e.g. Unschedulable) and message. */
  unschedulable?: { reason?: string; message?: string };
}

/** What {@link diagnosePdb} classifies. */
export interface DiagnosisInput {
  /** The PDB as `namespace/name`, its spec and status. */
  pdb: { key: string; spec: DiagnosisPdbSpec; status: DiagnosisPdbStatus };
  /** The node being drained. */
  node: string;
  /** The blocked pod (`namespace/name`), when one is meant: a not-Ready one may be exempt. */
  pod?: string;
  /** Every pod the PDB selects (any node). */
  pods: readonly DiagnosisPod[];
  /**
   * The pods' controller as `Kind namespace/name` (a ReplicaSet's Deployment) and its
   * `spec.replicas` when known; `deployment`, the Deployment's replicas and strategy when read (a
   * Never block's remedy, src/drain/remedy.ts).
   */
  owner?: { ref: string; replicas?: number; deployment?: DeploymentShape };
  /**
   * Disruptions spent: evictions of this plan (pods on its nodes) and of others (pods elsewhere
   * terminating or listed in status.disruptedPods), still counted against the budget.
   */
  spent?: { byPlan: number; byOthers: number };
}

/** A PDB's spec and status fields as {@link DiagnosisInput} reads them, from flat fields (absent ones left out). */
export function pdbFields(
  p: DiagnosisPdbSpec & Omit<DiagnosisPdbStatus, 'disruptionsAllowed'>,
  allowed: number,
): { spec: DiagnosisPdbSpec; status: DiagnosisPdbStatus } {
  const pick = <K extends keyof typeof p>(k: K) => (p[k] !== undefined ? { [k]: p[k] } : {});
  return {
    spec: { ...pick('minAvailable'), ...pick('maxUnavailable'), ...pick('unhealthyPodEvictionPolicy') },
    status: {
      disruptionsAllowed: allowed,
      ...pick('currentHealthy'),
      ...pick('desiredHealthy'),
      ...pick('expectedPods'),
    },
  };
}

/** `"N%"` → N, an int → undefined; undefined for anything else. */
function percent(v: number | string | undefined): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+)%$/.exec(v.trim());
  return m ? Number(m[1]) : undefined;
}

/**
 * An int-or-percent scaled against `total` as Kubernetes does (`intstr.GetScaledValueFromIntOrPercent`):
 * an int as is, a percent of `total` rounded up or down; undefined when neither.
 */
export function scaled(v: number | string | undefined, total: number, roundUp: boolean): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d+$/.test(v.trim())) return Number(v);
  const p = percent(v);
  if (p === undefined) return undefined;
  const x = (p * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/** Whether the disruption controller counts pods through their controllers' scale (not by listing). */
function usesScale(spec: DiagnosisPdbSpec): boolean {
  return spec.maxUnavailable !== undefined || percent(spec.minAvailable) !== undefined;
}

/** The expected pods and the pods wanted healthy, from the spec (status as the fallback). */
export function budgetShape(input: DiagnosisInput): { expected: number; desired: number } {
  const { spec, status } = input.pdb;
  const live = input.pods.filter((p) => !p.terminating).length;
  const expected = input.owner?.replicas ?? status.expectedPods ?? live;
  let desired: number | undefined;
  if (spec.maxUnavailable !== undefined) {
    const max = scaled(spec.maxUnavailable, expected, true);
    if (max !== undefined) desired = Math.max(0, expected - max);
  } else if (spec.minAvailable !== undefined) desired = scaled(spec.minAvailable, expected, true);
  return { expected, desired: desired ?? status.desiredHealthy ?? 0 };
}

/** Why the budget can never free on its own, if it cannot. */
function neverCause(input: DiagnosisInput, expected: number, desired: number): NeverCause | undefined {
  const { spec, status } = input.pdb;
  const live = input.pods.filter((p) => !p.terminating).length;
  // No controller with a scale: the controller cannot count the expected pods (expectedPods 0).
  if (usesScale(spec) && input.owner?.replicas === undefined && (status.expectedPods ?? 0) === 0 && live > 0)
    return 'NoScale';
  if (expected <= 0) return undefined;
  if (spec.maxUnavailable !== undefined && scaled(spec.maxUnavailable, expected, true) === 0)
    return 'MaxUnavailableZero';
  if (desired < expected) return undefined;
  if (percent(spec.minAvailable) === 100 || expected > 1) return 'MinAvailableAll';
  return 'SingleReplica';
}

/** A pod's state as a diagnosis names it. */
function stateOf(p: DiagnosisPod): string {
  if (p.terminating) return 'Terminating';
  if (p.phase === 'Pending' || p.phase === undefined) return 'Pending';
  if (p.phase === 'Running') return 'NotReady';
  return p.phase;
}

/** Names at most {@link DIAGNOSIS_POD_CAP} pods, sorted by key. */
function named(pods: DiagnosisPod[]): { pods: DiagnosedPod[]; morePods?: number } {
  const sorted = [...pods].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const out = sorted.slice(0, DIAGNOSIS_POD_CAP).map((p) => ({
    pod: p.key,
    ...(p.node ? { node: p.node } : {}),
    state: stateOf(p),
  }));
  const more = sorted.length - out.length;
  return { pods: out, ...(more > 0 ? { morePods: more } : {}) };
}

/**
 * Classifies why the PDB blocks (see the module comment for the status it reads), in this order:
 *
 * 1. nothing when it allows a disruption, or when the blocked pod is not Ready and the API server
 *    evicts it anyway (`unhealthyPodEvictionPolicy: AlwaysAllow`, or the default with the budget met);
 * 2. Never: `maxUnavailable` 0 (or 0%), `minAvailable` at or above the expected pods (100%, or a
 *    single replica behind `minAvailable: 1`), or a scale-based PDB whose pods have no scale;
 * 3. ReplacementsUnschedulable: a pod behind it is Pending with PodScheduled False;
 * 4. SpentByOthers: disruptions spent by evictions not of this plan;
 * 5. UnhealthyElsewhere: `currentHealthy < desiredHealthy` with pods on other nodes not Ready;
 * 6. Transient: `desiredHealthy + 1 - currentHealthy` more pods must become Ready (naming the pods
 *    on other nodes not Ready now, if any).
 */
export function diagnosePdb(input: DiagnosisInput): PdbDiagnosis | undefined {
  const { pdb, node } = input;
  const { status, spec } = pdb;
  if (status.disruptionsAllowed > 0) return undefined;
  const { expected, desired } = budgetShape(input);
  const current = status.currentHealthy ?? input.pods.filter((p) => p.ready && !p.terminating).length;
  const self = input.pod !== undefined ? input.pods.find((p) => p.key === input.pod) : undefined;
  if (self && !self.ready && !self.terminating) {
    const policy = spec.unhealthyPodEvictionPolicy ?? 'IfHealthyBudget';
    const wanted = status.desiredHealthy ?? desired;
    // pkg/registry/core/pod/storage/eviction.go: an unhealthy pod goes when the budget is met.
    if (policy === 'AlwaysAllow' || (wanted > 0 && current >= wanted)) return undefined;
  }
  const base = { pdb: pdb.key, ...(input.owner ? { owner: input.owner.ref } : {}), expected, desired };
  const cause = neverCause(input, expected, desired);
  if (cause)
    return {
      kind: DisruptionBlockKind.Never,
      ...base,
      cause,
      remedy: rolloutRemedy(input.owner?.ref, input.owner?.deployment),
    };

  const pending = input.pods.filter((p) => !p.terminating && p.unschedulable !== undefined);
  if (pending.length > 0) {
    const first = [...pending].sort((a, b) => (a.key < b.key ? -1 : 1))[0]!;
    const msg = first.unschedulable?.message ?? first.unschedulable?.reason;
    return {
      kind: DisruptionBlockKind.ReplacementsUnschedulable,
      ...base,
      ...named(pending),
      ...(msg ? { scheduler: msg } : {}),
    };
  }
  if ((input.spent?.byOthers ?? 0) > 0)
    return { kind: DisruptionBlockKind.SpentByOthers, ...base, spent: input.spent!.byOthers };

  const wanted = status.desiredHealthy ?? desired;
  const elsewhere = input.pods.filter((p) => !p.terminating && !p.ready && p.node !== node);
  if (current < wanted && elsewhere.length > 0)
    return { kind: DisruptionBlockKind.UnhealthyElsewhere, ...base, ...named(elsewhere) };
  // Transient still names the pods not Ready elsewhere: they are what the budget waits for (a
  // replacement starting, or a pod that was not Ready before the drain; which one cannot be told
  // from the PDB alone).
  return {
    kind: DisruptionBlockKind.Transient,
    ...base,
    waitingFor: Math.max(1, wanted + 1 - current),
    ...(elsewhere.length > 0 ? named(elsewhere) : {}),
  };
}

/** What a worker remembers of one PDB between observations (src/activities/pdb-diagnose.ts). */
export interface DiagnosisMemo {
  /**
   * When this worker first saw the PDB allow no disruption (ms since epoch), since it last saw it
   * allow one; absent while it allows.
   */
  blockedSinceMs?: number;
  /** The last diagnosis made from the PDB's pods (undefined: nothing to say), and when (ms since epoch). */
  read?: { atMs: number; d: PdbDiagnosis | undefined };
}

/**
 * How a blocked PDB is diagnosed now: `quick` from its own spec and status only (no read: it shows
 * a Never block, nothing else), `read` from its pods (a LIST of the namespace, the owner's scale),
 * or `reuse` the last read.
 *
 * Why: a PDB that paces a drain allows no disruption for the few seconds each replacement takes to
 * become Ready, over and over. Reading its pods at each of those blocks cost the API server more
 * than the evictions (the fleet benchmark: 5 times the LIST requests, 3 times the status writes,
 * as the blocker's words changed with each count). A block is read only once it has lasted
 * `lastingMs` (a pacing PDB frees well before), and a read is reused for `ttlMs`, whatever the
 * PDB's status writes meanwhile.
 * @param nowMs, lastingMs, ttlMs: ms (epoch, durations).
 */
export function diagnosisStep(
  memo: DiagnosisMemo,
  nowMs: number,
  lastingMs: number,
  ttlMs: number,
): 'quick' | 'read' | 'reuse' {
  const since = memo.blockedSinceMs ?? nowMs;
  if (nowMs - since < lastingMs) return 'quick';
  if (memo.read && memo.read.atMs >= since && nowMs - memo.read.atMs < ttlMs) return 'reuse';
  return 'read';
}

/**
 * When {@link diagnosisStep} next answers otherwise than now for this PDB, so that a watch that
 * sees no change looks again then (a lasting block is read once it lasted `lastingMs`, and read
 * again when that read is `ttlMs` old): `blockedSinceMs + lastingMs` until the block has been
 * read, then the read's time + `ttlMs`. Undefined while the PDB is not blocked. ms since epoch.
 * @param lastingMs, ttlMs: ms.
 */
export function diagnosisDueMs(memo: DiagnosisMemo, lastingMs: number, ttlMs: number): number | undefined {
  const since = memo.blockedSinceMs;
  if (since === undefined) return undefined;
  if (memo.read && memo.read.atMs >= since) return memo.read.atMs + ttlMs;
  return since + lastingMs;
}
