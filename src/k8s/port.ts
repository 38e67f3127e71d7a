/**
 * The Kubernetes calls of the drain activities, as one port: {@link KubernetesPort} is what
 * src/activities depends on, {@link createKubernetesPort} the implementation over
 * `@kubernetes/client-node` (unit tests pass a fake).
 *
 * Every method either answers (reads answer `undefined` for 404; guarded writes answer `'conflict'`
 * for 409 and `'gone'` for 404) or throws a classified error ({@link classifyError}): a
 * {@link TransientKubernetesError} for transport errors, 408, 429 and 5xx, a
 * {@link PermanentKubernetesError} for other 4xx. The exception is {@link KubernetesPort.evictPod},
 * which hands back the raw answer for the eviction activity's own classification.
 *
 * RBAC: nodes get/list/patch (and patch nodes/status); pods get/list (and delete for onDeadline
 * DeletePods, which the shipped RBAC does not grant); pods/eviction create;
 * poddisruptionbudgets list; replicasets, statefulsets (apps), jobs (batch) and
 * replicationcontrollers get (preflight reads a pod's controller); maintenanceplans get and maintenanceplans/status update;
 * events get/create/patch in `default`.
 */
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  Observable,
  PolicyV1Api,
  ResponseContext,
  type ConfigurationOptions,
  type KubeConfig,
  type ObservableMiddleware,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
} from './client.js';
import type { Logger } from 'pino';
import { PLURAL, type MaintenancePlan, type MaintenancePlanStatus } from '../api/plan.js';
import type { EvictInput } from '../contract/eviction.js';
import type { ControllerObject, OwnerRef } from '../drain/preflight-returning.js';
import { apiCode, classifyError, isApiException, type RawAnswer } from './errors.js';
import { EventRecorder, type PlanEvent } from './events.js';
import { MERGE_PATCH, STRATEGIC_MERGE_PATCH } from './patch.js';
import { allNodes } from './node-claim.js';
import { PlanApi } from './plans.js';

/** Page size of list calls. */
export const LIST_PAGE_SIZE = 500;

/** The Kubernetes calls the activities make. See the module comment for the error contract. */
export interface KubernetesPort {
  /** Every Node, one page (`GET /api/v1/nodes?limit=500`) at a time, so a large cluster is never held whole. */
  listNodes(): AsyncIterable<V1Node>;
  /** One Node, `undefined` when absent. */
  readNode(name: string): Promise<V1Node | undefined>;
  /**
   * A JSON merge patch of a Node; a `metadata.resourceVersion` in `patch` guards it.
   * @returns the patched Node, `'conflict'` on 409, `'gone'` on 404.
   */
  patchNode(name: string, patch: object): Promise<V1Node | 'conflict' | 'gone'>;
  /**
   * A strategic merge patch of a Node's status subresource (`PATCH /api/v1/nodes/{n}/status`):
   * `status.conditions` entries merge by `type` (other writers' conditions stay), an entry
   * `{type, $patch: 'delete'}` removes one. A `metadata.resourceVersion` in `patch` guards it.
   * @returns the patched Node, `'conflict'` on 409, `'gone'` on 404.
   */
  patchNodeStatus(name: string, patch: object): Promise<V1Node | 'conflict' | 'gone'>;
  /** Every Pod bound to the node (`fieldSelector spec.nodeName=<node>`, all namespaces, paged). */
  listNodePods(node: string): Promise<V1Pod[]>;
  /** Every policy/v1 PodDisruptionBudget of the namespace (paged). */
  listPdbs(namespace: string): Promise<V1PodDisruptionBudget[]>;
  /**
   * One pod controller (`GET` of a ReplicaSet, StatefulSet, Job or ReplicationController), as
   * preflight reads it for its pod template; `undefined` when absent.
   */
  readController(ref: OwnerRef): Promise<ControllerObject | undefined>;
  /** One Pod, `undefined` when absent. */
  readPod(namespace: string, name: string): Promise<V1Pod | undefined>;
  /**
   * Sends one Eviction (`POST .../pods/{name}/eviction`, policy/v1, `deleteOptions.preconditions.uid`
   * and the optional `gracePeriodSeconds`; with `dryRun`, `?dryRun=All` and `deleteOptions.dryRun`) and
   * hands back the server's raw answer, whatever its code. `signal` aborts the HTTP request (a signal already aborted sends nothing).
   *
   * @returns the answer; `'aborted'` when `signal` aborted before an answer arrived.
   * @throws TransientKubernetesError when no answer came for another reason (transport error).
   */
  evictPod(input: EvictInput, signal?: AbortSignal): Promise<RawAnswer | 'aborted'>;
  /**
   * DELETE of the pod, without the Eviction API (PodDisruptionBudgets are bypassed), with the pod's
   * UID as precondition and the given grace period (at least 1 s: 0 would mean "now, forcefully").
   * @returns `'deleted'` (the pod is terminating now), `'gone'` on 404 and on 409 (the precondition
   *   failed: another pod holds the name now).
   * @throws TransientKubernetesError / PermanentKubernetesError like the other calls.
   */
  deletePod(input: {
    namespace: string;
    name: string;
    uid: string;
    gracePeriodSeconds: number;
  }): Promise<'deleted' | 'gone'>;
  /** One MaintenancePlan as raw JSON, `undefined` when absent. */
  readPlan(name: string): Promise<MaintenancePlan | undefined>;
  /**
   * PUT of the status subresource of `plan` as read (its resourceVersion guards it).
   * @returns `'written'`, `'conflict'` on 409, `'gone'` on 404.
   */
  replacePlanStatus(
    plan: MaintenancePlan,
    status: MaintenancePlanStatus,
  ): Promise<'written' | 'conflict' | 'gone'>;
  /** Records an Event on a plan; best effort, never throws ({@link EventRecorder.record}). */
  recordEvent(event: PlanEvent): Promise<void>;
}

/**
 * The {@link KubernetesPort} over one KubeConfig: API clients created once, every call to the
 * current context's cluster.
 *
 * @param kubeConfig where and as whom to reach the API server.
 * @param log for failed Event recordings.
 */
export function createKubernetesPort(kubeConfig: KubeConfig, log: Logger): KubernetesPort {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const policy = kubeConfig.makeApiClient(PolicyV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const batch = kubeConfig.makeApiClient(BatchV1Api);
  const plans = new PlanApi(kubeConfig);
  const events = new EventRecorder(kubeConfig, log);

  /** Follows `continue` tokens until the last page, classifying errors as `what`. */
  async function listAll<T>(
    what: string,
    page: (cont: string | undefined) => Promise<{ items: T[]; metadata?: { _continue?: string } }>,
  ): Promise<T[]> {
    const out: T[] = [];
    let cont: string | undefined;
    do {
      let p;
      try {
        p = await page(cont);
      } catch (err) {
        throw classifyError(err, what);
      }
      out.push(...p.items);
      cont = p.metadata?._continue || undefined;
    } while (cont);
    return out;
  }

  return {
    async *listNodes() {
      try {
        yield* allNodes(core);
      } catch (err) {
        throw classifyError(err, 'list nodes');
      }
    },

    async readNode(name) {
      try {
        return await core.readNode({ name });
      } catch (err) {
        if (apiCode(err) === 404) return undefined;
        throw classifyError(err, `get node ${name}`);
      }
    },

    async patchNode(name, patch) {
      try {
        return await core.patchNode({ name, body: patch }, MERGE_PATCH);
      } catch (err) {
        const code = apiCode(err);
        if (code === 409) return 'conflict';
        if (code === 404) return 'gone';
        throw classifyError(err, `patch node ${name}`);
      }
    },

    async patchNodeStatus(name, patch) {
      try {
        return await core.patchNodeStatus({ name, body: patch }, STRATEGIC_MERGE_PATCH);
      } catch (err) {
        const code = apiCode(err);
        if (code === 409) return 'conflict';
        if (code === 404) return 'gone';
        throw classifyError(err, `patch node ${name} status`);
      }
    },

    listNodePods: (node) =>
      listAll(`list pods of node ${node}`, (cont) =>
        core.listPodForAllNamespaces({
          fieldSelector: `spec.nodeName=${node}`,
          limit: LIST_PAGE_SIZE,
          _continue: cont,
        }),
      ),

    listPdbs: (namespace) =>
      listAll(`list poddisruptionbudgets in ${namespace}`, (cont) =>
        policy.listNamespacedPodDisruptionBudget({ namespace, limit: LIST_PAGE_SIZE, _continue: cont }),
      ),

    async readController({ kind, namespace, name }) {
      try {
        switch (kind) {
          case 'ReplicaSet':
            return await apps.readNamespacedReplicaSet({ name, namespace });
          case 'StatefulSet':
            return await apps.readNamespacedStatefulSet({ name, namespace });
          case 'Job':
            return await batch.readNamespacedJob({ name, namespace });
          case 'ReplicationController':
            return await core.readNamespacedReplicationController({ name, namespace });
        }
      } catch (err) {
        if (apiCode(err) === 404) return undefined;
        throw classifyError(err, `get ${kind} ${namespace}/${name}`);
      }
    },

    async readPod(namespace, name) {
      try {
        return await core.readNamespacedPod({ name, namespace });
      } catch (err) {
        if (apiCode(err) === 404) return undefined;
        throw classifyError(err, `get pod ${namespace}/${name}`);
      }
    },

    async deletePod({ namespace, name, uid, gracePeriodSeconds }) {
      try {
        await core.deleteNamespacedPod({
          name,
          namespace,
          body: { preconditions: { uid }, gracePeriodSeconds: Math.max(1, gracePeriodSeconds) },
        });
        return 'deleted';
      } catch (err) {
        const code = apiCode(err);
        if (code === 404 || code === 409) return 'gone';
        throw classifyError(err, `delete pod ${namespace}/${name}`);
      }
    },
    async evictPod(input, signal) {
      const { namespace, name, uid } = input;
      const deleteOptions: {
        preconditions: { uid: string };
        gracePeriodSeconds?: number;
        dryRun?: string[];
      } = { preconditions: { uid } };
      if (input.gracePeriodSeconds !== undefined) deleteOptions.gracePeriodSeconds = input.gracePeriodSeconds;
      // Preflight: dry run in the query (what the API server's request metrics label) and in DeleteOptions.
      if (input.dryRun) deleteOptions.dryRun = ['All'];
      const capture = captureAnswer(signal);
      try {
        await core.createNamespacedPodEviction(
          {
            name,
            namespace,
            body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions },
            ...(input.dryRun ? { dryRun: 'All' } : {}),
          },
          capture.options,
        );
      } catch (err) {
        const answer = capture.answer();
        if (answer !== undefined) return answer;
        if (signal?.aborted) return 'aborted';
        if (isApiException(err)) {
          return {
            code: err.code,
            headers: err.headers ?? {},
            text: typeof err.body === 'string' ? err.body : JSON.stringify(err.body ?? ''),
          };
        }
        throw classifyError(err, `evict pod ${namespace}/${name}`);
      }
      // The middleware saw every answer that reached the client; an empty 201 stands for none.
      return capture.answer() ?? { code: 201, headers: {}, text: '' };
    },

    async readPlan(name) {
      try {
        return await plans.get(name);
      } catch (err) {
        throw classifyError(err, `get ${PLURAL}/${name}`);
      }
    },

    async replacePlanStatus(plan, status) {
      try {
        await plans.replaceStatus(plan, status);
        return 'written';
      } catch (err) {
        const code = apiCode(err);
        if (code === 409) return 'conflict';
        if (code === 404) return 'gone';
        throw classifyError(err, `update ${PLURAL}/${plan.metadata.name}/status`);
      }
    },

    recordEvent: (event) => events.record(event),
  };
}

/**
 * A per-call middleware that keeps the raw answer (code, headers, body text) of the request, so an
 * answer can be classified from its real body whatever the generated client makes of it (it would
 * deserialize a `Status` body of a 201 into an empty `V1Eviction`, and keeps error bodies as text).
 *
 * With `signal`, its `pre` hook sets the signal on the request (`RequestContext.setSignal`):
 * client-node 2.0.1 sends requests with undici's `fetch(url, { ..., signal: request.getSignal() })`
 * (dist/gen/http/isomorphic-fetch.js), which rejects at once without sending when the signal is
 * already aborted, and otherwise aborts the connection (and a body still being read) when it aborts,
 * rejecting with the signal's reason.
 */
function captureAnswer(signal?: AbortSignal): {
  options: ConfigurationOptions<ObservableMiddleware>;
  answer: () => RawAnswer | undefined;
} {
  let captured: RawAnswer | undefined;
  const middleware: ObservableMiddleware = {
    pre: (ctx) => {
      if (signal) ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (resp) =>
      new Observable(
        (async () => {
          const text = await resp.body.text();
          captured = { code: resp.httpStatusCode, headers: { ...resp.headers }, text };
          return new ResponseContext(resp.httpStatusCode, resp.headers, {
            text: () => Promise.resolve(text),
            binary: () => Promise.resolve(Buffer.from(text)),
            stream: () => null,
          });
        })(),
      ),
  };
  return {
    options: { middleware: [middleware], middlewareMergeStrategy: 'append' },
    answer: () => captured,
  };
}
