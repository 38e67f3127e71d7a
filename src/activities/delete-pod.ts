/**
 * The `deletePod` activity (onDeadline DeletePods): one DELETE of a pod, without the Eviction API.
 *
 * This is what a drain does when its deadline passed and its policy says the pods go anyway
 * (Karpenter deletes pods at its terminationGracePeriod the same way): PodDisruptionBudgets are
 * bypassed because the pods/eviction subresource is not used. The pod's UID is the precondition, so a
 * replacement that took the same name (StatefulSets) is never deleted; the grace period is the one
 * the workflow computed (what is left until the plan's deadline, at least 1 s, at most the pod's own).
 *
 * The call and its answers are the port's ({@link KubernetesPort.deletePod}): 200/202 → Deleted
 * (the pod is terminating now); 404 and 409 → Gone; other 4xx (a PermanentKubernetesError, e.g. 403
 * without RBAC) → Failed with the server's message, a blocker the drain retries after its backoff;
 * transport errors, 408, 429 and 5xx are thrown (TransientKubernetesError: the activity's retry
 * policy retries them).
 */
import type { Logger } from 'pino';
import { PermanentKubernetesError } from '../k8s/errors.js';
import type { KubernetesPort } from '../k8s/port.js';
import type { DeletePodInput, DeletePodResult } from './types.js';

/**
 * Builds the `deletePod` activity over the port.
 * @returns the activity function (one API call per invocation).
 */
export function deletePodActivity(
  port: Pick<KubernetesPort, 'deletePod'>,
  log: Pick<Logger, 'info' | 'warn'>,
): (input: DeletePodInput) => Promise<DeletePodResult> {
  return async ({ namespace, name, uid, gracePeriodSeconds }) => {
    const pod = `${namespace}/${name}`;
    try {
      if ((await port.deletePod({ namespace, name, uid, gracePeriodSeconds })) === 'gone')
        return { outcome: 'Gone' };
      log.warn({ pod, gracePeriodSeconds }, 'pod deleted at the deadline (Eviction API bypassed)');
      return { outcome: 'Deleted' };
    } catch (err) {
      if (!(err instanceof PermanentKubernetesError)) throw err;
      log.warn({ pod, code: err.code }, err.message);
      return { outcome: 'Failed', code: err.code, message: err.message };
    }
  };
}
