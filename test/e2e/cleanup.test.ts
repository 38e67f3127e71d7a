/**
 * Deletion cleanup without a workflow, end to end on the real stack: a plan whose workflow was
 * terminated (so it will never hand its nodes back) is deleted; the operator itself removes the
 * plan's claim from its nodes and uncordons them per spec.uncordon (leaving a node that was cordoned
 * before the plan cordoned), records a `NodesHandedBack` Event, removes the finalizer, and a later
 * plan naming the same nodes claims them instead of waiting `NodeHeldByOtherPlan` forever.
 *
 * The operator and the worker run as real `drainflow run` processes against kube-apiserver +
 * kube-controller-manager + kwok and the Temporal dev server; the workflow is terminated with the
 * Temporal client, the plans are written with kubectl and read back through the API.
 *
 * Setup: `npm run stack -- up` and `eval "$(npm run --silent stack -- env)"`. Without KUBECONFIG /
 * TEMPORAL_ADDRESS every test fails with that instruction; none is skipped.
 *
 * Isolation (other engineers run e2e tests on the same cluster at the same time): a unique task
 * queue; the operator acts only on plans labelled for this run (`--plan-selector`) and takes its
 * Lease in a namespace of its own (so it neither waits for nor blocks another test's operator);
 * three kwok nodes `cln-*` created here, tainted so no other test's pods land on them, and empty, so
 * a plan drains them at once and then holds them cordoned (Drained, waiting for release or
 * deletion). Plans, their Events in `default`, the nodes and the namespace are deleted at the end.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, afterEach, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import {
  GROUP,
  NODE_CLAIM_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  PLURAL,
  VERSION,
  type MaintenancePlan,
  type MaintenancePlanSpecInput,
} from '../../src/api/plan.js';
import { NODE_CLAIM_UID_ANNOTATION } from '../../src/k8s/node-claim.js';
import { planWorkflowId } from '../../src/workflows/messages.js';
import { kubectlPath } from '../helpers/binaries.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  ignoreNotFound,
  uniqueName,
  waitFor,
  type Clients,
} from '../helpers/k8s.js';
import { freePort, startDrainflow, type DrainflowProcess } from '../helpers/processes.js';

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Label on this run's plans; the operator under test selects them with --plan-selector. */
const RUN_LABEL = 'drainflow.dev/e2e-run';
const TAINT_KEY = 'drainflow.dev/e2e-cleanup';
const CLAIM_KEYS = [NODE_CLAIM_ANNOTATION, NODE_CLAIM_UID_ANNOTATION, NODE_WAS_UNSCHEDULABLE_ANNOTATION];

function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) {
    throw new Error(
      `${name} is not set: these end-to-end tests need the local stack. Start it and load its environment first:\n` +
        '  npm run stack -- up\n  eval "$(npm run --silent stack -- env)"',
    );
  }
  return v;
}

function kubectl(args: string[], input?: string): string {
  return execFileSync(kubectlPath(), args, {
    encoding: 'utf8',
    env: process.env,
    ...(input !== undefined ? { input } : {}),
  });
}

describe('deletion cleanup without a running workflow, on the real stack', () => {
  let c: Clients;
  let connection: Connection;
  let client: Client;
  let worker: DrainflowProcess | undefined;
  let operator: DrainflowProcess | undefined;
  let leaseNs: string | undefined;
  const taskQueue = uniqueName('cln-e2e');
  const run = uniqueName('cln-run');
  /** Two schedulable nodes and one cordoned before any plan. */
  let nodes: { a: string; b: string; cordoned: string };
  const plans = new Set<string>();
  /** Every plan name this file created (their Events are deleted at the end). */
  const allPlans = new Set<string>();

  const env = () => ({
    KUBECONFIG: requireEnv('KUBECONFIG'),
    TEMPORAL_ADDRESS: requireEnv('TEMPORAL_ADDRESS'),
    TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
  });

  // ------------------------------------------------------------------ helpers

  function applyPlan(name: string, spec: MaintenancePlanSpecInput): void {
    plans.add(name);
    allPlans.add(name);
    const manifest = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'MaintenancePlan',
      metadata: { name, labels: { [RUN_LABEL]: run } },
      spec,
    };
    kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
  }

  async function getPlan(name: string): Promise<MaintenancePlan | undefined> {
    return ignoreNotFound(
      async () =>
        (await c.custom.getClusterCustomObject({
          group: GROUP,
          version: VERSION,
          plural: PLURAL,
          name,
        })) as MaintenancePlan,
    );
  }

  async function readNode(name: string): Promise<V1Node> {
    return c.core.readNode({ name });
  }

  const annotations = (n: V1Node) => n.metadata?.annotations ?? {};
  const claimOf = (n: V1Node) => Object.fromEntries(CLAIM_KEYS.map((k) => [k, annotations(n)[k]]));
  const claimedBy = (n: V1Node, p: MaintenancePlan) =>
    annotations(n)[NODE_CLAIM_ANNOTATION] === p.metadata.name &&
    annotations(n)[NODE_CLAIM_UID_ANNOTATION] === p.metadata.uid;

  /**
   * Waits until the plan is Drained and every one of `names` is cordoned and carries its claim
   * (name and uid): the workflow then holds the nodes, waiting for release or abort.
   */
  async function waitHolding(name: string, names: string[], timeoutMs = 90_000): Promise<MaintenancePlan> {
    let last: MaintenancePlan | undefined;
    let lastNodes: V1Node[] = [];
    try {
      return await waitFor(
        async () => {
          last = await getPlan(name);
          if (!last || last.status?.phase !== 'Drained') return undefined;
          const plan = last;
          lastNodes = await Promise.all(names.map(readNode));
          return lastNodes.every((n) => claimedBy(n, plan) && n.spec?.unschedulable === true)
            ? plan
            : undefined;
        },
        timeoutMs,
        { what: `plan ${name} Drained, holding ${names.join(', ')}`, intervalMs: 250 },
      );
    } catch (err) {
      throw new Error(
        `${String(err)}\nlast status: ${JSON.stringify(last?.status)}\nnodes: ${JSON.stringify(
          lastNodes.map((n) => ({
            name: n.metadata?.name,
            claim: claimOf(n),
            unschedulable: n.spec?.unschedulable,
          })),
        )}`,
        { cause: err },
      );
    }
  }

  async function deletePlanObject(name: string): Promise<void> {
    await ignoreNotFound(() =>
      c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }),
    );
  }

  async function waitPlanGone(name: string, timeoutMs: number): Promise<void> {
    await waitFor(async () => (await getPlan(name)) === undefined, timeoutMs, {
      what: `plan ${name} deleted (finalizer removed)`,
      intervalMs: 250,
    });
    plans.delete(name);
  }

  /** Events recorded on the plan with this uid in `default`, by reason. */
  async function planEvents(name: string, uid: string, reason: string) {
    const l = await c.core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name}`,
    });
    return l.items.filter((e) => e.involvedObject.uid === uid && e.reason === reason);
  }

  /** Terminates the plan's workflow once it runs; returns its workflow ID. */
  async function terminateWorkflow(plan: MaintenancePlan): Promise<string> {
    const workflowId = planWorkflowId({ name: plan.metadata.name, uid: plan.metadata.uid });
    const handle = client.workflow.getHandle(workflowId);
    assert.equal((await handle.describe()).status.name, 'RUNNING', 'the workflow holds the nodes');
    await handle.terminate('e2e: a workflow that will never hand its nodes back');
    await waitFor(async () => (await handle.describe()).status.name === 'TERMINATED', 15_000, {
      what: `workflow ${workflowId} TERMINATED`,
    });
    return workflowId;
  }

  // ------------------------------------------------------------------ setup

  before(async () => {
    c = clients(); // fails with the setup instructions when KUBECONFIG is unset
    const address = requireEnv('TEMPORAL_ADDRESS');
    await applyCrds(c);
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });

    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const node = await createNode(c, 'cln', {
        labels: { 'drainflow.dev/pool': run },
        unschedulable: i === 2,
      });
      made.push(node);
      await c.core.patchNode(
        { name: node, body: { spec: { taints: [{ key: TAINT_KEY, value: run, effect: 'NoSchedule' }] } } },
        MERGE_PATCH,
      );
    }
    nodes = { a: made[0]!, b: made[1]!, cordoned: made[2]! };
    leaseNs = await createNamespace(c, 'cln-lease');

    const [operatorPort, workerPort] = [await freePort(), await freePort()];
    worker = await startDrainflow({
      args: ['run', '--worker', '--worker-port', String(workerPort), '--task-queue', taskQueue],
      env: env(),
    });
    operator = await startDrainflow({
      args: [
        'run',
        '--operator',
        '--operator-port',
        String(operatorPort),
        '--task-queue',
        taskQueue,
        '--lease-namespace',
        leaseNs,
        '--plan-selector',
        `${RUN_LABEL}=${run}`,
        '--log-level',
        'debug',
      ],
      env: env(),
    });
    // /readyz is also 200 on a standby: wait until it leads (its own Lease namespace) and has listed.
    await waitFor(() => operator!.logs().includes('cache synced'), 45_000, {
      what: 'operator leads and lists the plans',
      intervalMs: 200,
    }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${operator!.logs().slice(-4000)}`, { cause: err });
    });
  });

  /**
   * After each test, whatever its outcome: deletes its plans through the operator (finalizer
   * cleanup; forced when that does not finish), then removes any claim left and restores the
   * nodes' schedulability, so one failure does not cascade into the next test.
   */
  async function handBack(): Promise<void> {
    for (const name of [...plans]) {
      await deletePlanObject(name).catch(() => undefined);
      await waitPlanGone(name, 60_000).catch(() => undefined);
    }
    for (const name of [...plans]) {
      await c.custom
        .patchClusterCustomObject(
          { group: GROUP, version: VERSION, plural: PLURAL, name, body: { metadata: { finalizers: null } } },
          MERGE_PATCH,
        )
        .catch(() => undefined);
      await deletePlanObject(name).catch(() => undefined);
      plans.delete(name);
    }
    if (!nodes) return;
    for (const [n, unschedulable] of [
      [nodes.a, null],
      [nodes.b, null],
      [nodes.cordoned, true],
    ] as const) {
      await c.core
        .patchNode(
          {
            name: n,
            body: {
              metadata: { annotations: Object.fromEntries(CLAIM_KEYS.map((k) => [k, null])) },
              spec: { unschedulable },
            },
          },
          MERGE_PATCH,
        )
        .catch(() => undefined);
    }
  }

  afterEach(handBack);

  after(async () => {
    await handBack();
    await operator?.stop('SIGTERM');
    await worker?.stop('SIGTERM');
    if (process.env.E2E_KEEP_LOGS || process.exitCode) {
      console.error(`operator log: ${operator?.logFile}\nworker log: ${worker?.logFile}`);
    }
    await connection?.close();
    for (const name of allPlans) {
      const evs = await c.core
        .listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` })
        .catch(() => undefined);
      for (const e of evs?.items ?? [])
        await ignoreNotFound(() =>
          c.core.deleteNamespacedEvent({ namespace: 'default', name: e.metadata!.name! }),
        ).catch(() => undefined);
    }
    if (leaseNs) await deleteNamespace(c, leaseNs);
    for (const n of nodes ? Object.values(nodes) : []) await deleteNode(c, n).catch(() => undefined);
  });

  // ------------------------------------------------------------------ tests

  it('terminated workflow: deleting the plan hands its nodes back, and the next plan claims them', async () => {
    const { a, b, cordoned } = nodes;
    const all = [a, b, cordoned];
    const name = uniqueName('cln-plan');
    applyPlan(name, { nodeNames: all, maxUnavailableNodes: 3, uncordon: 'OnDelete' });
    const plan = await waitHolding(name, all);
    assert.equal(
      annotations(await readNode(cordoned))[NODE_WAS_UNSCHEDULABLE_ANNOTATION],
      'true',
      'the claim records that the third node was cordoned before the plan',
    );

    const workflowId = await terminateWorkflow(plan);
    await deletePlanObject(name);
    const t0 = Date.now();
    await waitPlanGone(name, 30_000);
    const tookMs = Date.now() - t0;

    // The nodes: claims gone everywhere; uncordoned unless cordoned before the plan.
    for (const n of [a, b]) {
      const node = await readNode(n);
      assert.notEqual(node.spec?.unschedulable, true, `${n} uncordoned`);
      assert.deepEqual(
        CLAIM_KEYS.filter((k) => k in annotations(node)),
        [],
        `${n} carries no claim annotation`,
      );
    }
    const stays = await readNode(cordoned);
    assert.equal(
      stays.spec?.unschedulable,
      true,
      `${cordoned} was cordoned before the plan and stays cordoned`,
    );
    assert.deepEqual(
      CLAIM_KEYS.filter((k) => k in annotations(stays)),
      [],
      `${cordoned} carries no claim annotation`,
    );

    // The Event on the plan, and the operator's log.
    const evs = await waitFor(
      async () => {
        const l = await planEvents(name, plan.metadata.uid, 'NodesHandedBack');
        return l.length > 0 ? l : undefined;
      },
      10_000,
      { what: 'the NodesHandedBack Event' },
    );
    assert.equal(evs.length, 1);
    const ev = evs[0]!;
    assert.equal(ev.type, 'Normal');
    assert.match(ev.message ?? '', new RegExp(`workflow ${workflowId} already closed \\(TERMINATED\\)`));
    assert.match(ev.message ?? '', /handed back 3 node\(s\)/);
    assert.match(ev.message ?? '', new RegExp(`${a} \\(uncordoned\\)`));
    assert.match(ev.message ?? '', new RegExp(`${b} \\(uncordoned\\)`));
    assert.match(
      ev.message ?? '',
      new RegExp(`${cordoned} \\(claim removed, left cordoned: unschedulable before the plan\\)`),
    );
    const finished = await planEvents(name, plan.metadata.uid, 'CleanupFinished');
    assert.equal(finished.length, 1);
    assert.match(finished[0]!.message ?? '', /TERMINATED.*handed back.*removing the finalizer/);
    assert.match(operator!.logs(), /handed back the nodes the plan still claimed/);
    console.log(`plan gone ${tookMs} ms after the delete`);

    // A second plan on the same nodes is not held off: it claims all three and drains them.
    const next = uniqueName('cln-next');
    applyPlan(next, { nodeNames: all, maxUnavailableNodes: 3 });
    const second = await waitHolding(next, all, 60_000);
    assert.deepEqual(
      (second.status?.nodes ?? []).map((n) => `${n.name}=${n.phase}`).sort(),
      all.map((n) => `${n}=Drained`).sort(),
      'no node Waiting (NodeHeldByOtherPlan)',
    );
    assert.deepEqual(await planEvents(next, second.metadata.uid, 'NodeHeldByOtherPlan'), []);

    // Its deletion takes the normal path (running workflow: abort) and hands back the same way.
    await deletePlanObject(next);
    await waitPlanGone(next, 60_000);
    for (const n of [a, b]) assert.notEqual((await readNode(n)).spec?.unschedulable, true, `${n} uncordoned`);
    assert.equal((await readNode(cordoned)).spec?.unschedulable, true, `${cordoned} still cordoned`);
    for (const n of all) {
      const node = await readNode(n);
      assert.deepEqual(
        CLAIM_KEYS.filter((k) => k in annotations(node)),
        [],
        `${n} carries no claim annotation`,
      );
    }
    assert.deepEqual(
      await planEvents(next, second.metadata.uid, 'NodesHandedBack'),
      [],
      'the aborted workflow handed its nodes back itself',
    );
  });

  it('uncordon Never: only the claims are removed, including a claim without the uid annotation', async () => {
    const { a, b } = nodes;
    const name = uniqueName('cln-never');
    applyPlan(name, { nodeNames: [a, b], maxUnavailableNodes: 2, uncordon: 'Never' });
    const plan = await waitHolding(name, [a, b]);
    await terminateWorkflow(plan);
    // A claim written before the uid annotation existed: counts by name.
    await c.core.patchNode(
      { name: b, body: { metadata: { annotations: { [NODE_CLAIM_UID_ANNOTATION]: null } } } },
      MERGE_PATCH,
    );
    await deletePlanObject(name);
    await waitPlanGone(name, 30_000);
    for (const n of [a, b]) {
      const node = await readNode(n);
      assert.equal(node.spec?.unschedulable, true, `${n} left cordoned (uncordon: Never)`);
      assert.deepEqual(
        CLAIM_KEYS.filter((k) => k in annotations(node)),
        [],
        `${n} carries no claim annotation`,
      );
    }
    const [ev] = await planEvents(name, plan.metadata.uid, 'NodesHandedBack');
    assert.ok(ev, 'NodesHandedBack recorded');
    assert.match(ev.message ?? '', /handed back 2 node\(s\)/);
    assert.match(ev.message ?? '', /claim removed, left cordoned: uncordon Never/);
  });
});
