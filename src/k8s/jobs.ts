/**
 * The Kubernetes calls of the Job hooks (spec.hooks.*.job): create a Job, read it, and list the
 * pods of a Job. The only client of the batch/v1 API in drainflow.
 *
 * RBAC: jobs create/get/delete and pods list in the hooks' namespaces (see deploy/).
 */
import { BatchV1Api, CoreV1Api, type KubeConfig, type V1Job, type V1Pod } from './client.js';
import { apiCode, classifyError } from './errors.js';

/** The Job calls of the hooks. */
export interface JobPort {
  /** Creates the Job; `'exists'` when one of that name is there already (409 AlreadyExists). */
  createJob(namespace: string, job: V1Job): Promise<'created' | 'exists'>;
  /** Reads the Job; undefined when it does not exist (404). */
  readJob(namespace: string, name: string): Promise<V1Job | undefined>;
  /**
   * Deletes the Job with `propagationPolicy: Foreground`: the API server sets its
   * deletionTimestamp and the `foregroundDeletion` finalizer, the garbage collector deletes its
   * pods, then the Job itself goes. `'gone'` when it does not exist (404).
   */
  deleteJob(namespace: string, name: string): Promise<'deleting' | 'gone'>;
  /** Pods of the Job (label `batch.kubernetes.io/job-name=<name>`, set by the Job controller). */
  listJobPods(namespace: string, name: string): Promise<V1Pod[]>;
}

/**
 * The {@link JobPort} over one KubeConfig.
 * @throws TransientKubernetesError on transport errors and 5xx, PermanentKubernetesError on other 4xx.
 */
export function createJobPort(kubeConfig: KubeConfig): JobPort {
  const batch = kubeConfig.makeApiClient(BatchV1Api);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  return {
    async createJob(namespace, job) {
      try {
        await batch.createNamespacedJob({ namespace, body: job });
        return 'created';
      } catch (err) {
        if (apiCode(err) === 409) return 'exists';
        throw classifyError(err, `create job ${namespace}/${job.metadata?.name ?? ''}`);
      }
    },
    async readJob(namespace, name) {
      try {
        return await batch.readNamespacedJob({ namespace, name });
      } catch (err) {
        if (apiCode(err) === 404) return undefined;
        throw classifyError(err, `read job ${namespace}/${name}`);
      }
    },
    async deleteJob(namespace, name) {
      try {
        await batch.deleteNamespacedJob({ namespace, name, propagationPolicy: 'Foreground' });
        return 'deleting';
      } catch (err) {
        if (apiCode(err) === 404) return 'gone';
        throw classifyError(err, `delete job ${namespace}/${name}`);
      }
    },
    async listJobPods(namespace, name) {
      try {
        const list = await core.listNamespacedPod({
          namespace,
          labelSelector: `batch.kubernetes.io/job-name=${name}`,
        });
        return list.items;
      } catch (err) {
        throw classifyError(err, `list pods of job ${namespace}/${name}`);
      }
    },
  };
}
