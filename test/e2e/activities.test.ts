// test-lane: parallel
/**
 * End-to-end tests of the drain activities (src/activities/index.ts) against a real Kubernetes API:
 * the local stack (`bash scripts/stack/stack.sh up`, then `eval "$(bash scripts/stack/stack.sh env)"`).
 * Without KUBECONFIG every test fails with that instruction; none is skipped.
 *
 * Each test works in its own namespace; tests that cordon work on a node created for them (deleted
 * afterwards), so they never disturb the shared kwok-node-* nodes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubernetesObject } from '@kubernetes/client-node';
import { CancelledFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import { createActivities } from '../../src/activities/index.js';
import { claimingPlan, deletePlanObject } from '../helpers/direct-plan.js';
import { checkPod, listNodePods, waitDisruptionAllowed, waitPodGone } from '../helpers/pod-probes.js';
import type { DrainActivities } from '../../src/activities/types.js';
import type { EvictResult } from '../../src/contract/eviction.js';
import {
  API_VERSION,
  GROUP,
  KIND,
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  NODE_CLAIM_NODE_UID_ANNOTATION,
  PLURAL,
  VERSION,
  type MaintenancePlanStatus,
  type PodSelection,
} from '../../src/api/plan.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  ignoreNotFound,
  kubeConfig,
  makeDaemonSet,
  makeDeployment,
  makePdb,
  makePod,
  serviceAccountKubeConfig,
  setUnschedulable,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodReady,
  waitPodsReady,
  type Clients,
  withoutVersions,
} from '../helpers/k8s.js';

const DEFAULT_SELECTION: PodSelection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };
const logger = pino({ level: process.env.E2E_LOG_LEVEL ?? 'silent' });

let c: Clients;
let acts: DrainActivities;
/** Cleanups run in reverse order after all tests. */
const cleanups: Array<() => Promise<unknown>> = [];

before(() => {
  c = clients(kubeConfig()); // throws a clear error when KUBECONFIG is unset
  acts = createActivities({ kubeConfig: c.kc, logger });
});

after(async () => {
  for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
});

async function namespace(): Promise<string> {
  const ns = await createNamespace(c);
  cleanups.push(() => deleteNamespace(c, ns));
  return ns;
}

async function testNode(
  opts: { unschedulable?: boolean; labels?: Record<string, string> } = {},
): Promise<string> {
  const node = await createNode(c, 'df-e2e-node', opts);
  cleanups.push(() => deleteNode(c, node));
  return node;
}

/** A plan that exists, for the claims this file writes (see claimingPlan); deleted at the end. */
async function claimOwner(): Promise<{ name: string; uid: string }> {
  await applyCrds(c);
  const plan = await claimingPlan(c, 'df-e2e-plan');
  cleanups.push(() => deletePlanObject(c, plan.name));
  return plan;
}

function uidOf(pod: { metadata?: { uid?: string } }): string {
  const uid = pod.metadata?.uid;
  assert.ok(uid, 'pod has a uid');
  return uid;
}

function nameOf(pod: { metadata?: { name?: string } }): string {
  const name = pod.metadata?.name;
  assert.ok(name, 'pod has a name');
  return name;
}

describe('evictPod classifies every Eviction API answer', { timeout: 180_000 }, () => {
  it('201 → Evicted, and waitPodGone sees the pod go within its grace period', async () => {
    const ns = await namespace();
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'web', 2, { nodeName: 'kwok-node-0' }),
    });
    const [pod] = await waitPodsReady(c, ns, { app: 'web' }, 2);
    assert.ok(pod);
    const result = await acts.evictPod({ namespace: ns, name: nameOf(pod), uid: uidOf(pod) });
    assert.deepEqual(result, { outcome: 'Evicted' });
    const t0 = Date.now();
    const gone = await waitPodGone(c, {
      namespace: ns,
      name: nameOf(pod),
      uid: uidOf(pod),
      timeoutSeconds: 30,
    });
    assert.deepEqual(gone, { gone: true });
    assert.ok(Date.now() - t0 < 15_000, `pod gone after ${Date.now() - t0} ms`);
    assert.equal(await checkPod(c, { namespace: ns, name: nameOf(pod), uid: uidOf(pod) }), 'Gone');
  });

  it('404 → Gone for a deleted pod; UID-precondition 409 → Gone for a re-created name', async () => {
    const ns = await namespace();
    const missing = await acts.evictPod({
      namespace: ns,
      name: 'never-existed',
      uid: '00000000-0000-0000-0000-000000000000',
    });
    assert.deepEqual(missing, { outcome: 'Gone' });

    await c.core.createNamespacedPod({
      namespace: ns,
      body: makePod(ns, 'solo', { nodeName: 'kwok-node-0' }),
    });
    const pod = await waitPodReady(c, ns, 'solo');
    const wrongUid = await acts.evictPod({
      namespace: ns,
      name: 'solo',
      uid: '11111111-1111-1111-1111-111111111111',
    });
    assert.deepEqual(wrongUid, { outcome: 'Gone' }, 'the pod with that uid does not exist');
    assert.equal(await checkPod(c, { namespace: ns, name: 'solo', uid: uidOf(pod) }), 'Present');
    assert.equal(await checkPod(c, { namespace: ns, name: 'solo', uid: 'other' }), 'Gone');

    await c.core.deleteNamespacedPod({ namespace: ns, name: 'solo', gracePeriodSeconds: 0 });
    await waitFor(
      async () =>
        (await ignoreNotFound(() => c.core.readNamespacedPod({ namespace: ns, name: 'solo' }))) === undefined,
      30_000,
      { what: 'pod deleted' },
    );
    const deleted = await acts.evictPod({ namespace: ns, name: 'solo', uid: uidOf(pod) });
    assert.deepEqual(deleted, { outcome: 'Gone' });
  });

  it('429 from a PDB with maxUnavailable 0 → TooManyRequests/DisruptionBudget, no Retry-After, PDB key', async () => {
    const ns = await namespace();
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'db', 1, { nodeName: 'kwok-node-1' }),
    });
    const [pod] = await waitPodsReady(c, ns, { app: 'db' }, 1);
    assert.ok(pod);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'db-pdb', { app: 'db' }, { maxUnavailable: 0 }),
    });
    await waitPdb(c, ns, 'db-pdb', (p) => p.status?.currentHealthy === 1);
    const result = await acts.evictPod({ namespace: ns, name: nameOf(pod), uid: uidOf(pod) });
    assert.equal(result.outcome, 'TooManyRequests');
    const r = result as Extract<EvictResult, { outcome: 'TooManyRequests' }>;
    assert.equal(r.cause, 'DisruptionBudget');
    assert.equal(r.retryAfterSeconds, undefined, 'no Retry-After when the budget allows no disruption');
    assert.equal(r.pdb, `${ns}/db-pdb`);
    assert.match(r.message, /disruption budget/);

    const pods = await listNodePods(c, { node: 'kwok-node-1', selection: DEFAULT_SELECTION });
    const item = pods.pods.find((p) => p.key === `${ns}/${nameOf(pod)}`);
    assert.deepEqual(item?.pdbs, [`${ns}/db-pdb`]);
    assert.deepEqual(
      withoutVersions(pods.pdbs).find((p) => p.key === `${ns}/db-pdb`),
      { key: `${ns}/db-pdb`, disruptionsAllowed: 0 },
    );

    // The PDB never allows a disruption: the wait ends at its timeout.
    const t0 = Date.now();
    const waited = await waitDisruptionAllowed(c, { pdb: `${ns}/db-pdb`, timeoutSeconds: 2 });
    assert.deepEqual(waited, { disruptionsAllowed: 0, exists: true });
    assert.ok(Date.now() - t0 >= 1900 && Date.now() - t0 < 6000, `waited ${Date.now() - t0} ms`);
  });

  it('maxUnavailable 1: first eviction 201, second 429 until the replacement is Ready, then 201', async () => {
    const ns = await namespace();
    // Replacement pods become Ready 4 s after they are bound, so the budget stays spent for a while.
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'api', 2, { nodeName: 'kwok-node-2', readyDelay: '4s' }),
    });
    const [a, b] = await waitPodsReady(c, ns, { app: 'api' }, 2);
    assert.ok(a && b);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'api-pdb', { app: 'api' }, { maxUnavailable: 1 }),
    });
    await waitPdb(c, ns, 'api-pdb', (p) => p.status?.disruptionsAllowed === 1);

    assert.deepEqual(await acts.evictPod({ namespace: ns, name: nameOf(a), uid: uidOf(a) }), {
      outcome: 'Evicted',
    });
    const second = await acts.evictPod({ namespace: ns, name: nameOf(b), uid: uidOf(b) });
    assert.equal(second.outcome, 'TooManyRequests');
    const r = second as Extract<EvictResult, { outcome: 'TooManyRequests' }>;
    assert.equal(r.cause, 'DisruptionBudget');
    assert.equal(r.retryAfterSeconds, undefined);
    assert.equal(r.pdb, `${ns}/api-pdb`);

    // The watch reacts as soon as the disruption controller raises disruptionsAllowed again.
    const t0 = Date.now();
    const waited = await waitDisruptionAllowed(c, { pdb: `${ns}/api-pdb`, timeoutSeconds: 60 });
    const waitedMs = Date.now() - t0;
    assert.deepEqual(waited, { disruptionsAllowed: 1, exists: true });
    assert.ok(waitedMs >= 1000, `budget came back after ${waitedMs} ms (replacement ready delay is 4 s)`);
    assert.deepEqual(await acts.evictPod({ namespace: ns, name: nameOf(b), uid: uidOf(b) }), {
      outcome: 'Evicted',
    });

    // A deleted PDB ends the wait at once with exists: false.
    await c.policy.deleteNamespacedPodDisruptionBudget({ namespace: ns, name: 'api-pdb' });
    assert.deepEqual(await waitDisruptionAllowed(c, { pdb: `${ns}/api-pdb`, timeoutSeconds: 30 }), {
      disruptionsAllowed: 0,
      exists: false,
    });
  });

  it('429 while the PDB spec is not yet processed → DisruptionBudget with Retry-After 10', async () => {
    const ns = await namespace();
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'q', 2, { nodeName: 'kwok-node-1' }),
    });
    const [pod] = await waitPodsReady(c, ns, { app: 'q' }, 2);
    assert.ok(pod);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'q-pdb', { app: 'q' }, { minAvailable: 2 }),
    });
    await waitPdb(c, ns, 'q-pdb');
    // Both budgets (minAvailable 2 or 3 of 2 pods) forbid any disruption, so no call evicts. Right after
    // a spec change the disruption controller has not caught up (observedGeneration < generation):
    // the API server answers "still being processed" with Retry-After 10. That window is a few
    // milliseconds, hence the loop.
    const seen: Array<number | undefined> = [];
    let processing: Extract<EvictResult, { outcome: 'TooManyRequests' }> | undefined;
    for (let i = 0; i < 100 && !processing; i++) {
      // Evict while the spec change is in flight (measured here: ~60% of calls hit the window;
      // awaiting the patch first, none did: the controller catches up within the client's round trip).
      const patched = c.policy.patchNamespacedPodDisruptionBudget(
        { namespace: ns, name: 'q-pdb', body: { spec: { minAvailable: i % 2 === 0 ? 3 : 2 } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const r = await acts.evictPod({ namespace: ns, name: nameOf(pod), uid: uidOf(pod) });
      await patched;
      assert.equal(r.outcome, 'TooManyRequests', JSON.stringify(r));
      const t = r as Extract<EvictResult, { outcome: 'TooManyRequests' }>;
      assert.equal(t.cause, 'DisruptionBudget');
      assert.equal(t.pdb, `${ns}/q-pdb`);
      seen.push(t.retryAfterSeconds);
      if (t.retryAfterSeconds !== undefined) processing = t;
    }
    assert.ok(processing, `no "still being processed" answer in ${seen.length} tries`);
    assert.equal(processing.retryAfterSeconds, 10);
    assert.match(processing.message, /still being processed/);
  });

  it('429 from API Priority and Fairness (plain-text body) → Throttled with the Retry-After header', async () => {
    const ns = await namespace();
    const sa = 'throttled';
    const kc = await serviceAccountKubeConfig(c, ns, sa);
    await c.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'evictor', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] }],
    } as KubernetesObject);
    await c.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'evictor', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'evictor' },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    } as KubernetesObject);
    // A priority level with no seats that rejects instead of queueing, for this ServiceAccount only.
    // APF still dispatches a request when nothing of that level executes, so one slow request is
    // kept running (an eviction of a terminating pod with a stale UID: the API server retries its
    // conflict for ~10 s) while the activity's call arrives.
    const plc = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: ns },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 0,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: 'Reject' },
        },
      },
    } as KubernetesObject;
    const fs = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: ns },
      spec: {
        priorityLevelConfiguration: { name: ns },
        matchingPrecedence: 100,
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          {
            subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: sa, namespace: ns } }],
            resourceRules: [
              { verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true },
            ],
          },
        ],
      },
    } as KubernetesObject;
    const createdPlc = await c.objects.create(plc);
    cleanups.push(() => ignoreNotFound(() => c.objects.delete(plc)));
    await c.objects.create(fs);
    cleanups.push(() => ignoreNotFound(() => c.objects.delete(fs)));
    const saCore = kc.makeApiClient(CoreV1Api);
    await waitFor(
      async () => {
        try {
          await saCore.listNamespacedPod({ namespace: ns }); // forbidden by RBAC, classified by APF first
          return false;
        } catch (err) {
          const h = (err as { headers?: Record<string, string> }).headers ?? {};
          return h['x-kubernetes-pf-prioritylevel-uid'] === createdPlc.metadata?.uid;
        }
      },
      15_000,
      { what: 'the FlowSchema in effect' },
    );

    await c.core.createNamespacedPod({
      namespace: ns,
      body: makePod(ns, 'slow', { nodeName: 'kwok-node-2', terminationGracePeriodSeconds: 60 }),
    });
    await waitPodReady(c, ns, 'slow');
    await c.core.deleteNamespacedPod({ namespace: ns, name: 'slow' });
    const holdSeat = saCore
      .createNamespacedPodEviction({
        namespace: ns,
        name: 'slow',
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'slow', namespace: ns },
          deleteOptions: { preconditions: { uid: '22222222-2222-2222-2222-222222222222' } },
        },
      })
      .catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const saActs = createActivities({ kubeConfig: kc, logger });
    const result = await saActs.evictPod({
      namespace: ns,
      name: 'slow',
      uid: '33333333-3333-3333-3333-333333333333',
    });
    assert.equal(result.outcome, 'TooManyRequests', JSON.stringify(result));
    const t = result as Extract<EvictResult, { outcome: 'TooManyRequests' }>;
    assert.equal(t.cause, 'Throttled');
    assert.ok(
      t.retryAfterSeconds !== undefined && t.retryAfterSeconds >= 1 && t.retryAfterSeconds <= 32,
      `Retry-After ${t.retryAfterSeconds}`,
    );
    assert.equal(t.pdb, undefined);
    assert.match(t.message, /Too many requests/);
    const held = await holdSeat;
    assert.equal((held as { code?: number }).code, 409, 'the seat holder ended with the stale-UID conflict');
  });

  it('500 for a pod covered by two PDBs → Failed/MultiplePodDisruptionBudgets (not thrown, not retried)', async () => {
    const ns = await namespace();
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'cache', 2, {
        nodeName: 'kwok-node-0',
        labels: { app: 'cache', tier: 'backend' },
      }),
    });
    const [pod] = await waitPodsReady(c, ns, { app: 'cache' }, 2);
    assert.ok(pod);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'by-app', { app: 'cache' }, { maxUnavailable: 1 }),
    });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'by-tier', { tier: 'backend' }, { maxUnavailable: 1 }),
    });
    await waitPdb(c, ns, 'by-app', (p) => p.status?.disruptionsAllowed === 1);
    await waitPdb(c, ns, 'by-tier', (p) => p.status?.disruptionsAllowed === 1);
    const result = await acts.evictPod({ namespace: ns, name: nameOf(pod), uid: uidOf(pod) });
    assert.equal(result.outcome, 'Failed');
    const f = result as Extract<EvictResult, { outcome: 'Failed' }>;
    assert.equal(f.code, 500);
    assert.equal(f.reason, 'MultiplePodDisruptionBudgets');
    assert.match(f.message, /more than one PodDisruptionBudget/);
    assert.equal(await checkPod(c, { namespace: ns, name: nameOf(pod), uid: uidOf(pod) }), 'Present');

    const listed = await listNodePods(c, { node: 'kwok-node-0', selection: DEFAULT_SELECTION });
    assert.deepEqual(listed.pods.find((p) => p.key === `${ns}/${nameOf(pod)}`)?.pdbs, [
      `${ns}/by-app`,
      `${ns}/by-tier`,
    ]);
  });
});

describe('cordonNode / releaseNode', { timeout: 120_000 }, () => {
  it('claims and cordons a schedulable node, is idempotent, refuses other plans, and uncordons on release', async () => {
    const node = await testNode();
    const plan = await claimOwner();
    const other = await claimOwner();
    const nodeUid = (await c.core.readNode({ name: node })).metadata!.uid!;
    try {
      assert.deepEqual(await acts.cordonNode({ plan, node }), {
        outcome: 'Cordoned',
        wasUnschedulable: false,
        nodeUid,
      });
      let n = await c.core.readNode({ name: node });
      assert.equal(n.spec?.unschedulable, true);
      assert.equal(n.metadata?.annotations?.[NODE_CLAIM_NODE_UID_ANNOTATION], nodeUid);
      assert.equal(n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], plan.name);
      assert.equal(n.metadata?.annotations?.[NODE_CLAIM_UID_ANNOTATION], plan.uid);
      assert.equal(n.metadata?.annotations?.[NODE_WAS_UNSCHEDULABLE_ANNOTATION], 'false');

      // Retried activity: same answer, nothing rewritten. (The node-lifecycle controller reacts to
      // the cordon by adding the node.kubernetes.io/unschedulable taint: wait for that write first.)
      n = await waitFor(
        async () => {
          const x = await c.core.readNode({ name: node });
          return x.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/unschedulable') ? x : undefined;
        },
        30_000,
        { what: 'the unschedulable taint' },
      );
      const rv = n.metadata?.resourceVersion;
      assert.deepEqual(await acts.cordonNode({ plan, node }), {
        outcome: 'Cordoned',
        wasUnschedulable: false,
        nodeUid,
      });
      n = await c.core.readNode({ name: node });
      assert.equal(n.metadata?.resourceVersion, rv, 'idempotent cordon does not write');

      assert.deepEqual(await acts.cordonNode({ plan: other, node }), {
        outcome: 'HeldByOtherPlan',
        heldBy: plan.name,
      });
      // Same name, another uid (the plan was deleted and re-created): another plan.
      assert.deepEqual(await acts.cordonNode({ plan: { name: plan.name, uid: 'uid-recreated' }, node }), {
        outcome: 'HeldByOtherPlan',
        heldBy: plan.name,
      });
      assert.deepEqual(await acts.releaseNode({ plan: other, node, uncordon: true }), {
        uncordoned: false,
        left: 'notClaimed',
      });
      assert.equal(
        (await c.core.readNode({ name: node })).spec?.unschedulable,
        true,
        'other plan cannot release',
      );

      // Named by another Node's uid (one deleted before): this Node is not the claimed one.
      assert.deepEqual(await acts.releaseNode({ plan, node, uncordon: true, nodeUid: 'uid-gone' }), {
        uncordoned: false,
        left: 'replaced',
      });
      assert.deepEqual(await acts.cordonNode({ plan, node, nodeUid: 'uid-gone' }), {
        outcome: 'NodeReplaced',
        nodeUid,
      });
      assert.equal((await c.core.readNode({ name: node })).spec?.unschedulable, true);

      // The patch carries the node's uid beside the resourceVersion (the API server takes it).
      assert.deepEqual(await acts.releaseNode({ plan, node, uncordon: true, nodeUid }), { uncordoned: true });
      n = await c.core.readNode({ name: node });
      assert.ok(!n.spec?.unschedulable, 'uncordoned');
      for (const key of [
        NODE_CLAIM_ANNOTATION,
        NODE_CLAIM_UID_ANNOTATION,
        NODE_WAS_UNSCHEDULABLE_ANNOTATION,
        NODE_CLAIM_NODE_UID_ANNOTATION,
      ]) {
        assert.equal(n.metadata?.annotations?.[key], undefined, `${key} removed`);
      }
      // Released twice (retry): no-op.
      assert.deepEqual(await acts.releaseNode({ plan, node, uncordon: true }), {
        uncordoned: false,
        left: 'notClaimed',
      });
      // Now the other plan can claim it.
      assert.deepEqual(await acts.cordonNode({ plan: other, node }), {
        outcome: 'Cordoned',
        wasUnschedulable: false,
        nodeUid,
      });
      assert.deepEqual(await acts.releaseNode({ plan: other, node, uncordon: false }), {
        uncordoned: false,
        left: 'notAsked',
      });
      assert.equal(
        (await c.core.readNode({ name: node })).spec?.unschedulable,
        true,
        'uncordon:false keeps it cordoned',
      );
    } finally {
      await setUnschedulable(c, node, false).catch(() => undefined);
    }
  });

  it('leaves a node that was already cordoned cordoned after release', async () => {
    const node = await testNode({ unschedulable: true });
    const plan = await claimOwner();
    try {
      assert.deepEqual(await acts.cordonNode({ plan, node }), {
        outcome: 'Cordoned',
        wasUnschedulable: true,
        nodeUid: (await c.core.readNode({ name: node })).metadata!.uid!,
      });
      assert.equal(
        (await c.core.readNode({ name: node })).metadata?.annotations?.[NODE_WAS_UNSCHEDULABLE_ANNOTATION],
        'true',
      );
      assert.deepEqual(await acts.releaseNode({ plan, node, uncordon: true }), {
        uncordoned: false,
        left: 'wasUnschedulable',
      });
      const n = await c.core.readNode({ name: node });
      assert.equal(n.spec?.unschedulable, true, 'stays cordoned');
      assert.equal(n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], undefined, 'claim removed');
    } finally {
      await setUnschedulable(c, node, false).catch(() => undefined);
    }
  });

  it('reports a missing node', async () => {
    const plan = { name: uniqueName('df-e2e-plan'), uid: 'uid-plan-d' };
    assert.deepEqual(await acts.cordonNode({ plan, node: 'df-e2e-no-such-node' }), {
      outcome: 'NodeNotFound',
    });
    assert.deepEqual(await acts.releaseNode({ plan, node: 'df-e2e-no-such-node', uncordon: true }), {
      uncordoned: false,
      left: 'gone',
    });
  });
});

describe('resolveNodes and listNodePods', { timeout: 120_000 }, () => {
  it('resolves names and selectors, reporting missing names', async () => {
    const pool = uniqueName('pool');
    const node = await testNode({ labels: { 'drainflow.dev/pool': pool } });
    const resolved = await acts.resolveNodes({
      nodeNames: ['df-e2e-missing-node', 'kwok-node-0'],
      nodeSelector: { matchLabels: { 'drainflow.dev/pool': pool } },
    });
    // nodeNames in their order, then the nodes only the selector matches (by name).
    assert.deepEqual(resolved, { nodes: ['kwok-node-0', node], missing: ['df-e2e-missing-node'] });
  });

  it('classifies DaemonSet, bare, emptyDir, Deployment and terminating pods, with their PDBs', async () => {
    const node = await testNode();
    const ns = await namespace();
    const ns2 = await namespace();
    await c.apps.createNamespacedDaemonSet({
      namespace: ns,
      body: makeDaemonSet(ns, 'agent', { hostname: node }),
    });
    await c.core.createNamespacedPod({ namespace: ns, body: makePod(ns, 'bare', { nodeName: node }) });
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'scratch', 1, { nodeName: node, emptyDir: true }),
    });
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'web', 1, { nodeName: node }),
    });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web-pdb', { app: 'web' }, { maxUnavailable: 1 }),
    });
    // ns2: an empty selector matches every pod of its namespace (policy/v1).
    await c.apps.createNamespacedDeployment({
      namespace: ns2,
      body: makeDeployment(ns2, 'job', 1, { nodeName: node }),
    });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns2,
      body: makePdb(ns2, 'all', {}, { minAvailable: 0 }),
    });
    // A terminating pod: long grace period, deleted now.
    await c.core.createNamespacedPod({
      namespace: ns2,
      body: makePod(ns2, 'leaving', { nodeName: node, terminationGracePeriodSeconds: 60 }),
    });
    await waitPodsReady(c, ns, { app: 'agent' }, 1);
    await waitPodsReady(c, ns, { app: 'scratch' }, 1);
    await waitPodsReady(c, ns, { app: 'web' }, 1);
    await waitPodsReady(c, ns2, { app: 'job' }, 1);
    await waitPodReady(c, ns, 'bare');
    const leaving = await waitPodReady(c, ns2, 'leaving');
    await c.core.deleteNamespacedPod({ namespace: ns2, name: 'leaving' });
    await waitPdb(c, ns, 'web-pdb', (p) => p.status?.disruptionsAllowed === 1);
    await waitPdb(c, ns2, 'all', (p) => p.status?.disruptionsAllowed === 1);

    const result = await listNodePods(c, { node, selection: DEFAULT_SELECTION });
    const mine = result.pods.filter((p) => p.namespace === ns || p.namespace === ns2);
    const summary = mine.map(
      (p) =>
        `${p.namespace === ns ? 'ns' : 'ns2'}/${p.name.replace(/-[a-z0-9]+(-[a-z0-9]+)?$/, '')}:${p.action}:${p.reason}:${p.pdbs.length}`,
    );
    assert.deepEqual(summary.sort(), [
      'ns/agent:Skip:DaemonSetPod:0',
      'ns/bare:Block:NoController:0',
      'ns/scratch:Block:EmptyDirData:0',
      'ns/web:Evict:Evictable:1',
      'ns2/job:Evict:Evictable:1',
      'ns2/leaving:Wait:Terminating:1',
    ]);
    assert.deepEqual(
      result.pods.map((p) => p.key),
      [...result.pods.map((p) => p.key)].sort(),
      'pods sorted by key',
    );
    const web = mine.find((p) => p.name.startsWith('web-'));
    assert.deepEqual(web?.pdbs, [`${ns}/web-pdb`]);
    assert.deepEqual(
      withoutVersions(result.pdbs).filter((p) => p.key.startsWith(`${ns}/`) || p.key.startsWith(`${ns2}/`)),
      [
        { key: `${ns}/web-pdb`, disruptionsAllowed: 1 },
        { key: `${ns2}/all`, disruptionsAllowed: 1 },
      ].sort((x, y) => (x.key < y.key ? -1 : 1)),
    );
    assert.equal(await checkPod(c, { namespace: ns2, name: 'leaving', uid: uidOf(leaving) }), 'Terminating');

    // With ignoreDaemonSets false the DaemonSet pod blocks; with force the bare pod is evicted.
    const strict = await listNodePods(c, {
      node,
      selection: { ignoreDaemonSets: false, deleteEmptyDirData: true, force: true },
    });
    const byName = (prefix: string) =>
      strict.pods.find((p) => p.namespace === ns && p.name.startsWith(prefix));
    assert.equal(byName('agent-')?.action, 'Block');
    assert.equal(byName('bare')?.action, 'Evict');
    assert.equal(byName('scratch-')?.action, 'Evict');
  });
});

describe('evictPod: self-healing refusals, heartbeats and cancellation', { timeout: 120_000 }, () => {
  /** Finalizer holding a pod's deletion until the test removes it (kwok's delete stage waits for it). */
  const HOLD = 'example.com/hold';
  /** A UID no pod has. */
  const STALE_UID = '44444444-4444-4444-4444-444444444444';

  /** A namespace `ev-<what>-<unique>`, deleted after all tests. */
  async function evNamespace(what: string): Promise<string> {
    const ns = await createNamespace(c, `ev-${what}`);
    cleanups.push(() => deleteNamespace(c, ns));
    return ns;
  }

  /** Removes every finalizer of the pod (merge patch), ignoring a pod already gone. */
  async function release(ns: string, name: string): Promise<void> {
    await ignoreNotFound(() =>
      c.core.patchNamespacedPod(
        { namespace: ns, name, body: { metadata: { finalizers: null } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
  }

  /** A Ready bare pod whose deletion is held by {@link HOLD} (released after all tests at the latest). */
  async function heldPod(ns: string, name: string): Promise<{ metadata?: { uid?: string } }> {
    const body = makePod(ns, name, { nodeName: 'kwok-node-2' });
    body.metadata = { ...body.metadata, finalizers: [HOLD] };
    await c.core.createNamespacedPod({ namespace: ns, body });
    cleanups.push(() => release(ns, name));
    return waitPodReady(c, ns, name);
  }

  async function waitTerminating(ns: string, name: string): Promise<void> {
    await waitFor(
      async () => (await c.core.readNamespacedPod({ namespace: ns, name })).metadata?.deletionTimestamp,
      30_000,
      { what: `pod ${ns}/${name} terminating` },
    );
  }

  it('403 NamespaceTerminating → Retry/NamespaceTerminating for a pod of a namespace being deleted', async () => {
    const ns = await evNamespace('nsterm');
    const pod = await heldPod(ns, 'held');
    await c.core.deleteNamespace({ name: ns });
    await waitFor(
      async () => (await c.core.readNamespace({ name: ns })).status?.phase === 'Terminating',
      30_000,
      { what: `namespace ${ns} Terminating` },
    );
    // The namespace controller deletes the pod; its finalizer keeps it (Terminating) meanwhile.
    await waitTerminating(ns, 'held');

    const result = await acts.evictPod({ namespace: ns, name: 'held', uid: uidOf(pod) });
    assert.equal(result.outcome, 'Retry', JSON.stringify(result));
    const r = result as Extract<EvictResult, { outcome: 'Retry' }>;
    assert.equal(r.code, 403);
    assert.equal(r.reason, 'NamespaceTerminating');
    assert.match(r.message, new RegExp(`unable to create new content in namespace ${ns}`));
    assert.equal(await checkPod(c, { namespace: ns, name: 'held', uid: uidOf(pod) }), 'Terminating');

    // Released, the pod goes with its namespace: what the drain waits for after this Retry.
    await release(ns, 'held');
    const gone = await waitPodGone(c, { namespace: ns, name: 'held', uid: uidOf(pod), timeoutSeconds: 60 });
    assert.deepEqual(gone, { gone: true });
  });

  it('cancelled mid-call: aborts the in-flight request and throws CancelledFailure at once, heartbeating meanwhile', async () => {
    const ns = await evNamespace('cancel');
    await heldPod(ns, 'slow');
    // An eviction of a terminating pod with a stale UID is held ~10 s by the API server (it retries
    // its own precondition conflict, CONTRIBUTING.md, "Eviction API answers, as observed"), long
    // enough to cancel it.
    await c.core.deleteNamespacedPod({ namespace: ns, name: 'slow' });
    await waitTerminating(ns, 'slow');

    // Outside an activity: no heartbeat, no cancellation, the call just takes the server's time.
    const t0 = Date.now();
    const control = acts.evictPod({ namespace: ns, name: 'slow', uid: STALE_UID }).then((r) => ({
      r,
      ms: Date.now() - t0,
    }));

    const env = new MockActivityEnvironment();
    const beats: number[] = [];
    env.on('heartbeat', () => beats.push(Date.now() - t0));
    const running = env.run(acts.evictPod, { namespace: ns, name: 'slow', uid: STALE_UID });
    setTimeout(() => env.cancel(), 2500);
    await assert.rejects(running, (err) => err instanceof CancelledFailure);
    const cancelledMs = Date.now() - t0;
    assert.ok(cancelledMs >= 2400 && cancelledMs < 3500, `cancelled call ended after ${cancelledMs} ms`);
    // The first heartbeat waits EVICTION_FIRST_HEARTBEAT_MS (2 s), then one every second.
    assert.ok(beats.length >= 1 && beats.length <= 2, `heartbeats at ${beats.join(', ')} ms`);
    assert.ok(beats[0]! >= 1900 && beats[0]! < 2500, `first heartbeat after 2 s, got ${beats[0]} ms`);
    const beatsAtCancel = beats.length;

    const { r, ms } = await control;
    assert.deepEqual(r, { outcome: 'Gone' }, 'the stale UID conflicts, and the pod has another UID');
    assert.ok(ms >= 5000, `the uncancelled call was held by the server for ${ms} ms`);
    assert.equal(beats.length, beatsAtCancel, 'no heartbeat after the activity ended');
  });

  it('cancelled before the call: sends no eviction (the pod stays) and throws CancelledFailure', async () => {
    const ns = await evNamespace('precancel');
    await c.core.createNamespacedPod({
      namespace: ns,
      body: makePod(ns, 'keep', { nodeName: 'kwok-node-2' }),
    });
    const pod = await waitPodReady(c, ns, 'keep');

    const env = new MockActivityEnvironment();
    let beats = 0;
    env.on('heartbeat', () => beats++);
    env.cancel();
    const t0 = Date.now();
    await assert.rejects(
      env.run(acts.evictPod, { namespace: ns, name: 'keep', uid: uidOf(pod) }),
      (err) => err instanceof CancelledFailure,
    );
    assert.ok(Date.now() - t0 < 1000, 'throws at once');
    assert.equal(beats, 0, 'ended before its first heartbeat: no heartbeat call to the server');
    // Nothing was sent: the pod is not terminating ...
    const still = await c.core.readNamespacedPod({ namespace: ns, name: 'keep' });
    assert.equal(still.metadata?.deletionTimestamp, undefined, 'no eviction reached the server');
    assert.equal(await checkPod(c, { namespace: ns, name: 'keep', uid: uidOf(pod) }), 'Present');
    // ... and the same call, not cancelled, evicts it.
    const env2 = new MockActivityEnvironment();
    assert.deepEqual(await env2.run(acts.evictPod, { namespace: ns, name: 'keep', uid: uidOf(pod) }), {
      outcome: 'Evicted',
    });
  });
});

describe('publishStatus and recordEvent', { timeout: 60_000 }, () => {
  it('writes a changed status once, then skips an identical one; ignores missing or re-created plans', async () => {
    await applyCrds(c);
    const name = uniqueName('df-e2e-plan');
    const created = (await c.custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      body: { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { nodeNames: ['kwok-node-0'] } },
    })) as { metadata: { uid: string } };
    cleanups.push(() =>
      ignoreNotFound(() =>
        c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }),
      ),
    );
    const plan = { name, uid: created.metadata.uid };
    const status: MaintenancePlanStatus = {
      phase: 'Running',
      reason: 'Draining',
      message: 'draining 1 node',
      observedGeneration: 1,
      startedAt: '2026-01-01T00:00:00Z',
      nodes: [{ name: 'kwok-node-0', phase: 'Draining', podsTotal: 3, podsEvicted: 1, blockedBy: [] }],
      evictionProgress: { total: 3, evicted: 1, pending: 2, failed: 0, attempts: 2, tooManyRequests: 1 },
    };
    assert.deepEqual(await acts.publishStatus({ plan, status }), { written: true, exists: true });
    const stored = (await c.custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name,
    })) as {
      status?: unknown;
      metadata: { resourceVersion: string };
    };
    assert.deepEqual(stored.status, status);
    // Same content, other key order: no write.
    const reordered = JSON.parse(
      JSON.stringify({ evictionProgress: status.evictionProgress, ...status }),
    ) as MaintenancePlanStatus;
    assert.deepEqual(await acts.publishStatus({ plan, status: reordered }), { written: false, exists: true });
    const after1 = (await c.custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name,
    })) as {
      metadata: { resourceVersion: string };
    };
    assert.equal(after1.metadata.resourceVersion, stored.metadata.resourceVersion, 'no write happened');

    // A status that drops a field replaces the stored one (not a merge).
    const shorter: MaintenancePlanStatus = { phase: 'Drained', reason: 'AllPodsEvicted', message: 'done' };
    assert.deepEqual(await acts.publishStatus({ plan, status: shorter }), { written: true, exists: true });
    const replaced = (await c.custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name,
    })) as {
      status?: unknown;
    };
    assert.deepEqual(replaced.status, shorter);

    assert.deepEqual(await acts.publishStatus({ plan: { name, uid: 'not-this-one' }, status }), {
      written: false,
      exists: false,
    });
    assert.deepEqual(
      await acts.publishStatus({ plan: { name: uniqueName('df-e2e-none'), uid: 'x' }, status }),
      {
        written: false,
        exists: false,
      },
    );

    // recordEvent: the same event twice is one Event with count 2.
    const reason = 'NodeCordoned';
    const message = `node kwok-node-0 cordoned (${name})`;
    await acts.recordEvent({ plan, type: 'Normal', reason, message });
    await acts.recordEvent({ plan, type: 'Normal', reason, message });
    await acts.recordEvent({ plan, type: 'Warning', reason: 'EvictionBlocked', message: 'blocked by PDB' });
    const events = await c.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.uid=${plan.uid}`,
    });
    cleanups.push(async () => {
      for (const e of events.items) {
        await ignoreNotFound(() =>
          c.core.deleteNamespacedEvent({ namespace: 'default', name: e.metadata!.name! }),
        );
      }
    });
    const cordoned = events.items.filter((e) => e.reason === reason);
    assert.equal(cordoned.length, 1);
    assert.equal(cordoned[0]?.count, 2);
    assert.equal(cordoned[0]?.involvedObject.kind, KIND);
    assert.equal(cordoned[0]?.involvedObject.name, name);
    assert.equal(cordoned[0]?.source?.component, 'drainflow');
    assert.equal(
      events.items.filter((e) => e.reason === 'EvictionBlocked' && e.type === 'Warning').length,
      1,
    );
    // Best effort: a failing write (namespace-less name is invalid) never throws.
    await acts.recordEvent({
      plan: { name: 'Invalid_Name!', uid: plan.uid },
      type: 'Normal',
      reason,
      message,
    });
  });
});
