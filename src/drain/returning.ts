/**
 * Pods that come back: a pod bound to the node after this plan cordoned it. A cordon
 * (`spec.unschedulable`, and the taint `node.kubernetes.io/unschedulable:NoSchedule` the node
 * lifecycle controller adds for it) keeps the scheduler from placing new pods on the node, so a pod
 * that is bound there after the cordon got there by one of:
 * - it tolerates that taint (`tolerations: [{operator: Exists}]`, common for agents and operators;
 *   the scheduler's NodeUnschedulable plugin then ignores the cordon);
 * - its controller creates it with `spec.nodeName` set (no scheduler at all), e.g. a pod template
 *   with `spec.nodeName`, or an operator that pins one pod per node;
 * - a DaemonSet (classified apart, src/drain/pods.ts).
 * Evicting such a pod only makes its controller put a new one back: `kubectl drain` lists the
 * node's pods once and evicts only those, Karpenter never evicts pods that tolerate its disruption
 * taint, Cluster API evicts at most once per pass. drainflow's rule (docs/design-decisions.md,
 * "Pods that come back"):
 *
 * 1. The pods of the first observation after the claim (cordon) are the node's pods "at cordon";
 *    per controller (ownerReference with `controller: true`, by UID) the drain counts them.
 * 2. A pod first seen later (a new UID, so also a StatefulSet pod re-created under its name) with a
 *    controller is a returning pod when it tolerates the cordon or is pinned to the node
 *    ({@link placementReturn}), or when this drain already evicted a pod of the same controller
 *    from the node (it came back, whatever put it there).
 * 3. Whatever the predicates miss, a controller's evictions that took effect (201) plus those in
 *    flight never exceed its pods at cordon plus {@link RETURN_SLACK}: a pod beyond that is a
 *    returning pod too.
 *
 * A returning pod is never evicted: it is listed in the node's `skipped` pods under reason
 * `ReturnsToNode`, one Warning Event goes out per node and controller, and the node ends `Drained`
 * once the other pods left (the returning ones run on; the admin decides, see the Event).
 *
 * PURE and DETERMINISTIC: imported by workflow code.
 */
import type { ReturnPlacement } from '../contract/observation.js';

/** The taint a cordon puts on a node (`v1.TaintNodeUnschedulable`). */
export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

/**
 * Evictions (answered 201, or in flight) of one controller's pods beyond its pods at cordon that
 * the drain still sends: a pod created by the controller after the cordon (e.g. a scale-up)
 * that has not come back yet is evicted once; the next one is a returning pod.
 */
export const RETURN_SLACK = 1;

/** A toleration (`v1.Toleration`, the fields matching reads). */
export interface PodToleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}

/** A node selector requirement (`v1.NodeSelectorRequirement`). */
export interface NodeRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** A node selector term (`v1.NodeSelectorTerm`): its requirements are ANDed. */
export interface NodeTerm {
  matchExpressions?: NodeRequirement[];
  matchFields?: NodeRequirement[];
}

/** What of a pod's spec says where it may run. */
export interface PodPlacement {
  tolerations?: PodToleration[];
  nodeSelector?: Record<string, string>;
  /** spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (ORed). */
  requiredNodeTerms?: NodeTerm[];
}

/**
 * Whether a toleration tolerates the cordon's taint `node.kubernetes.io/unschedulable:NoSchedule`
 * (`v1.Toleration.ToleratesTaint`): an empty key with operator Exists tolerates every taint; the
 * effect, when set, must be NoSchedule; Exists ignores the value, Equal (the default) needs the
 * taint's value, which is empty.
 */
export function toleratesCordon(t: PodToleration): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== 'NoSchedule') return false;
  const exists = t.operator === 'Exists';
  if (t.key === undefined || t.key === '') return exists;
  if (t.key !== UNSCHEDULABLE_TAINT) return false;
  return exists || (t.value ?? '') === '';
}

/** Whether a requirement admits exactly this node (by `metadata.name` or the hostname label). */
function requiresNode(r: NodeRequirement, node: string): boolean {
  return r.operator === 'In' && r.values?.length === 1 && r.values[0] === node;
}

/**
 * Whether the pod may run only on `node`: `spec.nodeSelector` `kubernetes.io/hostname: <node>`, or
 * every required node affinity term names it (`matchFields` `metadata.name In [node]`, as the
 * DaemonSet controller pins, or `matchExpressions` `kubernetes.io/hostname In [node]`). Assumes the
 * node's hostname label is its name (the kubelet's default).
 */
export function pinnedToNode(p: PodPlacement, node: string): boolean {
  if (p.nodeSelector?.['kubernetes.io/hostname'] === node) return true;
  const terms = p.requiredNodeTerms ?? [];
  return (
    terms.length > 0 &&
    terms.every(
      (t) =>
        (t.matchFields ?? []).some((r) => r.key === 'metadata.name' && requiresNode(r, node)) ||
        (t.matchExpressions ?? []).some((r) => r.key === 'kubernetes.io/hostname' && requiresNode(r, node)),
    )
  );
}

/**
 * Whether the pod's spec lets it be placed on `node` while the node is cordoned:
 * `PinnedToNode` when it tolerates the cordon and may run on this node only (it comes back here
 * for sure), `ToleratesCordon` when it tolerates the cordon (the scheduler may put it back here),
 * else `undefined` (a pod created with `spec.nodeName` shows nothing in its spec: rule 2's
 * "evicted already" catches it).
 */
export function placementReturn(p: PodPlacement, node: string): ReturnPlacement | undefined {
  if (!(p.tolerations ?? []).some(toleratesCordon)) return undefined;
  return pinnedToNode(p, node) ? 'PinnedToNode' : 'ToleratesCordon';
}

/** One controller of pods on the node, as the drain counts it. */
export interface ReturnOwner {
  /** `Kind namespace/name` of the controller. */
  owner: string;
  /** Its pods on the node at the first observation after the cordon. */
  atCordon: number;
  /** Evictions of its pods answered 201 (or that may have taken effect). */
  evicted: number;
  /** Its pods left on the node as returning now (its Warning is due while above 0). */
  returned?: number;
  /** Whether its Warning Event was recorded (once per node and controller). */
  warned?: boolean;
}

/** The drain's ledger of returning pods: JSON-plain, carried across continue-as-new. */
export interface ReturnLedger {
  /** Controller UID → its counts. */
  owners: Record<string, ReturnOwner>;
}

/** A pod of the node as the ledger reads it. */
export interface ReturnPod {
  /** UID of its controller (absent: no controller; such pods are never returning). */
  ownerUid?: string;
  /** `Kind namespace/name` of its controller. */
  owner?: string;
  /** {@link placementReturn} of its spec. */
  returns?: ReturnPlacement;
}

/** The ledger at the first observation after the cordon: each controller's pods there. */
export function startLedger(pods: readonly ReturnPod[]): ReturnLedger {
  const owners: Record<string, ReturnOwner> = {};
  for (const p of pods) {
    if (p.ownerUid === undefined) continue;
    const o = (owners[p.ownerUid] ??= { owner: p.owner ?? p.ownerUid, atCordon: 0, evicted: 0 });
    o.atCordon++;
  }
  return { owners };
}

/** The ledger's entry of a controller, made (with 0 pods at cordon) when it had none then. */
export function ownerEntry(l: ReturnLedger, ownerUid: string, owner: string | undefined): ReturnOwner {
  return (l.owners[ownerUid] ??= { owner: owner ?? ownerUid, atCordon: 0, evicted: 0 });
}

/**
 * Rule 2: whether a pod first seen after the cordon is a returning pod (never evicted).
 * @param pod a pod not on the node at the first observation after the cordon.
 */
export function returnsAfterCordon(l: ReturnLedger, pod: ReturnPod): boolean {
  if (pod.ownerUid === undefined) return false;
  return pod.returns !== undefined || (l.owners[pod.ownerUid]?.evicted ?? 0) > 0;
}

/**
 * Rule 3: whether one more eviction of a pod of this controller would exceed its bound (pods at
 * cordon + {@link RETURN_SLACK}), counting `inFlight` calls for its pods.
 */
export function evictionBoundReached(l: ReturnLedger, ownerUid: string, inFlight: number): boolean {
  const o = l.owners[ownerUid];
  if (!o) return false;
  return o.evicted + inFlight >= o.atCordon + RETURN_SLACK;
}

/** The words of a returning pod in the node's `skipped` list. */
export function returningPodMessage(owner: string, returns: ReturnPlacement | undefined): string {
  const why =
    returns === 'PinnedToNode'
      ? 'it tolerates the cordon (node.kubernetes.io/unschedulable) and is pinned to this node'
      : returns === 'ToleratesCordon'
        ? 'it tolerates the cordon (node.kubernetes.io/unschedulable)'
        : 'its controller put it back on the node after an eviction (e.g. spec.nodeName in its pod template)';
  return `bound to the node after the cordon by ${owner}: ${why}; not evicted again (it would come back)`;
}

/**
 * The Warning Events due: one per controller with returning pods whose Warning was not recorded
 * yet, sorted by controller. Does not mark them (the caller sets `warned` once it recorded the Event).
 */
export function returningWarnings(
  l: ReturnLedger | undefined,
  node: string,
): Array<{ ownerUid: string; message: string }> {
  if (!l) return [];
  return Object.entries(l.owners)
    .filter(([, o]) => (o.returned ?? 0) > 0 && !o.warned)
    .sort(([, a], [, b]) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0))
    .map(([ownerUid, o]) => ({
      ownerUid,
      message:
        `node ${node}: pods of ${o.owner} come back to the node after it was cordoned (they tolerate the ` +
        `cordon or are pinned to it): they are not evicted again, they are listed in the node's skipped pods ` +
        `(ReturnsToNode), and the node is drained without them. If they must not run there during the ` +
        `maintenance, scale the workload down, or drop its toleration of node.kubernetes.io/unschedulable or ` +
        `its spec.nodeName/node pinning.`,
    }));
}
