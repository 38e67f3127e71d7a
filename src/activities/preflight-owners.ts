/**
 * Preflight reads the controllers of the node's pods to evict (one GET per distinct controller:
 * ReplicaSet, StatefulSet, Job, ReplicationController), so that the report can warn about a
 * workload whose pod template pins its pods to the node with `spec.nodeName`
 * (src/drain/preflight-returning.ts). A read that fails (403 without RBAC get on the kind, a
 * transient error) is not the report's failure: the controller is counted as unread and the
 * summary says so.
 *
 * RBAC: get on apps replicasets and statefulsets, batch jobs, core replicationcontrollers.
 */
import type { KubernetesPort } from '../k8s/port.js';
import { toPreflightOwner, type OwnerRef, type PreflightOwner } from '../drain/preflight-returning.js';

/**
 * Controllers read during one preflight, by UID, so that a workload with pods on several nodes is
 * read once: the controller, `'gone'` (404) or `'unread'` (the read failed).
 */
export type OwnerCache = Map<string, Promise<PreflightOwner | 'gone' | 'unread'>>;

/**
 * Reads `refs` (at most `limit` at once, each UID at most once per `cache`).
 *
 * @returns the controllers read by UID, and how many could not be read (a 404 is not counted: the
 *   controller is gone, its pods are being deleted).
 */
export async function readOwners(
  port: KubernetesPort,
  refs: readonly OwnerRef[],
  cache: OwnerCache,
  limit: number,
): Promise<{ owners: Record<string, PreflightOwner>; ownersUnread: number }> {
  const owners: Record<string, PreflightOwner> = {};
  let ownersUnread = 0;
  const read = (ref: OwnerRef): Promise<PreflightOwner | 'gone' | 'unread'> => {
    let p = cache.get(ref.uid);
    if (!p) {
      p = port.readController(ref).then(
        (obj) => (obj ? toPreflightOwner(ref, obj) : 'gone'),
        () => 'unread' as const,
      );
      cache.set(ref.uid, p);
    }
    return p;
  };
  let next = 0;
  const lane = async () => {
    while (next < refs.length) {
      const ref = refs[next++]!;
      const owner = await read(ref);
      if (owner === 'unread') ownersUnread++;
      else if (owner !== 'gone') owners[ref.uid] = owner;
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, refs.length) }, lane));
  return { owners, ownersUnread };
}
