/**
 * The activities of Job hooks (spec.hooks.beforeDrain / afterDrain with `job`): create the hook's
 * Job for one node, wait for it to end, and stop it (a plan aborted while it runs). Over the
 * batch/v1 calls of src/k8s/jobs.ts.
 *
 * The Job drainflow makes of the user's template ({@link buildHookJob}):
 * - name {@link hookJobName} (deterministic: a retried or replayed creation finds the Job it made,
 *   so the hook runs once per node), in the hook's namespace;
 * - labels `drainflow.dev/plan`, `drainflow.dev/node`, `drainflow.dev/hook` on the Job and its pods;
 * - an owner reference to the MaintenancePlan (cluster-scoped owners of namespaced objects are
 *   allowed), so the garbage collector deletes the Job with the plan;
 * - its pod pinned to the node with `spec.nodeName` (bypassing the scheduler, which would not place
 *   it on a cordoned node) and tolerating the cordon taint `node.kubernetes.io/unschedulable`
 *   (NoSchedule), restartPolicy Never unless the template says OnFailure, backoffLimit 0 unless set,
 *   activeDeadlineSeconds the hook's timeoutSeconds unless set.
 */
import { Context } from '@temporalio/activity';
import type { KubeConfig, V1Job, V1Pod, V1PodTemplateSpec } from '@kubernetes/client-node';
import { API_VERSION, KIND, type JobHook } from '../api/plan.js';
import type { HookName } from '../drain/hooks.js';
import { createJobPort, type JobPort } from '../k8s/jobs.js';
import type { PlanRef } from '../contract/names.js';

/** Label keys drainflow sets on a hook's Job and its pod. */
export const HOOK_LABELS = {
  plan: 'drainflow.dev/plan',
  node: 'drainflow.dev/node',
  hook: 'drainflow.dev/hook',
} as const;

/** The taint a cordoned node carries (the node lifecycle controller adds it for spec.unschedulable). */
export const CORDON_TAINT = 'node.kubernetes.io/unschedulable';

/** How often {@link JobActivities.waitHookJob} reads the Job, ms. */
export const JOB_POLL_MS = 2000;

/** How often {@link JobActivities.stopHookJob} reads the Job it deleted, ms. */
export const JOB_STOP_POLL_MS = 500;

/** Input of {@link JobActivities.createHookJob}. */
export interface CreateHookJobInput {
  plan: PlanRef;
  node: string;
  hook: HookName;
  /** The Job's name ({@link hookJobName}, computed by the workflow). */
  name: string;
  job: JobHook;
}

/** How a hook's Job ended. */
export interface HookJobEnd {
  succeeded: boolean;
  /** On failure: the pod's termination message, or the Job's failure condition, or the timeout. */
  message: string;
}

/** Input of {@link JobActivities.stopHookJob}. */
export interface StopHookJobInput {
  namespace: string;
  name: string;
  /** Longest wait for the Job to be gone after the delete call, seconds. */
  waitSeconds: number;
}

/** What {@link JobActivities.stopHookJob} saw: `gone` false when the Job was still there at the bound. */
export interface StopHookJobResult {
  gone: boolean;
}

/** The activities of Job hooks. */
export interface JobActivities {
  /** Creates the hook's Job ({@link buildHookJob}); a Job of that name already there is kept. */
  createHookJob(input: CreateHookJobInput): Promise<{ created: boolean }>;
  /**
   * Stops a hook's Job: deletes it with `propagationPolicy: Foreground` (the garbage collector
   * deletes its pods first, so the Job object is gone only once no pod of it is left; kubelet gives
   * each pod its termination grace period), then waits, heartbeating, until a read answers 404,
   * at most `waitSeconds`. A Job already gone is `{gone: true}` at once.
   * @throws PermanentKubernetesError when the delete is refused (403: the worker's Role lacks jobs
   * delete), TransientKubernetesError on transport errors and 5xx.
   */
  stopHookJob(input: StopHookJobInput): Promise<StopHookJobResult>;
  /**
   * Waits, heartbeating, until the Job completed or failed, at most `timeoutSeconds`.
   * @returns its end; a missing Job is a failure ("deleted").
   */
  waitHookJob(input: { namespace: string; name: string; timeoutSeconds: number }): Promise<HookJobEnd>;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};

/** The Job of a hook for one node, from the user's template (see the module comment). */
export function buildHookJob(input: CreateHookJobInput): V1Job {
  const { plan, node, hook, name, job } = input;
  const template = obj(job.template);
  const meta = obj(template.metadata);
  const spec = obj(template.spec);
  const podTemplate = obj(spec.template);
  const podMeta = obj(podTemplate.metadata);
  const podSpec = obj(podTemplate.spec);
  const labels = { [HOOK_LABELS.plan]: plan.name, [HOOK_LABELS.node]: node, [HOOK_LABELS.hook]: hook };
  const tolerations = Array.isArray(podSpec.tolerations) ? [...(podSpec.tolerations as unknown[])] : [];
  tolerations.push({ key: CORDON_TAINT, operator: 'Exists', effect: 'NoSchedule' });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      ...meta,
      name,
      namespace: job.namespace,
      labels: { ...obj(meta.labels), ...labels } as Record<string, string>,
      ownerReferences: [{ apiVersion: API_VERSION, kind: KIND, name: plan.name, uid: plan.uid }],
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: job.timeoutSeconds,
      ...spec,
      template: {
        ...podTemplate,
        metadata: { ...podMeta, labels: { ...obj(podMeta.labels), ...labels } as Record<string, string> },
        spec: {
          ...podSpec,
          restartPolicy: podSpec.restartPolicy === 'OnFailure' ? 'OnFailure' : 'Never',
          nodeName: node,
          tolerations,
        },
      } as V1PodTemplateSpec,
    },
  };
}

/** The termination message of the first failed container of the pods, if any. */
function podFailure(pods: V1Pod[]): string | undefined {
  for (const p of pods) {
    for (const c of p.status?.containerStatuses ?? []) {
      const t = c.state?.terminated ?? c.lastState?.terminated;
      if (t && t.exitCode !== 0)
        return `pod ${p.metadata?.name ?? ''} container ${c.name}: ${t.message?.trim() || t.reason || 'failed'} (exit code ${t.exitCode})`;
    }
    if (p.status?.phase === 'Failed')
      return `pod ${p.metadata?.name ?? ''}: ${p.status.message ?? p.status.reason ?? 'failed'}`;
  }
  return undefined;
}

/**
 * Whether a Job ended, from its conditions (`Complete` or `Failed` True, as the Job controller
 * sets them) and, for a failure, the message of its pods. undefined while it runs.
 */
export function jobEnd(job: V1Job, pods: V1Pod[]): HookJobEnd | undefined {
  const cond = (type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  if (cond('Complete') || (job.status?.succeeded ?? 0) > 0) return { succeeded: true, message: 'completed' };
  const failed = cond('Failed');
  if (failed)
    return {
      succeeded: false,
      message: podFailure(pods) ?? `job failed: ${failed.message ?? failed.reason ?? 'no message'}`,
    };
  return undefined;
}

/** The activity's context, undefined when called outside an activity (tests). */
function currentContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Builds the {@link JobActivities} over a KubeConfig (or a given port, for tests). */
export function createJobActivities(
  kubeConfig: KubeConfig,
  port: JobPort = createJobPort(kubeConfig),
): JobActivities {
  return {
    async createHookJob(input) {
      const res = await port.createJob(input.job.namespace, buildHookJob(input));
      return { created: res === 'created' };
    },
    async stopHookJob({ namespace, name, waitSeconds }) {
      const ctx = currentContext();
      if ((await port.deleteJob(namespace, name)) === 'gone') return { gone: true };
      const end = Date.now() + waitSeconds * 1000;
      for (;;) {
        ctx?.heartbeat();
        if (!(await port.readJob(namespace, name))) return { gone: true };
        if (Date.now() >= end) return { gone: false };
        await (ctx ? ctx.sleep(JOB_STOP_POLL_MS) : new Promise((r) => setTimeout(r, JOB_STOP_POLL_MS)));
      }
    },
    async waitHookJob({ namespace, name, timeoutSeconds }) {
      const ctx = currentContext();
      const end = Date.now() + timeoutSeconds * 1000;
      for (;;) {
        ctx?.heartbeat();
        const job = await port.readJob(namespace, name);
        if (!job) return { succeeded: false, message: `job ${namespace}/${name} was deleted` };
        const pods = job.status?.failed ? await port.listJobPods(namespace, name) : [];
        const done = jobEnd(job, pods);
        if (done) return done;
        if (Date.now() >= end)
          return {
            succeeded: false,
            message: `job ${namespace}/${name} did not complete within ${timeoutSeconds} s`,
          };
        await (ctx ? ctx.sleep(JOB_POLL_MS) : new Promise((r) => setTimeout(r, JOB_POLL_MS)));
      }
    },
  };
}
