/**
 * The pod activities: {@link DrainActivities.listNodePods}, {@link DrainActivities.checkPod} and the
 * two waits, {@link DrainActivities.waitPodGone} and {@link DrainActivities.waitDisruptionAllowed}
 * (list, then watch: src/k8s/wait.ts), which heartbeat every {@link HEARTBEAT_INTERVAL_MS} and stop
 * when the activity is cancelled.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/activity';
import type { KubernetesPort } from '../k8s/port.js';
import type { WaitControl } from '../k8s/wait.js';
import { activityContext } from './context.js';
import { buildNodePods, observedAllowed } from './node-pods.js';
import type { DrainActivities, PodState } from './types.js';

/** How often the waiting activities heartbeat, in ms (their heartbeat timeout should be >= 3x this). */
export const HEARTBEAT_INTERVAL_MS = 2000;

/** PDB list calls in flight at once in listNodePods (one per namespace with pods on the node). */
const LIST_CONCURRENCY = 8;

/** The pod activities. */
export type PodActivities = Pick<
  DrainActivities,
  'listNodePods' | 'checkPod' | 'waitPodGone' | 'waitDisruptionAllowed'
>;

/** Heartbeats and cancellation of the current activity, for a wait (none outside an activity). */
function waitControl(): WaitControl {
  const ctx = activityContext();
  return {
    signal: ctx?.cancellationSignal,
    heartbeat: ctx ? () => ctx.heartbeat() : undefined,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
  };
}

/**
 * Builds the pod activities over `port`.
 *
 * @param port the Kubernetes calls (src/k8s/port.ts).
 */
export function createPodActivities(port: KubernetesPort): PodActivities {
  return {
    /**
     * Lists the pods bound to the node (`fieldSelector spec.nodeName=<node>`, all namespaces, paged),
     * classifies them with kubectl drain's rules ({@link buildNodePods}), lists the policy/v1
     * PodDisruptionBudgets of their namespaces (at most {@link LIST_CONCURRENCY} lists at once) and
     * matches selectors as the eviction subresource does (an empty selector matches every pod of the
     * namespace; an absent one matches none). A PDB not yet processed by the disruption controller
     * (status.observedGeneration < metadata.generation) is reported with `disruptionsAllowed: 0`, as
     * the eviction subresource treats it.
     *
     * @throws TransientKubernetesError on transport errors / 5xx; PermanentKubernetesError on 4xx.
     */
    async listNodePods({ node, selection }) {
      const raw = await port.listNodePods(node);
      const namespaces = [...new Set(raw.map((p) => p.metadata?.namespace ?? ''))].sort();
      const pdbsByNs = new Map<string, V1PodDisruptionBudget[]>();
      await forEachLimit(namespaces, LIST_CONCURRENCY, async (namespace) => {
        pdbsByNs.set(namespace, await port.listPdbs(namespace));
      });
      return buildNodePods(raw, (ns) => pdbsByNs.get(ns) ?? [], selection);
    },

    /**
     * Reads the pod by name: `Gone` when absent (404) or when the name now belongs to another UID,
     * `Terminating` when it has a deletionTimestamp, else `Present`.
     *
     * @throws TransientKubernetesError on transport errors / 5xx; PermanentKubernetesError on other 4xx.
     */
    async checkPod({ namespace, name, uid }) {
      const pod = await port.readPod(namespace, name);
      let state: PodState = 'Present';
      if (pod === undefined || pod.metadata?.uid !== uid) state = 'Gone';
      else if (pod.metadata?.deletionTimestamp) state = 'Terminating';
      return state;
    },

    /**
     * Waits until no pod `namespace/name` with this UID exists (deleted, or replaced by another UID):
     * lists with `fieldSelector metadata.name=<name>` and watches from there, re-listing on any watch
     * end. Heartbeats every {@link HEARTBEAT_INTERVAL_MS}; `timeoutSeconds` bounds the wait.
     *
     * @returns `{ gone: true }` as soon as it is gone, `{ gone: false }` on timeout.
     * @throws CancelledFailure when the activity is cancelled.
     */
    async waitPodGone({ namespace, name, uid, timeoutSeconds }) {
      return port.waitForPod<{ gone: boolean }>(
        namespace,
        name,
        {
          timeoutSeconds,
          evaluate: (pod) => (pod === undefined || pod.metadata?.uid !== uid ? { gone: true } : undefined),
          onTimeout: () => ({ gone: false }),
        },
        waitControl(),
      );
    },

    /**
     * Waits until the PDB `namespace/name` allows a disruption: status.disruptionsAllowed > 0 and
     * status.observedGeneration >= metadata.generation (the eviction subresource refuses with 429 until
     * the disruption controller has processed the latest spec). Lists and watches like
     * {@link DrainActivities.waitPodGone}; heartbeats; bounded by `timeoutSeconds`.
     *
     * @returns `{ disruptionsAllowed, exists: true }` as soon as a disruption is allowed;
     *   `{ disruptionsAllowed: 0, exists: false }` as soon as the PDB is deleted (nothing guards the pods any
     *   more); `{ disruptionsAllowed: 0, exists: true }` on timeout.
     * @throws ApplicationFailure (non-retryable, type `InvalidInput`) when `pdb` is not `namespace/name`.
     * @throws CancelledFailure when the activity is cancelled.
     */
    async waitDisruptionAllowed({ pdb, timeoutSeconds }) {
      const slash = pdb.indexOf('/');
      const namespace = pdb.slice(0, slash);
      const name = pdb.slice(slash + 1);
      if (slash <= 0 || !name) {
        throw ApplicationFailure.nonRetryable(
          `waitDisruptionAllowed: pdb must be "namespace/name", got "${pdb}"`,
          'InvalidInput',
        );
      }
      return port.waitForPdb<{ disruptionsAllowed: number; exists: boolean }>(
        namespace,
        name,
        {
          timeoutSeconds,
          evaluate: (obj) => {
            if (obj === undefined) return { disruptionsAllowed: 0, exists: false };
            const allowed = observedAllowed(obj);
            return allowed > 0 ? { disruptionsAllowed: allowed, exists: true } : undefined;
          },
          onTimeout: () => ({ disruptionsAllowed: 0, exists: true }),
        },
        waitControl(),
      );
    },
  };
}

/** Runs `fn` over `items` with at most `limit` calls in flight; rejects with the first error. */
async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
