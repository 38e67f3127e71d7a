/**
 * Preflight's warning about workloads whose pods come back to the cordoned node (the drain's rule:
 * src/drain/returning.ts, docs/design-decisions.md "Pods that come back"). A pod to evict comes
 * back when:
 *
 * - its controller's pod template sets `spec.nodeName` to this node (`NodeNameInTemplate`): the
 *   controller creates each replacement already bound to the node, no scheduler involved, so the
 *   cordon does not apply. The pod's own spec cannot show it (every bound pod has `spec.nodeName`):
 *   preflight reads the controller (ReplicaSet, StatefulSet, Job, ReplicationController; a
 *   ReplicaSet's template is its Deployment's, a Job's its CronJob's `jobTemplate`);
 * - it tolerates the cordon's taint `node.kubernetes.io/unschedulable` (`ToleratesCordon`), and
 *   may run on this node only (`PinnedToNode`): {@link placementReturn}.
 *
 * The drain evicts each such pod once, leaves its replacements (`ReturnsToNode`) and ends the node
 * `Drained` with them: a warning, never a blocker, so preflight's exit code stays what the drain
 * does. The warning names the workload an admin acts on (the Deployment of a ReplicaSet, the CronJob
 * of a Job, else the controller) and what they can do. A pod without a controller is never re-created,
 * so it never comes back.
 *
 * PURE and DETERMINISTIC: no I/O (src/activities/preflight-owners.ts reads the controllers).
 */
import { PREFLIGHT_LIST_CAP } from '../api/bounds.js';
import type { PreflightReturning } from '../api/preflight.js';
import { PreflightReason } from '../api/reasons.js';
import type { PodSelection } from '../api/plan.js';
import { classifyPods, podKey, type PodInfo, type PodOwnerReference } from './pods.js';
import { placementReturn } from './returning.js';

/** The kinds of controller preflight reads for their pod template, with their API group. */
export const TEMPLATE_OWNER_KINDS = {
  ReplicaSet: 'apps',
  StatefulSet: 'apps',
  Job: 'batch',
  ReplicationController: '',
} as const;
/** A kind of {@link TEMPLATE_OWNER_KINDS}. */
export type TemplateOwnerKind = keyof typeof TEMPLATE_OWNER_KINDS;

/** One controller to read: the pod's controller ownerReference with its namespace. */
export interface OwnerRef {
  kind: TemplateOwnerKind;
  namespace: string;
  name: string;
  uid: string;
}

/** A controller as preflight reads it (plain JSON; see `toPreflightOwner`). */
export interface PreflightOwner {
  /** `Kind namespace/name` of the workload an admin acts on (a ReplicaSet's Deployment, a Job's CronJob, else the controller). */
  workload: string;
  /** spec.template.spec.nodeName of the controller (absent: the scheduler places its pods). */
  templateNodeName?: string;
}

/** Why a workload's pods come back: a value of {@link PreflightReason} (NodeNameInTemplate, PinnedToNode, ToleratesCordon). */
export type ReturnReason =
  | typeof PreflightReason.NodeNameInTemplate
  | typeof PreflightReason.PinnedToNode
  | typeof PreflightReason.ToleratesCordon;

/** A pod's controller ownerReference (`controller: true`), if any. */
export function controllerOf(pod: PodInfo): PodOwnerReference | undefined {
  return pod.metadata.ownerReferences?.find((r) => r.controller === true);
}

const isTemplateKind = (kind: string): kind is TemplateOwnerKind => Object.hasOwn(TEMPLATE_OWNER_KINDS, kind);

/**
 * The controllers to read for the node's pods that a drain would evict (`Evict` decisions under
 * `selection`): one per distinct controller UID of a kind in {@link TEMPLATE_OWNER_KINDS}, sorted.
 */
export function ownersToRead(pods: readonly PodInfo[], selection: PodSelection): OwnerRef[] {
  const byKey = new Map(pods.map((p) => [podKey(p), p]));
  const out = new Map<string, OwnerRef>();
  for (const d of classifyPods(pods, selection)) {
    if (d.action !== 'Evict') continue;
    const pod = byKey.get(d.pod)!;
    const ref = controllerOf(pod);
    if (!ref || !isTemplateKind(ref.kind) || out.has(ref.uid)) continue;
    out.set(ref.uid, { kind: ref.kind, namespace: pod.metadata.namespace, name: ref.name, uid: ref.uid });
  }
  return [...out.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
}

/** A controller object as read from the API server (the fields {@link toPreflightOwner} reads). */
export interface ControllerObject {
  metadata?: { ownerReferences?: Array<{ kind: string; name: string; controller?: boolean }> };
  spec?: { template?: { spec?: { nodeName?: string } } };
}

/**
 * A controller read from the API server, as the report reads it: its workload is the object's own
 * controller when that is a Deployment (of a ReplicaSet) or a CronJob (of a Job), else itself.
 */
export function toPreflightOwner(ref: OwnerRef, obj: ControllerObject): PreflightOwner {
  const up = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
  const lifted =
    up &&
    ((ref.kind === 'ReplicaSet' && up.kind === 'Deployment') ||
      (ref.kind === 'Job' && up.kind === 'CronJob'));
  const workload = lifted
    ? `${up.kind} ${ref.namespace}/${up.name}`
    : `${ref.kind} ${ref.namespace}/${ref.name}`;
  const nodeName = obj.spec?.template?.spec?.nodeName;
  return { workload, ...(nodeName ? { templateNodeName: nodeName } : {}) };
}

/**
 * Why the pod would come back to `node` after its eviction, if it would: `NodeNameInTemplate`
 * when its controller's template pins it there, else {@link placementReturn}'s answer; never for a
 * pod without a controller.
 *
 * @param owners the controllers read, by UID (a controller not read: its template is not checked).
 */
export function returnReason(
  pod: PodInfo,
  node: string,
  owners: Readonly<Record<string, PreflightOwner>> | undefined,
): ReturnReason | undefined {
  const ref = controllerOf(pod);
  if (!ref) return undefined;
  if (owners?.[ref.uid]?.templateNodeName === node) return PreflightReason.NodeNameInTemplate;
  return pod.spec ? placementReturn(pod.spec, node) : undefined;
}

/** The workload of a pod's controller: as read, else `Kind namespace/name` of the controller itself. */
function workloadOf(pod: PodInfo, owners: Readonly<Record<string, PreflightOwner>> | undefined): string {
  const ref = controllerOf(pod)!;
  return owners?.[ref.uid]?.workload ?? `${ref.kind} ${pod.metadata.namespace}/${ref.name}`;
}

/** The warning's words for `pods` pods of `workload` that come back for `reason`. */
export function returningMessage(workload: string, reason: ReturnReason, node: string, pods: number): string {
  const drain =
    `the drain evicts its ${pods} pod(s) on the node once and leaves the replacements that come back ` +
    `(ReturnsToNode; the node ends Drained with them)`;
  switch (reason) {
    case PreflightReason.NodeNameInTemplate:
      return (
        `${workload}: its pod template sets spec.nodeName: ${node}, so its controller creates each ` +
        `replacement bound to the node, past the cordon: ${drain}. To move it off during the ` +
        `maintenance, scale it down, or replace spec.nodeName with node affinity (the scheduler respects the cordon)`
      );
    case PreflightReason.PinnedToNode:
      return (
        `${workload}: its pods tolerate the cordon (node.kubernetes.io/unschedulable) and may run on ` +
        `this node only, so each replacement comes back: ${drain}. To move it off, scale it down, or drop ` +
        `its toleration of the cordon or its node pinning`
      );
    case PreflightReason.ToleratesCordon:
      return (
        `${workload}: its pods tolerate the cordon (node.kubernetes.io/unschedulable, e.g. tolerations ` +
        `[{operator: Exists}]), so the scheduler may put a replacement back on the node: ${drain}. To ` +
        `keep them off, scale it down or narrow its toleration`
      );
  }
}

/** What the report builder (src/drain/preflight.ts) gets about the node's pods' controllers. */
export interface ReturningInput {
  /** The controllers read, by UID (a controller not read: its template is not checked). */
  owners?: Readonly<Record<string, PreflightOwner>>;
  /** Controllers that could not be read (e.g. no RBAC get on their kind). */
  ownersUnread?: number;
}

/**
 * The node report's fields on pods that come back: `podsReturning` and the `returning` workloads
 * (absent when none), `ownersUnread` (absent when 0).
 */
export function returningFields(
  pods: ReturningPod[],
  input: ReturningInput & { node: string },
): { podsReturning?: number; returning?: PreflightReturning[]; ownersUnread?: number } {
  return {
    ...(pods.length
      ? { podsReturning: pods.length, returning: returningWorkloads(pods, input.node, input.owners) }
      : {}),
    ...(input.ownersUnread ? { ownersUnread: input.ownersUnread } : {}),
  };
}

/** A pod to evict that would come back, with why. */
export interface ReturningPod {
  pod: PodInfo;
  reason: ReturnReason;
}

/**
 * The node's workloads whose pods come back, one entry per workload and reason, sorted by
 * workload, capped at {@link PREFLIGHT_LIST_CAP}.
 *
 * @param pods the pods to evict that come back, each with its {@link returnReason}.
 */
export function returningWorkloads(
  pods: readonly ReturningPod[],
  node: string,
  owners: Readonly<Record<string, PreflightOwner>> | undefined,
): PreflightReturning[] {
  const groups = new Map<string, { workload: string; reason: ReturnReason; pods: number }>();
  for (const { pod, reason } of pods) {
    const workload = workloadOf(pod, owners);
    const key = `${workload}\u0000${reason}`;
    const g = groups.get(key) ?? { workload, reason, pods: 0 };
    g.pods++;
    groups.set(key, g);
  }
  return [...groups.values()]
    .sort((a, b) =>
      a.workload < b.workload ? -1 : a.workload > b.workload ? 1 : a.reason < b.reason ? -1 : 1,
    )
    .slice(0, PREFLIGHT_LIST_CAP)
    .map((g) => ({ ...g, message: returningMessage(g.workload, g.reason, node, g.pods) }));
}

/**
 * The summary's clause on pods that come back (empty when none): how many, of how many
 * workloads (as listed), by reason, and what the drain does with them; and how many controllers
 * could not be read.
 *
 * @param nodes the nodes' reports (their `podsReturning` and `returning` lists).
 */
export function returningClause(
  nodes: ReadonlyArray<{ podsReturning?: number; returning?: PreflightReturning[]; ownersUnread?: number }>,
): string {
  const unread = nodes.reduce((a, n) => a + (n.ownersUnread ?? 0), 0);
  const unreadClause = unread
    ? `; ${unread} controller(s) of pods to evict could not be read (RBAC get on replicasets, statefulsets, jobs, replicationcontrollers): their pod templates were not checked for spec.nodeName`
    : '';
  const pods = nodes.reduce((a, n) => a + (n.podsReturning ?? 0), 0);
  if (pods === 0) return unreadClause;
  const byReason = new Map<string, number>();
  const workloads = new Set<string>();
  for (const n of nodes)
    for (const r of n.returning ?? []) {
      byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + r.pods);
      workloads.add(r.workload);
    }
  const reasons = [...byReason.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([r, n]) => `${n} ${r}`)
    .join(', ');
  return (
    `; warning: ${pods} pod(s) of ${workloads.size} workload(s) would come back to their node after ` +
    `their eviction (ReturnsToNode: ${reasons}): the drain evicts them once, leaves those that come back ` +
    `and ends the node Drained with them (see each node's returning workloads)` +
    unreadClause
  );
}
