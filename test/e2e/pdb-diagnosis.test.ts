// test-lane: parallel
/**
 * Issue 34 on the real stack (kube-apiserver with its disruption controller, kube-scheduler, kwok,
 * the Temporal dev server, a `drainflow run --worker` process; the plan workflow started directly,
 * no operator): a single-replica Deployment behind `minAvailable: 1` on the node to drain. The
 * plan's status names the Never kind, the PodDisruptionBudget and the Deployment (the node's
 * blocker and the DisruptionBlocked condition), and the DisruptionBlocked Warning Event is recorded
 * within 10 s of the first observation that shows the blocker, long before the deadline.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { readPlanStatus, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import {
  EVENT_NAMESPACE,
  createTaintedNode,
  directHarness,
  drainflowEnv,
} from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';

const TAINT_KEY = 'drainflow.dev/e2e-pdb-diagnosis';

describe('a single replica behind minAvailable: 1 (issue 34)', () => {
  const h = directHarness('pdbdiag-e2e', 'pdbdiag-run');
  let c: Clients;
  const namespaces: string[] = [];
  const nodes: string[] = [];
  const workflowIds: string[] = [];
  const plans: string[] = [];

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
    for (const ns of namespaces) await deleteNamespace(c, ns).catch(() => undefined);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  it('the plan reads Never naming the PDB and the Deployment; the Warning within 10 s of the first observation', async () => {
    const node = await createTaintedNode(c, 'single-node', { taint: { key: TAINT_KEY, value: 'x' } });
    nodes.push(node);
    const ns = await createNamespace(c, 'pdbdiag');
    namespaces.push(ns);
    const labels = { app: 'solo' };
    const d = makeDeployment(ns, 'solo', 1, { labels, hostname: node });
    d.spec!.template.spec!.tolerations = [
      { key: TAINT_KEY, operator: 'Equal', value: 'x', effect: 'NoSchedule' },
    ];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    const [pod] = await waitPodsReady(c, ns, labels, 1);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'solo', labels, { minAvailable: 1 }),
    });
    await waitPdb(c, ns, 'solo', (p) => p.status?.expectedPods === 1 && p.status.disruptionsAllowed === 0);

    const name = uniqueName('pdbdiag-plan');
    const startedAt = Date.now();
    const { workflowId } = await h.startDirectPlan(name, { nodeNames: [node], drainTimeoutSeconds: 600 });
    plans.push(name);
    workflowIds.push(workflowId);

    // The first observation that shows the blocker, as the status shows it (polled every 100 ms).
    const st = await waitFor(
      async () => {
        const s = await readPlanStatus(c, name);
        return s?.nodes?.[0]?.blockedBy?.length ? s : undefined;
      },
      60_000,
      { what: 'a blocker in status', intervalMs: 100 },
    );
    const firstSeenAt = Date.now();
    const b = st.nodes![0]!.blockedBy![0]!;
    assert.equal(b.pod, `${ns}/${pod!.metadata!.name!}`, showStatus(st));
    assert.equal(b.pdb, `${ns}/solo`, showStatus(st));
    assert.equal(b.kind, 'Never', showStatus(st));
    assert.equal(b.owner, `Deployment ${ns}/solo`, showStatus(st));
    assert.match(
      b.message,
      /can never allow a disruption \(Never: a single replica behind minAvailable: 1\)/,
    );
    const cond = st.conditions?.find((x) => x.type === 'DisruptionBlocked');
    assert.equal(cond?.status, 'True', showStatus(st));
    assert.equal(cond?.reason, 'Never');
    assert.ok(
      cond?.message.includes(`${ns}/solo`) && cond.message.includes(`Deployment ${ns}/solo`),
      cond?.message,
    );

    const warnings = async () =>
      (
        await c.core.listNamespacedEvent({
          namespace: EVENT_NAMESPACE,
          fieldSelector: `involvedObject.name=${name},reason=DisruptionBlocked`,
        })
      ).items;
    const events = await waitFor(
      async () => ((await warnings()).length > 0 ? warnings() : undefined),
      10_000,
      {
        what: 'the DisruptionBlocked Warning within 10 s',
        intervalMs: 100,
      },
    );
    const eventAt = Date.now();
    assert.equal(events.length, 1);
    assert.equal(events[0]!.type, 'Warning');
    assert.match(events[0]!.message ?? '', /Never/);
    console.log(
      `Never blocker in status ${((firstSeenAt - startedAt) / 1000).toFixed(1)} s after the start; Warning Event seen ${((eventAt - firstSeenAt) / 1000).toFixed(1)} s after that`,
    );
    // Still one Warning (one per PDB and kind, not per attempt) a while later.
    await new Promise((r) => setTimeout(r, 5000));
    const later = await warnings();
    assert.equal(later.length, 1);
    assert.equal(later[0]!.count ?? 1, 1, 'not repeated');
  });
});
