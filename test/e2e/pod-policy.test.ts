// test-lane: parallel
/**
 * The per-pod drain policy on the real stack (kube-apiserver, kube-controller-manager, kwok,
 * Temporal dev server, a `drainflow run --worker` process; plan workflows started directly, no
 * operator):
 *
 * - spec.podOrder: a "clients" group (order 0) leaves before a "storage" group (namespace labelled
 *   role=storage, order 10). Both groups' pods carry a finalizer the test holds for 3 s, so a
 *   storage pod evicted before the clients were gone would show a deletionTimestamp within that
 *   time; the assertion is on the pods' deletionTimestamps (storage ≥ clients + 3 s) and on
 *   status.nodes[].currentOrder (0, then 10);
 * - a bare pod labelled `drainflow.dev/drain: skip` is never evicted, does not block (without the
 *   label a pod without a controller would), and is listed in status.nodes[].skipped;
 * - a bare pod labelled `cluster.x-k8s.io/drain: wait-completed` is never evicted and blocks the
 *   node (blocker WaitCompleted) until it finishes (status.phase Succeeded);
 * - a pod annotated `karpenter.sh/do-not-disrupt: "true"` blocks (DoNotDisrupt) and is never evicted
 *   until the annotation is removed, then it is evicted like any other;
 * - a pod held by a finalizer counts as gone eviction.skipWaitForDeleteTimeoutSeconds (5) after its
 *   deletionTimestamp: listed as skipped (DeleteTimeoutPassed) with a Warning Event, while the pod
 *   is still there.
 *
 * - a namespaceSelector needs `namespaces: [list]`: an observation as a ServiceAccount without it
 *   fails at once, non-retryable, naming the refused list and the permission to grant.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RbacAuthorizationV1Api, type V1Pod } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/activity';
import { pino } from 'pino';
import { createObserveNode } from '../../src/activities/observe.js';
import { WatchCache } from '../../src/k8s/watch-cache.js';
import type { MaintenancePlanSpecInput, MaintenancePlanStatus } from '../../src/api/plan.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { planFinished, readPlanStatus, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePod,
  serviceAccountKubeConfig,
  sleep,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { MERGE_PATCH, createTaintedNode, directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';

const TAINT_KEY = 'drainflow.dev/e2e-pod-policy';
const HOLD = 'drainflow.dev/e2e-hold';

describe('pod policy on the real stack', () => {
  const h = directHarness('pod-policy-e2e', 'pod-policy-run');
  let c: Clients;
  const namespaces: string[] = [];
  const nodes: string[] = [];
  const workflowIds: string[] = [];
  const plans: string[] = [];

  /**
   * A Deployment of `replicas` pods pinned to `node`, each holding the finalizer {@link HOLD}
   * (unless `hold` is false) and carrying `annotations`.
   */
  async function heldDeployment(
    ns: string,
    name: string,
    node: string,
    replicas: number,
    opts: { hold?: boolean; annotations?: Record<string, string> } = {},
  ): Promise<V1Pod[]> {
    const d = makeDeployment(ns, name, replicas, opts.annotations ? { annotations: opts.annotations } : {});
    const tpl = d.spec!.template;
    if (opts.hold !== false) tpl.metadata = { ...tpl.metadata, finalizers: [HOLD] };
    tpl.spec!.nodeSelector = { 'kubernetes.io/hostname': node };
    tpl.spec!.tolerations = [{ key: TAINT_KEY, operator: 'Equal', value: 'x', effect: 'NoSchedule' }];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    return waitPodsReady(c, ns, { app: name }, replicas);
  }

  /** The pod as it is now, `undefined` once gone (or replaced by another of the same name). */
  async function podNow(p: V1Pod): Promise<V1Pod | undefined> {
    const now = await c.core
      .readNamespacedPod({ namespace: p.metadata!.namespace!, name: p.metadata!.name! })
      .catch(() => undefined);
    return now?.metadata?.uid === p.metadata!.uid ? now : undefined;
  }

  /** Removes the finalizers of these pods (so they can go). */
  async function release(pods: V1Pod[]): Promise<void> {
    for (const p of pods)
      await c.core
        .patchNamespacedPod(
          {
            namespace: p.metadata!.namespace!,
            name: p.metadata!.name!,
            body: { metadata: { finalizers: null } },
          },
          MERGE_PATCH,
        )
        .catch(() => undefined);
  }

  async function startPlan(name: string, spec: MaintenancePlanSpecInput): Promise<string> {
    const { uid, workflowId } = await h.startDirectPlan(name, spec);
    plans.push(name);
    workflowIds.push(workflowId);
    return uid;
  }

  const finished = (name: string): Promise<MaintenancePlanStatus> => planFinished(c, name);

  before(async () => {
    await h.connect();
    c = h.c;
    h.worker = await startWorkerProcess(h.opts.taskQueue, drainflowEnv());
  });

  after(async () => {
    for (const id of workflowIds) {
      const handle = h.client.workflow.getHandle(id);
      await handle.signal(abortSignal).catch(() => undefined);
      const giveUp = new Promise((resolve) => setTimeout(resolve, 20_000).unref());
      await Promise.race([handle.result().catch(() => undefined), giveUp]);
    }
    await h.stop();
    if (!c) return;
    for (const name of plans) await h.deletePlanObject(name).catch(() => undefined);
    for (const ns of namespaces) {
      const pods = (await c.core.listNamespacedPod({ namespace: ns }).catch(() => undefined))?.items ?? [];
      await release(pods);
      await deleteNamespace(c, ns).catch(() => undefined);
    }
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  it('podOrder drains the clients group before the storage group; a skip-labelled pod stays and is listed', async (t) => {
    const node = await createTaintedNode(c, 'order-node', { taint: { key: TAINT_KEY, value: 'x' } });
    nodes.push(node);
    const clientsNs = await createNamespace(c, 'clients');
    const storageNs = await createNamespace(c, 'storage');
    namespaces.push(clientsNs, storageNs);
    await c.core.patchNamespace(
      { name: storageNs, body: { metadata: { labels: { role: 'storage' } } } },
      MERGE_PATCH,
    );
    const clients = await heldDeployment(clientsNs, 'client', node, 2);
    const storage = await heldDeployment(storageNs, 'osd', node, 2);
    // No controller: without the label it would block the node (NoController).
    await c.core.createNamespacedPod({
      namespace: clientsNs,
      body: makePod(clientsNs, 'keep', {
        nodeName: node,
        labels: { app: 'keep', 'drainflow.dev/drain': 'skip' },
      }),
    });
    const [keep] = await waitPodsReady(c, clientsNs, { app: 'keep' }, 1);

    const planName = uniqueName('order-plan');
    await startPlan(planName, {
      nodeNames: [node],
      drainTimeoutSeconds: 300,
      podOrder: [{ namespaceSelector: { matchLabels: { role: 'storage' } }, order: 10 }],
    });

    // The clients are evicted (terminating, held by the finalizer); the storage pods are not.
    const clientDeleted = await waitFor(
      async () => {
        const now = await Promise.all(clients.map(podNow));
        return now.every((p) => p?.metadata?.deletionTimestamp) ? (now as V1Pod[]) : undefined;
      },
      30_000,
      { what: 'both client pods evicted', intervalMs: 100 },
    );
    const during = await waitFor(
      async () => {
        const st = await readPlanStatus(c, planName);
        return st?.nodes?.[0]?.currentOrder === 0 ? st : undefined;
      },
      10_000,
      { what: 'currentOrder 0 in status', intervalMs: 200 },
    );
    assert.match(during.nodes![0]!.message ?? '', /order group 0 first/, showStatus(during));
    await sleep(3000);
    for (const p of await Promise.all(storage.map(podNow)))
      assert.equal(
        p?.metadata?.deletionTimestamp,
        undefined,
        'no storage pod evicted while the clients terminate',
      );
    await release(clientDeleted);

    const storageDeleted = await waitFor(
      async () => {
        const now = await Promise.all(storage.map(podNow));
        return now.every((p) => p?.metadata?.deletionTimestamp) ? (now as V1Pod[]) : undefined;
      },
      30_000,
      { what: 'both storage pods evicted', intervalMs: 100 },
    );
    const ms = (p: V1Pod) => new Date(p.metadata!.deletionTimestamp as unknown as string).getTime();
    const lastClient = Math.max(...clientDeleted.map(ms));
    const firstStorage = Math.min(...storageDeleted.map(ms));
    t.diagnostic(
      `first storage deletionTimestamp ${(firstStorage - lastClient) / 1000} s after the last client's`,
    );
    assert.ok(
      firstStorage - lastClient >= 3000,
      `storage evicted ${(firstStorage - lastClient) / 1000} s after the last client (held 3 s)`,
    );
    const storageNow = await waitFor(
      async () => {
        const st = await readPlanStatus(c, planName);
        return st?.nodes?.[0]?.currentOrder === 10 ? st : undefined;
      },
      10_000,
      { what: 'currentOrder 10 in status', intervalMs: 200 },
    );
    assert.equal(storageNow.nodes![0]!.phase, 'Draining');
    await release(storageDeleted);

    const final = await finished(planName);
    assert.equal(final.phase, 'Drained', showStatus(final));
    assert.equal(final.evictionProgress?.evicted, 4, showStatus(final));
    assert.deepEqual(
      final.nodes?.[0]?.skipped?.map((s) => [s.pod, s.reason]),
      [[`${clientsNs}/keep`, 'DrainLabelSkip']],
      showStatus(final),
    );
    const kept = await podNow(keep!);
    assert.ok(kept, 'the skip-labelled pod is still there');
    assert.equal(kept.metadata?.deletionTimestamp, undefined, 'and was never evicted');
  });

  it('wait-completed blocks until the pod finishes; a pod stuck terminating counts as gone after skipWaitForDeleteTimeoutSeconds', async (t) => {
    const node = await createTaintedNode(c, 'wait-node', { taint: { key: TAINT_KEY, value: 'x' } });
    nodes.push(node);
    const ns = await createNamespace(c, 'wait');
    namespaces.push(ns);
    const [stuck] = await heldDeployment(ns, 'stuck', node, 1);
    await c.core.createNamespacedPod({
      namespace: ns,
      body: makePod(ns, 'job', {
        nodeName: node,
        labels: { app: 'job', 'cluster.x-k8s.io/drain': 'wait-completed' },
      }),
    });
    const [job] = await waitPodsReady(c, ns, { app: 'job' }, 1);
    const [guarded] = await heldDeployment(ns, 'guarded', node, 1, {
      hold: false,
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
    });

    const planName = uniqueName('wait-plan');
    const uid = await startPlan(planName, {
      nodeNames: [node],
      drainTimeoutSeconds: 300,
      eviction: { skipWaitForDeleteTimeoutSeconds: 5 },
    });
    const evicted = await waitFor(
      async () => {
        const p = await podNow(stuck!);
        return p?.metadata?.deletionTimestamp ? p : undefined;
      },
      30_000,
      { what: 'the held pod evicted', intervalMs: 100 },
    );
    const deletionMs = new Date(evicted.metadata!.deletionTimestamp as unknown as string).getTime();

    // Counted gone after the timeout while still there; the wait-completed pod still blocks.
    const timedOut = await waitFor(
      async () => {
        const st = await readPlanStatus(c, planName);
        return st?.nodes?.[0]?.skipped?.some((s) => s.reason === 'DeleteTimeoutPassed') ? st : undefined;
      },
      30_000,
      { what: 'the held pod counted gone', intervalMs: 200 },
    );
    const seenAt = Date.now();
    t.diagnostic(
      `counted gone, seen in status ${(seenAt - deletionMs) / 1000} s after its deletionTimestamp`,
    );
    assert.ok(
      seenAt - deletionMs >= 4000,
      `counted gone ${(seenAt - deletionMs) / 1000} s after its deletionTimestamp`,
    );
    assert.ok(await podNow(stuck!), 'the held pod is still there (terminating)');
    const n = timedOut.nodes![0]!;
    assert.notEqual(n.phase, 'Drained', showStatus(timedOut));
    assert.deepEqual(
      n.blockedBy?.map((b) => [b.pod, b.reason]),
      [
        [`${ns}/${guarded!.metadata!.name}`, 'DoNotDisrupt'],
        [`${ns}/job`, 'WaitCompleted'],
      ],
      showStatus(timedOut),
    );
    assert.match(n.blockedBy![1]!.message, /cluster\.x-k8s\.io\/drain=wait-completed/);
    await sleep(2000);
    for (const p of [job!, guarded!]) {
      const now = await podNow(p);
      assert.ok(now, `${p.metadata!.name} still there`);
      assert.equal(now.metadata?.deletionTimestamp, undefined, `${p.metadata!.name} is never evicted`);
    }
    assert.notEqual((await readPlanStatus(c, planName))?.phase, 'Drained');

    // The annotation goes: the pod is evicted like any other (the block clears by itself).
    await c.core.patchNamespacedPod(
      {
        namespace: ns,
        name: guarded!.metadata!.name!,
        body: { metadata: { annotations: { 'karpenter.sh/do-not-disrupt': null } } },
      },
      MERGE_PATCH,
    );
    await waitFor(
      async () => {
        const p = await podNow(guarded!);
        return p === undefined || p.metadata?.deletionTimestamp !== undefined;
      },
      30_000,
      { what: 'the pod evicted once its do-not-disrupt annotation is gone', intervalMs: 100 },
    );
    assert.notEqual(
      (await readPlanStatus(c, planName))?.phase,
      'Drained',
      'the wait-completed pod still holds it',
    );

    // The pod completes: the node is drained.
    await c.core.patchNamespacedPodStatus(
      { namespace: ns, name: 'job', body: { status: { phase: 'Succeeded' } } },
      MERGE_PATCH,
    );
    const final = await finished(planName);
    assert.equal(final.phase, 'Drained', showStatus(final));
    assert.deepEqual(
      final.nodes?.[0]?.skipped?.map((s) => [s.pod, s.reason]),
      [[`${ns}/${stuck!.metadata!.name}`, 'DeleteTimeoutPassed']],
      showStatus(final),
    );
    const events = await h.planEvents(planName, uid);
    const ev = events.find((e) => e.reason === 'DeleteTimeoutPassed');
    assert.ok(ev, `DeleteTimeoutPassed among ${events.map((e) => e.reason).join(', ')}`);
    assert.equal(ev.type, 'Warning');
    assert.match(ev.message ?? '', new RegExp(`${ns}/${stuck!.metadata!.name} still terminating 5 s after`));
  });
  it('a namespaceSelector without namespaces list permission fails the observation readably, at once', async () => {
    const ns = await createNamespace(c, 'no-ns-list');
    namespaces.push(ns);
    const node = await createTaintedNode(c, 'rbac-node', { taint: { key: TAINT_KEY, value: 'x' } });
    nodes.push(node);
    const rbac = c.kc.makeApiClient(RbacAuthorizationV1Api);
    const role = uniqueName('observer-no-ns');
    await rbac.createClusterRole({
      body: {
        metadata: { name: role },
        rules: [
          { apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['list', 'watch'] },
          { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['list', 'watch'] },
        ],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: role },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'ServiceAccount', name: 'observer', namespace: ns }],
      },
    });
    const kc = await serviceAccountKubeConfig(c, ns, 'observer');
    const logger = pino({ level: 'silent' });
    const cache = new WatchCache({ kubeConfig: kc, logger });
    try {
      const observe = createObserveNode({ kubeConfig: kc, logger, cache });
      const selection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };
      // Without a namespaceSelector no namespace is listed: the observation works.
      const ok = await waitFor(
        () =>
          observe({
            node,
            selection,
            maxWaitSeconds: 0,
            podOrder: [{ podSelector: { matchLabels: { app: 'a' } }, order: 1 }],
          }),
        30_000,
        { what: 'an observation as the ServiceAccount (RBAC propagates)' },
      );
      assert.equal(ok.changed, true);
      let refused: unknown;
      try {
        await observe({
          node,
          selection,
          maxWaitSeconds: 0,
          podOrder: [{ namespaceSelector: { matchLabels: { role: 'storage' } }, order: 1 }],
        });
      } catch (err) {
        refused = err;
      }
      assert.ok(refused instanceof ApplicationFailure, `an ApplicationFailure, got ${String(refused)}`);
      assert.equal(refused.nonRetryable, true);
      assert.equal(refused.type, 'KubernetesApiError');
      assert.match(
        refused.message,
        /listing namespaces for spec\.podOrder\[\]\.namespaceSelector failed: HTTP 403: .*grant the worker's ClusterRole namespaces: \[list\]/s,
      );
    } finally {
      await cache.close();
      await rbac.deleteClusterRoleBinding({ name: role }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
    }
  });
});
