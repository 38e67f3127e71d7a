/**
 * Per-pod drain policy: order groups (spec.podOrder and the default split of critical pods), the
 * opt-out labels (`drainflow.dev/drain`, Cluster API's `cluster.x-k8s.io/drain`), Karpenter's
 * `karpenter.sh/do-not-disrupt` annotation, and kubectl's skip-wait-for-delete timeout.
 *
 * Where the rules come from:
 * - Order groups follow Cluster API's MachineDrainRule (`drain.order`, an int32, default 0): the pods
 *   of a node are grouped by order and the groups are drained by increasing order, each one only
 *   after every pod of the lower groups is gone; when several rules match a pod, one counts (Cluster
 *   API: the first by name; here: the first entry of spec.podOrder). A rule's pod selector and
 *   namespace selector are ANDed, an absent one matches everything.
 * - The default split follows Karpenter's termination order: non-critical pods first, then pods of
 *   priority class `system-cluster-critical` or `system-node-critical`. Here such a pod that no
 *   spec.podOrder entry matches gets order {@link CRITICAL_POD_ORDER}.
 * - The label values are Cluster API's (`skip`, `wait-completed`; Cluster API accepts no other
 *   value). A pod with another value is treated as if it had no label.
 * - `karpenter.sh/do-not-disrupt: "true"` is an annotation in Karpenter (only the value `true` counts).
 * - kubectl drain's `--skip-wait-for-delete-timeout=N` (filters.go `skipDeletedFilter`) skips pods
 *   whose deletionTimestamp is more than N seconds old.
 *
 * PURE and DETERMINISTIC: imported by workflow code. No I/O, no clock.
 */
import type { LabelSelector, PodOrderRule } from '../api/plan.js';
import { matchesLabelSelector } from './selector.js';

/** drainflow's own opt-out label on a pod: value `skip` or `wait-completed`. */
export const DRAIN_LABEL = 'drainflow.dev/drain';
/** Cluster API's opt-out label (`PodDrainLabel`), honoured the same way. */
export const CAPI_DRAIN_LABEL = 'cluster.x-k8s.io/drain';
/** Karpenter's annotation that keeps a pod from being disrupted (value `"true"`). */
export const DO_NOT_DISRUPT_ANNOTATION = 'karpenter.sh/do-not-disrupt';
/** Priority classes Kubernetes ships for critical system pods (drained last by default). */
export const CRITICAL_PRIORITY_CLASSES: readonly string[] = [
  'system-cluster-critical',
  'system-node-critical',
];
/** The order of a critical pod that no spec.podOrder entry matches (other pods: 0). */
export const CRITICAL_POD_ORDER = 1000;
/** How many pods status.nodes[].skipped lists at most. */
export const SKIPPED_POD_CAP = 20;

/** An opt-out found on a pod: its value and the label that carried it. */
export interface DrainOptOut {
  value: 'skip' | 'wait-completed';
  label: string;
}

/**
 * The opt-out label of a pod: `drainflow.dev/drain` first, then `cluster.x-k8s.io/drain`; a label
 * with any other value than `skip` or `wait-completed` does not count (the next one is looked at).
 */
export function drainOptOut(labels: Record<string, string> | undefined): DrainOptOut | undefined {
  for (const label of [DRAIN_LABEL, CAPI_DRAIN_LABEL]) {
    const v = labels?.[label];
    if (v === 'skip' || v === 'wait-completed') return { value: v, label };
  }
  return undefined;
}

/** Whether the pod carries `karpenter.sh/do-not-disrupt: "true"`. */
export function hasDoNotDisrupt(annotations: Record<string, string> | undefined): boolean {
  return annotations?.[DO_NOT_DISRUPT_ANNOTATION] === 'true';
}

/** What {@link podOrderOf} reads of a pod. */
export interface OrderedPod {
  namespace: string;
  labels?: Record<string, string>;
  priorityClassName?: string;
}

/**
 * The order group of a pod: the `order` of the first spec.podOrder entry whose podSelector matches
 * the pod's labels AND whose namespaceSelector matches its namespace's labels (an absent selector
 * matches all); else {@link CRITICAL_POD_ORDER} for a pod of a critical priority class, else 0.
 *
 * @param namespaceLabels the labels of a namespace, `undefined` when unknown (then a rule with a
 *   namespaceSelector does not match, except that `kubernetes.io/metadata.name` is always known).
 */
export function podOrderOf(
  pod: OrderedPod,
  rules: readonly PodOrderRule[] | undefined,
  namespaceLabels: (namespace: string) => Record<string, string> | undefined = () => undefined,
): number {
  for (const r of rules ?? []) {
    if (r.podSelector && !matchesLabelSelector(pod.labels, r.podSelector)) continue;
    if (r.namespaceSelector && !namespaceMatches(pod.namespace, r.namespaceSelector, namespaceLabels))
      continue;
    return r.order;
  }
  return pod.priorityClassName !== undefined && CRITICAL_PRIORITY_CLASSES.includes(pod.priorityClassName)
    ? CRITICAL_POD_ORDER
    : 0;
}

function namespaceMatches(
  namespace: string,
  selector: LabelSelector,
  namespaceLabels: (namespace: string) => Record<string, string> | undefined,
): boolean {
  // Every namespace carries its name as label kubernetes.io/metadata.name (since Kubernetes 1.21).
  const labels = { ...(namespaceLabels(namespace) ?? {}), 'kubernetes.io/metadata.name': namespace };
  return matchesLabelSelector(labels, selector);
}

/** Whether any entry of spec.podOrder needs the namespaces' labels (beyond their names). */
export function needsNamespaceLabels(rules: readonly PodOrderRule[] | undefined): boolean {
  return (rules ?? []).some((r) => r.namespaceSelector !== undefined);
}

/**
 * The order group to drain now: the lowest order among the pods still to leave (`undefined` when
 * none). Pods blocked, waited for or terminating count: a group is gone before the next starts.
 */
export function currentOrderGroup(orders: Iterable<number | undefined>): number | undefined {
  let min: number | undefined;
  for (const o of orders) {
    const v = o ?? 0;
    if (min === undefined || v < min) min = v;
  }
  return min;
}

/**
 * When a terminating pod counts as gone under eviction.skipWaitForDeleteTimeoutSeconds, ms since
 * epoch: `timeoutSeconds` after its deletionTimestamp.
 */
export function deleteTimeoutAt(deletionMs: number, timeoutSeconds: number): number {
  return deletionMs + timeoutSeconds * 1000;
}
