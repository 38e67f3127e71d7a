/**
 * The "pods of a node with their PodDisruptionBudgets" view shared by the `listNodePods` and
 * `observeNode` activities: kubectl-drain classification ({@link classifyPods}), PDB matching as the
 * eviction subresource does it, and the fingerprint of an observation.
 *
 * Pure (no I/O, no clock); inputs may be typed client objects or raw watch JSON (times as `Date` or
 * RFC 3339 strings alike).
 */
import { createHash } from 'node:crypto';
import type { V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { LabelSelector, PodOrderRule, PodSelection } from '../api/plan.js';
import { podOrderOf } from '../drain/pod-policy.js';
import { classifyPods, controllerOf, toPodInfo } from '../drain/pods.js';
import { exemptionOf, isPodReady, type GatePdb } from '../drain/eviction-gate.js';
import { placementReturn } from '../drain/returning.js';
import { matchesLabelSelector } from '../drain/selector.js';
import type { NodePods } from './types.js';
import type { NodeObservation, PdbObservation, ObservedPod } from '../contract/observation.js';

/** The fields of a PodDisruptionBudget that {@link observedAllowed} reads. */
export interface PdbStatusFields {
  metadata?: { generation?: number; resourceVersion?: string };
  status?: { observedGeneration?: number; disruptionsAllowed?: number };
}

/**
 * status.disruptionsAllowed as the eviction subresource sees it: 0 while the disruption controller
 * has not observed the latest spec (status.observedGeneration < metadata.generation, or no status),
 * because the eviction subresource then refuses with 429 (pkg/registry/core/pod/storage/eviction.go,
 * "is still being processed by the server").
 *
 * @returns a count of pods; may be negative only if the server reports it so.
 */
export function observedAllowed(pdb: PdbStatusFields): number {
  const generation = pdb.metadata?.generation ?? 0;
  const observed = pdb.status?.observedGeneration ?? 0;
  if (pdb.status === undefined || observed < generation) return 0;
  return pdb.status.disruptionsAllowed ?? 0;
}

/** The fields of a PodDisruptionBudget the eviction gate reads (src/drain/eviction-gate.ts). */
export function gatePdb(pdb: Pick<V1PodDisruptionBudget, 'spec' | 'status'>): GatePdb {
  const out: GatePdb = {};
  if (pdb.spec?.unhealthyPodEvictionPolicy !== undefined)
    out.unhealthyPodEvictionPolicy = pdb.spec.unhealthyPodEvictionPolicy;
  if (pdb.status?.currentHealthy !== undefined) out.currentHealthy = pdb.status.currentHealthy;
  if (pdb.status?.desiredHealthy !== undefined) out.desiredHealthy = pdb.status.desiredHealthy;
  return out;
}

/**
 * Whether a policy/v1 PodDisruptionBudget's selector selects a pod with these labels, as the
 * eviction subresource and the disruption controller match it: a nil (absent) selector matches no
 * pod, an empty selector (`{}`) matches every pod of the PDB's namespace (policy/v1 semantics; in
 * policy/v1beta1 an empty selector matched nothing). The caller checks the namespace.
 */
export function pdbSelectsPod(
  pdb: Pick<V1PodDisruptionBudget, 'spec'>,
  podLabels: Record<string, string> | undefined,
): boolean {
  const selector = pdb.spec?.selector;
  if (selector === undefined || selector === null) return false;
  return matchesLabelSelector(podLabels, selector as LabelSelector);
}

/**
 * Classifies the pods of a node and matches them with the PDBs of their namespaces.
 *
 * @param pods every pod bound to the node (any order).
 * @param pdbsIn the PDBs of one namespace (called once per pod).
 * @param selection `spec.podSelection` with defaults applied.
 * @param order spec.podOrder and the labels of a namespace (`undefined` when unknown): each pod
 *   gets its order group ({@link podOrderOf}; set on the item when not 0).
 * @returns pods classified with kubectl drain's rules, sorted by namespace then name, each with the
 *   keys of the PDBs selecting it (sorted) and `deletionTimestampMs` (ms since epoch) when it is
 *   terminating; and every PDB selecting at least one of them, sorted by key, with
 *   {@link observedAllowed}.
 */
export function buildNodePods(
  pods: readonly V1Pod[],
  pdbsIn: (namespace: string) => readonly V1PodDisruptionBudget[],
  selection: PodSelection,
  order: {
    podOrder?: readonly PodOrderRule[];
    namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  } = {},
): NodePods {
  const infos = pods.map(toPodInfo);
  // Every pod is bound to the same node (the caller lists them by spec.nodeName).
  const nodeName = pods.find((p) => p.spec?.nodeName)?.spec?.nodeName ?? '';
  const decisions = classifyPods(infos, selection);
  const byKey = new Map(infos.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  const usedPdbs = new Map<string, PdbObservation>();
  const items: ObservedPod[] = decisions.map((d) => {
    const info = byKey.get(d.pod);
    const namespace = info?.metadata.namespace ?? d.pod.split('/')[0] ?? '';
    const name = info?.metadata.name ?? d.pod.slice(namespace.length + 1);
    const keys: string[] = [];
    const mine: GatePdb[] = [];
    for (const pdb of pdbsIn(namespace)) {
      if (!pdbSelectsPod(pdb, info?.metadata.labels)) continue;
      mine.push(gatePdb(pdb));
      const key = `${namespace}/${pdb.metadata?.name ?? ''}`;
      keys.push(key);
      const rv = pdb.metadata?.resourceVersion;
      if (!usedPdbs.has(key))
        usedPdbs.set(key, {
          key,
          disruptionsAllowed: observedAllowed(pdb),
          ...(rv !== undefined ? { resourceVersion: rv } : {}),
        });
    }
    keys.sort();
    const item: ObservedPod = {
      key: d.pod,
      namespace,
      name,
      uid: d.uid,
      action: d.action,
      reason: d.reason,
      message: d.message,
      pdbs: keys,
    };
    const podOrder = podOrderOf(
      {
        namespace,
        ...(info?.metadata.labels ? { labels: info.metadata.labels } : {}),
        ...(info?.spec?.priorityClassName !== undefined
          ? { priorityClassName: info.spec.priorityClassName }
          : {}),
      },
      order.podOrder,
      order.namespaceLabels,
    );
    if (podOrder !== 0) item.order = podOrder;
    if (info?.status?.phase !== undefined) item.phase = info.status.phase;
    if (info) item.ready = isPodReady(info);
    if (info) {
      const exempt = exemptionOf(info, mine);
      if (exempt !== undefined) item.pdbExempt = exempt;
    }
    const ctl = info ? controllerOf(info) : undefined;
    if (ctl) item.controller = { uid: ctl.uid, ref: `${ctl.kind} ${namespace}/${ctl.name}` };
    const returns = info?.spec ? placementReturn(info.spec, nodeName) : undefined;
    if (returns !== undefined) item.returns = returns;
    const grace = info?.spec?.terminationGracePeriodSeconds;
    if (grace !== undefined) item.terminationGracePeriodSeconds = grace;
    const deletion = info?.metadata.deletionTimestamp;
    if (deletion !== undefined) {
      const ms = Date.parse(deletion);
      if (Number.isFinite(ms)) item.deletionTimestampMs = ms;
    }
    return item;
  });
  return {
    pods: items,
    pdbs: [...usedPdbs.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  };
}

/**
 * `pdbs` plus the PDBs named in `keys` (`namespace/name`) that exist and are not in it yet, sorted
 * by key: PDBs a node drain still watches after its last pod behind them left.
 */
export function withRequestedPdbs(
  pdbs: PdbObservation[],
  keys: readonly string[] | undefined,
  pdbsIn: (namespace: string) => readonly V1PodDisruptionBudget[],
): PdbObservation[] {
  if (!keys?.length) return pdbs;
  const out = [...pdbs];
  for (const key of keys) {
    if (out.some((p) => p.key === key)) continue;
    const [namespace = '', name = ''] = key.split('/');
    const pdb = pdbsIn(namespace).find((p) => p.metadata?.name === name);
    if (!pdb) continue;
    const rv = pdb.metadata?.resourceVersion;
    out.push({
      key,
      disruptionsAllowed: observedAllowed(pdb),
      ...(rv !== undefined ? { resourceVersion: rv } : {}),
    });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The material content of a changed {@link NodeObservation}: everything but the fingerprint. */
export type ObservationContent = Omit<Extract<NodeObservation, { changed: true }>, 'changed' | 'fingerprint'>;

/** Hex digits of the sha256 kept in a fingerprint (64 bits). */
const FINGERPRINT_HEX_DIGITS = 16;

/** Hex digits of the sha256 of the diagnoses kept in an answer's fingerprint (32 bits). */
const DIAGNOSIS_HEX_DIGITS = 8;

/**
 * The fingerprint of an observeNode answer: the observation's ({@link observationFingerprint}),
 * then, when a PDB carries a diagnosis (src/activities/pdb-diagnose.ts), `-` and the first 8 hex
 * digits of the sha256 of the PDBs' keys and diagnoses. A diagnosis that changes while the pods and
 * PDBs do not (a block turned lasting and its pods were read) is so an answer of its own.
 */
export function answerFingerprint(observation: string, pdbs: readonly PdbObservation[]): string {
  const diagnosed = pdbs.filter((p) => p.diagnosis !== undefined).map((p) => [p.key, p.diagnosis]);
  if (diagnosed.length === 0) return observation;
  const digest = createHash('sha256').update(JSON.stringify(diagnosed)).digest('hex');
  return `${observation}-${digest.slice(0, DIAGNOSIS_HEX_DIGITS)}`;
}

/** The observation's part of an answer's fingerprint ({@link answerFingerprint}). */
export function observationPart(answer: string): string {
  return answer.split('-')[0] ?? answer;
}

/**
 * The fingerprint of an observation: the first 16 hex digits of the sha256 of a canonical JSON array
 * of exactly the material fields, in a fixed order: node exists and unschedulable (then `released`
 * when set, and the node's `metadata.uid` when known); per pod (in the
 * given order, which is sorted by key) key, uid, action, reason, pdbs, deletionTimestampMs (or null),
 * and the order group when set;
 * per PDB key and disruptionsAllowed (and its resourceVersion with `pdbVersions`: `true` for every
 * PDB, a list of keys for those only; with `listedOnly` and a list, the PDBs not in it are left out
 * altogether, allowance and version). Messages,
 * labels, annotations and other resourceVersions are not part of it, so updates that change no
 * decision (status heartbeats, annotations) keep it. A drain whose plan hands out PDB budgets asks
 * for `pdbVersions`: its reports must carry the PDB's current version, or the plan would take them
 * for stale ones (src/drain/pdb-budget.ts).
 */
export function observationFingerprint(
  content: ObservationContent,
  pdbVersions: boolean | readonly string[] = false,
  listedOnly = false,
): string {
  const listed = (key: string): boolean => Array.isArray(pdbVersions) && pdbVersions.includes(key);
  const versioned = (key: string): boolean => pdbVersions === true || listed(key);
  const material = (key: string): boolean => !listedOnly || !Array.isArray(pdbVersions) || listed(key);
  const canonical = JSON.stringify([
    // The node's uid: a Node created again under the name is a change.
    [
      content.node.exists,
      content.node.unschedulable,
      ...(content.node.released ? [true] : []),
      ...(content.node.uid !== undefined ? [content.node.uid] : []),
    ],
    content.pods.map((p) => {
      const base = [p.key, p.uid, p.action, p.reason, p.pdbs, p.deletionTimestampMs ?? null];
      const withOrder = p.order !== undefined ? [...base, p.order] : base;
      return p.pdbExempt !== undefined || p.returns !== undefined
        ? [...withOrder, p.pdbExempt ?? null, p.returns ?? null]
        : withOrder;
    }),
    content.pdbs
      .filter((p) => material(p.key))
      .map((p) =>
        versioned(p.key)
          ? [p.key, p.disruptionsAllowed, p.resourceVersion ?? null]
          : [p.key, p.disruptionsAllowed],
      ),
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, FINGERPRINT_HEX_DIGITS);
}
