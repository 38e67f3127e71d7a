// test-lane: parallel
/**
 * The drain engine end to end on the real stack: a real worker (workflows + Kubernetes activities)
 * and the plan workflow started directly (no operator), against kube-apiserver,
 * kube-controller-manager (real PodDisruptionBudget status, ReplicaSet replacements), the scheduler
 * and kwok nodes. The plan's story is read back with the project's kubectl.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import {
  API_VERSION,
  GROUP,
  KIND,
  PLURAL,
  VERSION,
  parseSpec,
  type MaintenancePlan,
} from '../../src/api/plan.js';
import type { DrainPlanInput } from '../../src/workflows/messages.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { planWorkflowId } from '../../src/contract/names.js';
import { createWorker, type DrainflowWorker } from '../../src/worker/worker.js';
import { DrainflowMetrics } from '../../src/shared/http.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  isPodReady,
  makeDeployment,
  makeDaemonSet,
  makePdb,
  makePod,
  sleep,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { kubectlPath } from '../helpers/binaries.js';

function temporalAddress(): string {
  const a = process.env.TEMPORAL_ADDRESS;
  if (!a)
    throw new Error(
      'TEMPORAL_ADDRESS is not set: run `npm run stack -- up` and eval "$(npm run --silent stack -- env)"',
    );
  return a;
}

function kubectl(...args: string[]): string {
  return execFileSync(kubectlPath(), args, { encoding: 'utf8', env: process.env });
}

describe('drain engine on the real stack', () => {
  let c: Clients;
  let ns: string;
  const nodes: string[] = [];
  let worker: DrainflowWorker;
  let running: Promise<void>;
  let nativeConnection: NativeConnection;
  let connection: Connection;
  let client: Client;
  const taskQueue = uniqueName('engine-e2e');
  const pool = uniqueName('pool');
  const planName = uniqueName('engine');

  before(async () => {
    c = clients();
    await applyCrds(c);
    ns = await createNamespace(c, 'df-engine');
    for (let i = 0; i < 3; i++)
      nodes.push(await createNode(c, 'df-engine-node', { labels: { 'drainflow.dev/pool': pool } }));
    nativeConnection = await NativeConnection.connect({ address: temporalAddress() });
    connection = await Connection.connect({ address: temporalAddress() });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    worker = await createWorker({
      connection: nativeConnection,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue,
      kubeConfig: c.kc,
      logger: pino({ level: 'warn' }),
      metrics: new DrainflowMetrics(),
      identity: 'engine-e2e',
    });
    running = worker.run();
  });

  after(async () => {
    worker?.shutdown();
    await running?.catch(() => undefined);
    await nativeConnection?.close();
    await connection?.close();
    await c.custom
      .patchClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name: planName,
        body: [{ op: 'remove', path: '/metadata/finalizers' }],
      })
      .catch(() => undefined);
    await c.custom
      .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: planName })
      .catch(() => undefined);
    if (ns) await deleteNamespace(c, ns);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  it('evicts what kubectl drain would, reports the rest as blockers, never violates the PodDisruptionBudget', async () => {
    const [a, b] = nodes as [string, string, string];
    const onPool = { 'drainflow.dev/pool': pool };
    // 6 web replicas behind a PDB maxUnavailable 1; replacements take 2 s to become Ready.
    const web = makeDeployment(ns, 'web', 6, { readyDelay: '2s' });
    web.spec!.template.spec!.nodeSelector = onPool;
    await c.apps.createNamespacedDeployment({ namespace: ns, body: web });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', { app: 'web' }, { maxUnavailable: 1 }),
    });
    const ds = makeDaemonSet(ns, 'agent');
    ds.spec!.template.spec!.nodeSelector = onPool;
    await c.apps.createNamespacedDaemonSet({ namespace: ns, body: ds });
    // A controlled pod with emptyDir on node a, a bare pod on node b.
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'scratch', 1, { hostname: a, emptyDir: true }),
    });
    await c.core.createNamespacedPod({ namespace: ns, body: makePod(ns, 'bare', { nodeName: b }) });
    await waitPodsReady(c, ns, { app: 'web' }, 6);
    await waitPodsReady(c, ns, { app: 'agent' }, 3);
    await waitPodsReady(c, ns, { app: 'scratch' }, 1);
    await waitFor(
      async () => {
        const pdb = await c.policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' });
        return (
          pdb.status?.disruptionsAllowed === 1 && pdb.status.observedGeneration === pdb.metadata?.generation
        );
      },
      60_000,
      { what: 'PDB web allows 1 disruption' },
    );

    const webPods = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items;
    const webOnTargets = webPods
      .filter((p) => p.spec?.nodeName === a || p.spec?.nodeName === b)
      .map((p) => p.metadata!.name!);
    assert.ok(webOnTargets.length > 0, 'some web pods run on the target nodes');

    const plan: MaintenancePlan = {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: planName, uid: '' },
      spec: parseSpec({ nodeNames: [a, b], maxUnavailableNodes: 2, drainTimeoutSeconds: 300 }),
    };
    const created = (await c.custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      body: {
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: planName },
        spec: { nodeNames: [a, b], maxUnavailableNodes: 2, drainTimeoutSeconds: 300 },
      },
    })) as MaintenancePlan;
    const input: DrainPlanInput = {
      plan: { name: planName, uid: created.metadata.uid, generation: created.metadata.generation ?? 1 },
      spec: plan.spec,
      temporalUiUrl: 'http://127.0.0.1:8233',
    };
    const workflowId = planWorkflowId(input.plan);

    // Sample the PDB's protected pods throughout: Ready, not terminating web pods never below 5.
    let minHealthy = Infinity;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const pods = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items;
        const healthy = pods.filter((p: V1Pod) => isPodReady(p) && !p.metadata?.deletionTimestamp).length;
        minHealthy = Math.min(minHealthy, healthy);
        await sleep(100);
      }
    })();

    const handle = await client.workflow.start('drainPlanWorkflow', { taskQueue, workflowId, args: [input] });
    const readPlan = () =>
      JSON.parse(kubectl('get', 'maintenanceplan', planName, '-o', 'json')) as MaintenancePlan;
    // Both nodes end up held by pods that cannot be evicted: the plan keeps Running (it re-checks
    // the blockers until its deadline) with reason PodsNotEvictable and the Blocked condition True.
    const final = await waitFor(
      async () => {
        const p = readPlan();
        if (p.status?.phase === 'Failed' || p.status?.phase === 'Drained') return p;
        const nodesBlocked = (p.status?.nodes ?? []).filter((n) => n.phase === 'Blocked').length === 2;
        return nodesBlocked && p.status?.reason === 'PodsNotEvictable' ? p : undefined;
      },
      240_000,
      { what: 'both nodes blocked by pods that cannot be evicted', intervalMs: 500 },
    );
    sampling = false;
    await sampler;

    const st = final.status!;
    assert.equal(st.phase, 'Running', `phase ${st.phase}: ${st.message}`);
    assert.equal(st.reason, 'PodsNotEvictable');
    const blockedCondition = st.conditions?.find((x) => x.type === 'Blocked');
    assert.equal(blockedCondition?.status, 'True');
    assert.equal(blockedCondition?.reason, 'PodsNotEvictable');
    assert.equal(st.workflow?.workflowId, workflowId);
    assert.match(st.workflow?.url ?? '', /^http:\/\/127\.0\.0\.1:8233\/namespaces\/.+\/workflows\//);
    const byNode = new Map(st.nodes!.map((n) => [n.name, n]));
    assert.deepEqual(
      byNode.get(a)!.blockedBy!.map((x) => [x.reason, x.pod.split('/')[1]!.split('-')[0]]),
      [['EmptyDirData', 'scratch']],
    );
    assert.deepEqual(
      byNode.get(b)!.blockedBy!.map((x) => [x.reason, x.pod]),
      [['NoController', `${ns}/bare`]],
    );
    assert.equal(st.evictionProgress!.evicted, webOnTargets.length, 'every web pod of the targets evicted');
    assert.equal(st.evictionProgress!.failed, 2);
    assert.ok(st.evictionProgress!.attempts >= webOnTargets.length);
    assert.ok(minHealthy >= 5, `the PDB was violated: only ${minHealthy} healthy web pods at some point`);

    // Cluster state matches the story.
    const now = (await c.core.listNamespacedPod({ namespace: ns })).items;
    const on = (node: string, app: string) =>
      now.filter((p) => p.spec?.nodeName === node && p.metadata?.labels?.app === app);
    assert.equal(on(a, 'web').length + on(b, 'web').length, 0, 'no web pod left on the targets');
    assert.equal(on(a, 'agent').length, 1, 'DaemonSet pod skipped on a');
    assert.equal(on(b, 'agent').length, 1, 'DaemonSet pod skipped on b');
    assert.ok(
      now.some((p) => p.metadata?.name === 'bare'),
      'bare pod left alone',
    );
    assert.equal(on(a, 'scratch').length, 1, 'emptyDir pod left alone');
    for (const n of [a, b])
      assert.equal((await c.core.readNode({ name: n })).spec?.unschedulable, true, `${n} cordoned`);
    assert.notEqual(
      (await c.core.readNode({ name: nodes[2]! })).spec?.unschedulable,
      true,
      'the third node untouched',
    );

    // kubectl tells the story.
    const table = kubectl('get', 'mp', planName);
    assert.match(table, /Running\s+PodsNotEvictable/);
    const described = kubectl('describe', 'mp', planName);
    assert.match(described, /Type:\s+Blocked/);
    assert.match(described, /NoController/);

    // Abort hands the nodes back (uncordon OnDelete applies to abort too).
    await handle.signal(abortSignal);
    const res = (await handle.result()) as { phase: string };
    assert.equal(res.phase, 'Aborted');
    for (const n of [a, b])
      assert.notEqual((await c.core.readNode({ name: n })).spec?.unschedulable, true, `${n} uncordoned`);
  });
});
