/**
 * The `deletePod` activity (onDeadline DeletePods): one DELETE of a pod, without the Eviction API.
 *
 * This is what a drain does when its deadline passed and its policy says the pods go anyway
 * (Karpenter deletes pods at its terminationGracePeriod the same way): PodDisruptionBudgets are
 * bypassed because the pods/eviction subresource is not used. The pod's UID is the precondition, so a
 * replacement that took the same name (StatefulSets) is never deleted; the grace period is the one
 * the workflow computed (what is left until the plan's deadline, at least 1 s, at most the pod's own).
 *
 * Answers, by status code: 200/202 → Deleted (the pod is terminating now); 404 → Gone; 409 (the UID
 * precondition failed: another incarnation holds the name) → Gone; other 4xx → Failed with the
 * server's message (a blocker the drain retries after its backoff); transport errors, 429 and 5xx →
 * thrown as a plain Error (retryable by the activity's retry policy).
 */
import { ApiException, type CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DeletePodInput, DeletePodResult } from './types.js';

/** The message of a Kubernetes Status body, else the body as text. */
function statusMessage(body: unknown): string {
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') return parsed.message;
    } catch {
      return body;
    }
    return body;
  }
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : JSON.stringify(body ?? '');
}

/**
 * Builds the `deletePod` activity over a CoreV1Api client.
 * @returns the activity function (one API call per invocation).
 */
export function deletePodActivity(
  core: CoreV1Api,
  log: Pick<Logger, 'info' | 'warn'>,
): (input: DeletePodInput) => Promise<DeletePodResult> {
  return async ({ namespace, name, uid, gracePeriodSeconds }) => {
    const pod = `${namespace}/${name}`;
    try {
      await core.deleteNamespacedPod({
        name,
        namespace,
        body: { preconditions: { uid }, gracePeriodSeconds: Math.max(1, gracePeriodSeconds) },
      });
      log.warn({ pod, gracePeriodSeconds }, 'pod deleted at the deadline (Eviction API bypassed)');
      return { outcome: 'Deleted' };
    } catch (err) {
      if (!(err instanceof ApiException))
        throw new Error(`delete pod ${pod}: ${String(err)}`, { cause: err });
      const code = err.code;
      if (code === 404 || code === 409) return { outcome: 'Gone' };
      if (code === 429 || code === 408 || code >= 500)
        throw new Error(`delete pod ${pod}: HTTP ${code}: ${statusMessage(err.body)}`, { cause: err });
      const message = `delete pod ${pod}: HTTP ${code}: ${statusMessage(err.body)}`;
      log.warn({ pod, code }, message);
      return { outcome: 'Failed', code, message };
    }
  };
}
