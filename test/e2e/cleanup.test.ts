// test-lane: parallel
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
import { after, afterEach, before, describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import {
  NODE_CLAIM_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  type MaintenancePlan,
  type MaintenancePlanSpecInput,
} from '../../src/api/plan.js';
import { NODE_CLAIM_UID_ANNOTATION } from '../../src/k8s/node-claim.js';
import { planWorkflowId } from '../../src/contract/names.js';
import { deleteNode, uniqueName, waitFor, type Clients } from '../helpers/k8s.js';
import { MERGE_PATCH, OperatorHarness, createTaintedNode } from '../helpers/operator-harness.js';

const TAINT_KEY = 'drainflow.dev/e2e-cleanup';
const CLAIM_KEYS = [NODE_CLAIM_ANNOTATION, NODE_CLAIM_UID_ANNOTATION, NODE_WAS_UNSCHEDULABLE_ANNOTATION];

describe('deletion cleanup without a running workflow, on the real stack', () => {
  const run = uniqueName('cln-run');
  const h = new OperatorHarness({
    taskQueue: uniqueName('cln-e2e'),
    run,
    lease: { create: 'cln-lease' },
  });
  let c: Clients;
  let client: Client;
  /** Two schedulable nodes and one cordoned before any plan. */
  let nodes: { a: string; b: string; cordoned: string };

  // ------------------------------------------------------------------ helpers

  const applyPlan = (name: string, spec: MaintenancePlanSpecInput) => h.applyPlan(name, spec);
  const deletePlanObject = (name: string) => h.deletePlanObject(name);
  const waitPlanGone = (name: string, timeoutMs: number) => h.waitPlanGone(name, timeoutMs);

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
          last = await h.getPlan(name);
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

  /** Events recorded on the plan with this uid in `default`, by reason. */
  async function planEvents(name: string, uid: string, reason: string) {
    return (await h.planEvents(name, uid)).filter((e) => e.reason === reason);
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
    await h.connect(); // fails with the setup instructions when KUBECONFIG is unset
    c = h.c;
    client = h.client;
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(
        await createTaintedNode(c, 'cln', {
          labels: { 'drainflow.dev/pool': run },
          unschedulable: i === 2,
          taint: { key: TAINT_KEY, value: run },
        }),
      );
    }
    nodes = { a: made[0]!, b: made[1]!, cordoned: made[2]! };
    await h.startProcesses();
  });

  /**
   * After each test, whatever its outcome: deletes its plans through the operator (finalizer
   * cleanup; forced when that does not finish), then removes any claim left and restores the
   * nodes' schedulability, so one failure does not cascade into the next test.
   */
  async function handBack(): Promise<void> {
    await h.removePlans(60_000);
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
    if (c) await handBack();
    await h.stop();
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
    assert.match(h.operator!.logs(), /handed back the nodes the plan still claimed/);
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
