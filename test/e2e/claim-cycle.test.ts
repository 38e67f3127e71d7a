// test-lane: parallel
/**
 * Two plans that each hold a node the other waits for, on the real stack (kube-apiserver with the
 * disruption controller, kwok nodes, the Temporal dev server, a `drainflow run --worker` process;
 * the plan workflows started directly): plan A drains [n1, n2], plan B [n2, n1], each with
 * maxUnavailableNodes 1. A PodDisruptionBudget holds each first drain until both plans have
 * claimed their first node; then A waits for n2 (held by B) while B waits for n1 (held by A).
 *
 * Each plan reads the condition ClaimCycle True (reason WaitsForEachOther) naming the other plan
 * and both nodes, and sends one Warning Event ClaimCycle, long before its deadline; once B is
 * aborted (n2 handed back) A claims n2, drains it and its condition turns False (NoClaimCycle).
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MaintenancePlanSpecInput, MaintenancePlanStatus } from '../../src/api/plan.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { createDirectPlan, readPlanStatus, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';

describe('two plans that each hold a node the other waits for', () => {
  const h = directHarness('cycle-e2e', 'cycle-run');
  let c: Clients;
  let ns = '';
  const nodes: string[] = [];
  const workflows: string[] = [];
  const plans: string[] = [];

  before(async () => {
    await h.connect();
    c = h.c;
    const worker = startWorkerProcess(h.opts.taskQueue, drainflowEnv()).then((p) => (h.worker = p));
    const fixture = (async () => {
      ns = await createNamespace(c, 'cycle');
      for (let i = 0; i < 2; i++) nodes.push(await createNode(c, `cycle-node-${i}`));
    })();
    const results = await Promise.allSettled([worker, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    for (const id of workflows) {
      const handle = h.client.workflow.getHandle(id);
      await handle.signal(abortSignal).catch(() => undefined);
      const giveUp = new Promise((resolve) => setTimeout(resolve, 20_000).unref());
      await Promise.race([handle.result().catch(() => undefined), giveUp]);
    }
    await h.stop();
    if (c) {
      for (const p of plans) await h.deletePlanObject(p).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
    }
  });

  /** Creates the plan and starts its workflow. @returns its name and workflow ID. */
  async function startPlan(
    prefix: string,
    spec: MaintenancePlanSpecInput,
  ): Promise<{ name: string; id: string }> {
    const name = uniqueName(prefix);
    const plan = await createDirectPlan(c, name, spec);
    plans.push(name);
    h.allPlans.add(name);
    workflows.push(plan.workflowId);
    await h.client.workflow.start('drainPlanWorkflow', {
      taskQueue: h.opts.taskQueue,
      workflowId: plan.workflowId,
      args: [plan.input],
    });
    return { name, id: plan.workflowId };
  }

  const cycleCondition = (st: MaintenancePlanStatus | undefined) =>
    st?.conditions?.find((x) => x.type === 'ClaimCycle');

  it('each plan reads a ClaimCycle condition naming the other and the nodes, with one Warning Event each', async () => {
    const [n1, n2] = nodes as [string, string];
    // One pod on each node, each behind a PDB that allows no disruption yet.
    for (const [i, node] of nodes.entries()) {
      await c.apps.createNamespacedDeployment({
        namespace: ns,
        body: makeDeployment(ns, `app-${i}`, 1, { hostname: node }),
      });
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: makePdb(ns, `pdb-${i}`, { app: `app-${i}` }, { minAvailable: 1 }),
      });
    }
    for (let i = 0; i < nodes.length; i++) await waitPodsReady(c, ns, { app: `app-${i}` }, 1);
    const spec = (nodeNames: string[]): MaintenancePlanSpecInput => ({
      nodeNames,
      maxUnavailableNodes: 1,
      drainTimeoutSeconds: 1800,
    });
    const a = await startPlan('cycle-a', spec([n1, n2]));
    const b = await startPlan('cycle-b', spec([n2, n1]));
    const nodeOf = async (plan: string, node: string) =>
      (await readPlanStatus(c, plan))?.nodes?.find((n) => n.name === node);
    // Both first drains wait for their PDB: each plan holds its first node.
    await waitFor(
      async () =>
        (await nodeOf(a.name, n1))?.phase === 'Draining' && (await nodeOf(b.name, n2))?.phase === 'Draining',
      90_000,
      { what: `${a.name} holds ${n1} and ${b.name} holds ${n2}`, intervalMs: 250 },
    );
    for (let i = 0; i < nodes.length; i++)
      await c.policy.deleteNamespacedPodDisruptionBudget({ namespace: ns, name: `pdb-${i}` });
    const startedAt = Date.now();
    const [stA, stB] = await Promise.all(
      [a.name, b.name].map((p) =>
        waitFor(
          async () => {
            const st = await readPlanStatus(c, p);
            return cycleCondition(st)?.status === 'True' ? st : undefined;
          },
          120_000,
          { what: `plan ${p}: ClaimCycle True`, intervalMs: 250 },
        ),
      ),
    );
    const seenAfterMs = Date.now() - startedAt;
    for (const [st, self, other, waitsFor, holds] of [
      [stA!, a.name, b.name, n2, n1],
      [stB!, b.name, a.name, n1, n2],
    ] as const) {
      const cond = cycleCondition(st)!;
      assert.equal(cond.reason, 'WaitsForEachOther', showStatus(st));
      assert.match(
        cond.message,
        new RegExp(`plan ${self} waits for node ${waitsFor}, held by plan ${other}`),
      );
      assert.match(cond.message, new RegExp(`plan ${other} waits for node ${holds}, held by plan ${self}`));
      assert.match(cond.message, new RegExp(`drainflow abort ${other}`));
      const waiting = st.nodes!.find((n) => n.name === waitsFor)!;
      assert.equal(waiting.phase, 'Waiting');
      assert.equal(waiting.heldBy, other);
      assert.equal(st.phase, 'Running', 'far from its deadline');
    }
    const uidOf = async (name: string) =>
      (
        (await c.custom.getClusterCustomObject({
          group: 'maintenance.drainflow.dev',
          version: 'v1alpha1',
          plural: 'maintenanceplans',
          name,
        })) as { metadata: { uid: string } }
      ).metadata.uid;
    for (const p of [a.name, b.name]) {
      const uid = await uidOf(p);
      const events = await waitFor(
        async () => {
          const l = (await h.planEvents(p, uid)).filter((e) => e.reason === 'ClaimCycle');
          return l.length > 0 ? l : undefined;
        },
        30_000,
        { what: `plan ${p}: the ClaimCycle Event`, intervalMs: 250 },
      );
      assert.equal(events.length, 1, 'one Event');
      assert.equal(events[0]!.type, 'Warning');
      assert.equal(events[0]!.count ?? 1, 1, 'sent once');
      assert.match(events[0]!.message ?? '', /^claim cycle: /);
    }
    console.log(
      `[e2e] claim cycle: both plans read ClaimCycle True ${seenAfterMs} ms after the cycle could form`,
    );

    // Aborting B hands n2 back: A claims and drains it, and its condition turns False.
    await h.client.workflow.getHandle(b.id).signal(abortSignal);
    const after = await waitFor(
      async () => {
        const st = await readPlanStatus(c, a.name);
        return cycleCondition(st)?.status === 'False' &&
          st?.nodes?.find((n) => n.name === n2)?.phase === 'Drained'
          ? st
          : undefined;
      },
      120_000,
      { what: `plan ${a.name}: ${n2} drained and ClaimCycle False`, intervalMs: 250 },
    );
    assert.equal(cycleCondition(after)!.reason, 'NoClaimCycle');
    const eventsA = (await h.planEvents(a.name, await uidOf(a.name))).filter(
      (e) => e.reason === 'ClaimCycle',
    );
    assert.equal(eventsA.length, 1);
    assert.equal(eventsA[0]!.count ?? 1, 1, 'still one Warning after the cycle ended');
  });
});
