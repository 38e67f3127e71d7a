/**
 * Pod classification with `kubectl drain`'s rules (k8s.io/kubectl/pkg/drain/filters.go, `makeFilters`:
 * skipDeletedFilter, daemonSetFilter, mirrorPodFilter, localStorageFilter, unreplicatedFilter; the
 * pod selector is applied when kubectl lists the pods, k8s.io/kubectl/pkg/drain/drain.go
 * `GetPodsForDeletion`).
 *
 * PURE and DETERMINISTIC: imported by Temporal workflow code. No I/O, no clocks, no randomness; the
 * `@kubernetes/client-node` import is type-only and erased.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PodSelection } from '../api/plan.js';
import { compareStrings } from './conditions.js';
import { matchesLabelSelector } from './selector.js';
import { PodReason } from '../api/reasons.js';
import { drainOptOut, hasDoNotDisrupt } from './pod-policy.js';
import type { PodAction } from '../contract/observation.js';
import type { NodeRequirement, NodeTerm, PodToleration } from './returning.js';

/** Annotation the kubelet puts on the mirror pod of a static pod (`corev1.MirrorPodAnnotationKey`). */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** A `metav1.OwnerReference` (only the fields classification reads). */
export interface PodOwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** `true` on the one reference that names the managing controller. */
  controller?: boolean;
}

/** A pod volume: only its name and, for an emptyDir volume, its `emptyDir` source. */
export interface PodVolume {
  name: string;
  /** Present (even `{}`) when the volume is an emptyDir. `medium` is `""` or `Memory`; `sizeLimit` a quantity. */
  emptyDir?: { medium?: string; sizeLimit?: string };
}

/**
 * The subset of a `V1Pod` that classification needs, as plain JSON (safe as a Temporal payload).
 * Build it from a `V1Pod` with {@link toPodInfo}. Times are RFC 3339 strings.
 */
export interface PodInfo {
  metadata: {
    namespace: string;
    name: string;
    uid: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: PodOwnerReference[];
    /** RFC 3339 time set by the API server when deletion was requested; absent while the pod is not terminating. */
    deletionTimestamp?: string;
  };
  spec?: {
    volumes?: PodVolume[];
    /** The pod's own grace period, in seconds. */
    terminationGracePeriodSeconds?: number;
    /** spec.priorityClassName (critical pods leave last, src/drain/pod-policy.ts). */
    priorityClassName?: string;
    /** spec.tolerations (a pod tolerating the cordon comes back, src/drain/returning.ts). */
    tolerations?: PodToleration[];
    /** spec.nodeSelector. */
    nodeSelector?: Record<string, string>;
    /** spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms. */
    requiredNodeTerms?: NodeTerm[];
  };
  status?: {
    /** `Pending`, `Running`, `Succeeded`, `Failed` or `Unknown`. */
    phase?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
  };
}

/**
 * The classification of one pod ({@link classifyPod}, from a {@link PodInfo}): `pod` is
 * `namespace/name`, `uid` its `metadata.uid`, `reason` the rule that decided (the words are
 * {@link PodReason}). The observation makes an `ObservedPod` of it (src/activities/node-pods.ts),
 * the preflight its report (src/drain/preflight.ts).
 */
export interface PodDecision {
  pod: string;
  uid: string;
  action: PodAction;
  reason: PodReason;
  message: string;
}

/** `namespace/name` of a pod. */
export function podKey(pod: Pick<PodInfo, 'metadata'>): string {
  return `${pod.metadata.namespace}/${pod.metadata.name}`;
}

/**
 * Converts a `V1Pod` (as returned by `@kubernetes/client-node`, whose times are `Date`s) into a
 * {@link PodInfo}: only the fields classification needs, times as RFC 3339 strings, volumes reduced to
 * `{name, emptyDir?}`. Missing namespace/name/uid become `""`. Pure (no clock read).
 */
export function toPodInfo(pod: V1Pod): PodInfo {
  const md = pod.metadata ?? {};
  const info: PodInfo = {
    metadata: { namespace: md.namespace ?? '', name: md.name ?? '', uid: md.uid ?? '' },
  };
  if (md.labels) info.metadata.labels = { ...md.labels };
  if (md.annotations) info.metadata.annotations = { ...md.annotations };
  if (md.ownerReferences) {
    info.metadata.ownerReferences = md.ownerReferences.map((r) => {
      const ref: PodOwnerReference = { apiVersion: r.apiVersion, kind: r.kind, name: r.name, uid: r.uid };
      if (r.controller !== undefined) ref.controller = r.controller;
      return ref;
    });
  }
  const dt = md.deletionTimestamp as Date | string | undefined | null;
  if (dt !== undefined && dt !== null) {
    info.metadata.deletionTimestamp = dt instanceof Date ? dt.toISOString() : String(dt);
  }
  if (pod.spec) {
    info.spec = {};
    if (pod.spec.volumes) {
      info.spec.volumes = pod.spec.volumes.map((v) => {
        const vol: PodVolume = { name: v.name };
        if (v.emptyDir) {
          vol.emptyDir = {};
          if (v.emptyDir.medium !== undefined) vol.emptyDir.medium = v.emptyDir.medium;
          if (v.emptyDir.sizeLimit !== undefined) vol.emptyDir.sizeLimit = String(v.emptyDir.sizeLimit);
        }
        return vol;
      });
    }
    if (pod.spec.terminationGracePeriodSeconds !== undefined) {
      info.spec.terminationGracePeriodSeconds = pod.spec.terminationGracePeriodSeconds;
    }
    if (pod.spec.priorityClassName !== undefined) info.spec.priorityClassName = pod.spec.priorityClassName;
    if (pod.spec.tolerations?.length)
      info.spec.tolerations = pod.spec.tolerations.map((t) => {
        const tol: PodToleration = {};
        if (t.key !== undefined) tol.key = t.key;
        if (t.operator !== undefined) tol.operator = t.operator;
        if (t.value !== undefined) tol.value = t.value;
        if (t.effect !== undefined) tol.effect = t.effect;
        return tol;
      });
    if (pod.spec.nodeSelector) info.spec.nodeSelector = { ...pod.spec.nodeSelector };
    const terms =
      pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    if (terms?.length)
      info.spec.requiredNodeTerms = terms.map((t) => {
        const term: NodeTerm = {};
        const req = (r: { key: string; operator: string; values?: string[] }): NodeRequirement => ({
          key: r.key,
          operator: r.operator,
          ...(r.values ? { values: [...r.values] } : {}),
        });
        if (t.matchExpressions) term.matchExpressions = t.matchExpressions.map(req);
        if (t.matchFields) term.matchFields = t.matchFields.map(req);
        return term;
      });
  }
  if (pod.status) {
    info.status = {};
    if (pod.status.phase !== undefined) info.status.phase = pod.status.phase;
    if (pod.status.conditions) {
      info.status.conditions = pod.status.conditions.map((c) => {
        const cond: { type: string; status: string; reason?: string; message?: string } = {
          type: c.type,
          status: c.status,
        };
        if (c.reason !== undefined) cond.reason = c.reason;
        if (c.message !== undefined) cond.message = c.message;
        return cond;
      });
    }
  }
  return info;
}

/**
 * The managing controller of a pod: the first ownerReference with `controller: true`, or `undefined`
 * (k8s.io/apimachinery/pkg/apis/meta/v1/controller_ref.go `GetControllerOf`).
 */
export function controllerOf(pod: Pick<PodInfo, 'metadata'>): PodOwnerReference | undefined {
  return (pod.metadata.ownerReferences ?? []).find((r) => r.controller === true);
}

/** Names of the pod's emptyDir volumes (kubectl drain's "local storage", filters.go `hasLocalStorage`). */
export function emptyDirVolumes(pod: Pick<PodInfo, 'spec'>): string[] {
  return (pod.spec?.volumes ?? [])
    .filter((v) => v.emptyDir !== undefined && v.emptyDir !== null)
    .map((v) => v.name);
}

/**
 * Classifies one pod with kubectl drain's rules. The first rule that applies decides:
 *
 * 1. Not matching `selection.podSelector` → Skip `NotSelected` (kubectl lists pods with the selector).
 * 2. `status.phase` Succeeded or Failed → Skip `PodFinished`. kubectl deletes finished pods without
 *    further checks; they hold no resources and their replacement is not our concern, so we skip them
 *    (and never wait for them, which could hang on a finished pod kept by a finalizer).
 * 3. Annotation `kubernetes.io/config.mirror` → Skip `MirrorPod` (filters.go `mirrorPodFilter`: the
 *    kubelet owns static pods; the API server cannot delete them).
 * 4. Controller kind `DaemonSet` and `ignoreDaemonSets` → Skip `DaemonSetPod` (filters.go
 *    `daemonSetFilter`; the DaemonSet controller ignores cordons and would re-create it). This comes
 *    before rule 5 so that an ignored DaemonSet pod is never waited for, as with kubectl
 *    `--ignore-daemonsets`.
 * 4a. Label `drainflow.dev/drain` (else `cluster.x-k8s.io/drain`) `skip` → Skip `DrainLabelSkip`
 *    (Cluster API's skip label: never evicted, never waited for, not a blocker).
 * 5. `metadata.deletionTimestamp` set → Wait `Terminating`: the pod is already going; it is waited for
 *    and never evicted again. kubectl's `skipDeletedFilter` only stops waiting for pods
 *    deleted longer ago than `--skip-wait-for-delete-timeout`; the plan deadline plays that role here.
 * 5a. Label value `wait-completed` → Block `WaitCompleted`: never evicted; the node waits until the
 *    pod finishes (rule 2) or is gone (Cluster API's WaitCompleted behaviour).
 * 5b. Annotation `karpenter.sh/do-not-disrupt: "true"` → Block `DoNotDisrupt`, unless
 *    `ignoreDoNotDisrupt` (then the rules below decide).
 * 6. Controller kind `DaemonSet` (not ignored) → Block `DaemonSetPod`.
 * 7. An emptyDir volume → Block `EmptyDirData` unless `deleteEmptyDirData` (filters.go
 *    `localStorageFilter`, checked before the controller as in kubectl).
 * 8. No controller ownerReference → Block `NoController` unless `force` (filters.go `unreplicatedFilter`).
 * 9. Otherwise Evict (reason `Evictable`, or the rule that `force` / `deleteEmptyDirData` overrode).
 *
 * Not modelled (it needs I/O): kubectl's check that a DaemonSet controller still exists (an orphaned
 * DaemonSet pod is treated like any DaemonSet pod here).
 *
 * @param pod the pod (see {@link toPodInfo}).
 * @param selection `spec.podSelection` with defaults applied.
 */
export function classifyPod(pod: PodInfo, selection: PodSelection): PodDecision {
  const decide = (action: PodAction, reason: PodReason, message: string): PodDecision => ({
    pod: podKey(pod),
    uid: pod.metadata.uid,
    action,
    reason,
    message,
  });

  if (!matchesLabelSelector(pod.metadata.labels, selection.podSelector)) {
    return decide(
      'Skip',
      PodReason.NotSelected,
      'pod does not match spec.podSelection.podSelector; it is left alone',
    );
  }

  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') {
    return decide(
      'Skip',
      PodReason.PodFinished,
      `pod has finished (phase ${phase}); it holds no resources and is not evicted`,
    );
  }

  if (
    pod.metadata.annotations !== undefined &&
    Object.prototype.hasOwnProperty.call(pod.metadata.annotations, MIRROR_POD_ANNOTATION)
  ) {
    return decide(
      'Skip',
      PodReason.MirrorPod,
      `mirror pod of a static pod (annotation ${MIRROR_POD_ANNOTATION}): the kubelet manages it, it cannot be evicted through the API server`,
    );
  }

  const controller = controllerOf(pod);
  const isDaemonSetPod = controller?.kind === 'DaemonSet';
  const dsName = `DaemonSet ${pod.metadata.namespace}/${controller?.name ?? ''}`;
  if (isDaemonSetPod && selection.ignoreDaemonSets) {
    return decide(
      'Skip',
      PodReason.DaemonSetPod,
      `managed by ${dsName}; ignored (spec.podSelection.ignoreDaemonSets): the DaemonSet controller ignores cordons and would re-create it`,
    );
  }

  const optOut = drainOptOut(pod.metadata.labels);
  if (optOut?.value === 'skip') {
    return decide(
      'Skip',
      PodReason.DrainLabelSkip,
      `label ${optOut.label}=skip: never evicted, not waited for`,
    );
  }

  if (pod.metadata.deletionTimestamp) {
    return decide(
      'Wait',
      PodReason.Terminating,
      `pod is terminating (deletionTimestamp ${pod.metadata.deletionTimestamp}); waiting for it to be gone, not evicting it again`,
    );
  }

  if (optOut?.value === 'wait-completed') {
    return decide(
      'Block',
      PodReason.WaitCompleted,
      `label ${optOut.label}=wait-completed: never evicted; the node waits until the pod completes`,
    );
  }

  if (hasDoNotDisrupt(pod.metadata.annotations) && selection.ignoreDoNotDisrupt !== true) {
    return decide(
      'Block',
      PodReason.DoNotDisrupt,
      'annotation karpenter.sh/do-not-disrupt: "true": not evicted; remove the annotation, or use a plan with spec.podSelection.ignoreDoNotDisrupt: true',
    );
  }

  if (isDaemonSetPod) {
    return decide(
      'Block',
      PodReason.DaemonSetPod,
      `managed by ${dsName}; DaemonSet pods are not evicted: a plan with spec.podSelection.ignoreDaemonSets: true ignores them`,
    );
  }

  const emptyDirs = emptyDirVolumes(pod);
  const emptyDirList = emptyDirs.join(', ');
  if (emptyDirs.length > 0 && !selection.deleteEmptyDirData) {
    return decide(
      'Block',
      PodReason.EmptyDirData,
      `pod uses emptyDir volume(s) ${emptyDirList} whose data is lost on eviction: move or delete the pod, or use a plan with spec.podSelection.deleteEmptyDirData: true`,
    );
  }

  if (controller === undefined) {
    if (!selection.force) {
      return decide(
        'Block',
        PodReason.NoController,
        'pod declares no controller (no ownerReference with controller: true): delete the pod, or use a plan with spec.podSelection.force: true (it will not be re-created)',
      );
    }
    const dataNote = emptyDirs.length > 0 ? `; its emptyDir volume(s) ${emptyDirList} lose their data` : '';
    return decide(
      'Evict',
      PodReason.NoController,
      `pod declares no controller; evicted because spec.podSelection.force is set: it will not be re-created${dataNote}`,
    );
  }

  const owner = `${controller.kind} ${pod.metadata.namespace}/${controller.name}`;
  if (emptyDirs.length > 0) {
    return decide(
      'Evict',
      PodReason.EmptyDirData,
      `managed by ${owner}; evicted because spec.podSelection.deleteEmptyDirData is set: emptyDir volume(s) ${emptyDirList} lose their data`,
    );
  }
  return decide('Evict', PodReason.Evictable, `managed by ${owner}`);
}

/**
 * Classifies every pod ({@link classifyPod}) and returns the decisions sorted by namespace, then name
 * (code-unit order, locale-independent), so the result does not depend on list order.
 *
 * @param pods the pods on one node.
 * @param selection `spec.podSelection` with defaults applied.
 */
export function classifyPods(pods: readonly PodInfo[], selection: PodSelection): PodDecision[] {
  return [...pods]
    .sort(
      (a, b) =>
        compareStrings(a.metadata.namespace, b.metadata.namespace) ||
        compareStrings(a.metadata.name, b.metadata.name) ||
        compareStrings(a.metadata.uid, b.metadata.uid),
    )
    .map((p) => classifyPod(p, selection));
}
