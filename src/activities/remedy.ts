/**
 * The `restartDeployment` activity (spec.remedies.rolloutRestart): what `kubectl rollout restart`
 * does, once. It sets the Deployment's pod template annotation {@link RESTARTED_AT_ANNOTATION} to
 * the value the workflow passes (derived from the approval time), so the Deployment controller
 * rolls its pods by surge. Nothing else of the Deployment changes: not its replicas, not its
 * strategy; no PodDisruptionBudget is touched.
 *
 * Idempotent: GET the Deployment; when the annotation already has the value, nothing is written
 * (a retry after a crash, or after a lost answer, never requests a second rollout); else a JSON
 * merge patch guarded by the resourceVersion read (a 409 reads again and re-decides).
 *
 * Answers: `Restarted` (this call set the value), `AlreadyRestarted`, or `Failed` with the API
 * server's message for a 4xx (404: the Deployment is gone; 403: the worker may not patch
 * Deployments, deploy/components/rollout-restart grants it); transport errors, 408, 429 and 5xx are
 * thrown (TransientKubernetesError), for the activity's retry policy.
 *
 * Calls: GET and PATCH /apis/apps/v1/namespaces/{ns}/deployments/{name}.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { AppsV1Api } from '../k8s/client.js';
import { PermanentKubernetesError, apiCode, classifyError } from '../k8s/errors.js';
import { CONFLICT, MERGE_PATCH, retryOnConflict } from '../k8s/patch.js';
import { RESTARTED_AT } from '../drain/remedy.js';

/** The pod template annotation `kubectl rollout restart` sets (RFC 3339 time). */
export const RESTARTED_AT_ANNOTATION = RESTARTED_AT;

/** Input of {@link RemedyActivities.restartDeployment}. */
export interface RestartDeploymentInput {
  namespace: string;
  name: string;
  /** The annotation's value (the workflow derives it from the approval time). */
  restartedAt: string;
}

/** Result of {@link RemedyActivities.restartDeployment}. */
export type RestartDeploymentResult =
  { outcome: 'Restarted' | 'AlreadyRestarted' } | { outcome: 'Failed'; code?: number; message: string };

/** The remedy activity, apart from DrainActivities so fakes of the drain contract need not implement it. */
export interface RemedyActivities {
  /** See the module comment. */
  restartDeployment(input: RestartDeploymentInput): Promise<RestartDeploymentResult>;
}

/** Builds {@link RemedyActivities} over one KubeConfig. */
export function createRemedyActivities(
  kubeConfig: KubeConfig,
  log: Pick<Logger, 'info' | 'warn'>,
): RemedyActivities {
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  return {
    async restartDeployment({ namespace, name, restartedAt }) {
      const what = `restart Deployment ${namespace}/${name}`;
      try {
        return await retryOnConflict(what, async () => {
          let d;
          try {
            d = await apps.readNamespacedDeployment({ name, namespace });
          } catch (err) {
            throw classifyError(err, `get Deployment ${namespace}/${name}`);
          }
          if (d.spec?.template?.metadata?.annotations?.[RESTARTED_AT_ANNOTATION] === restartedAt)
            return { outcome: 'AlreadyRestarted' as const };
          const body = {
            metadata: { resourceVersion: d.metadata?.resourceVersion },
            spec: { template: { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: restartedAt } } } },
          };
          try {
            await apps.patchNamespacedDeployment({ name, namespace, body }, MERGE_PATCH);
          } catch (err) {
            if (apiCode(err) === 409) return CONFLICT;
            throw classifyError(err, `patch Deployment ${namespace}/${name}`);
          }
          log.info({ deployment: `${namespace}/${name}`, restartedAt }, 'rollout restart requested');
          return { outcome: 'Restarted' as const };
        });
      } catch (err) {
        if (!(err instanceof PermanentKubernetesError)) throw err;
        log.warn({ deployment: `${namespace}/${name}`, code: err.code }, err.message);
        return {
          outcome: 'Failed',
          ...(err.code !== undefined ? { code: err.code } : {}),
          message: err.message,
        };
      }
    },
  };
}
