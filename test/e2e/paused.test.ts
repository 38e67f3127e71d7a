// test-lane: parallel
/**
 * "A paused plan disrupts nothing" on the real stack (kube-apiserver, kube-controller-manager's
 * disruption controller, kwok, Temporal dev server, a `drainflow run --worker` process; the plan
 * workflow started directly, no operator), under onDeadline DeletePods, with a pod guarded by a
 * PodDisruptionBudget that allows no disruption (minAvailable 1 of 1 replica):
 *
 * - paused before its deadline, the node is not touched when the deadline passes: the pod keeps
 *   its UID and gets no deletionTimestamp, the node reads Paused/PausedPastDeadline; the resume
 *   applies the policy (the pod deleted, the node Drained/PodsDeletedAtDeadline);
 * - a node an admin uncordoned before the deadline gets no deletion at the deadline: it ends
 *   Blocked/DeadlineExceeded, the pod untouched.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MaintenancePlanStatus } from '../../src/api/plan.js';
import { abortSignal, pauseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { createDirectPlan, readPlanStatus, showStatus } from '../helpers/direct-plan.js';
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
import { MERGE_PATCH, createTaintedNode, directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';

const TAINT_KEY = 'drainflow.dev/e2e-paused';
/** The plans' deadline, seconds: room to claim the node and pause it before. */
const DEADLINE_SECONDS = 30;

describe('a paused plan disrupts nothing (real stack)', () => {
  const h = directHarness('paused-e2e', 'paused-run');
  let c: Clients;
  let ns = '';
  const nodes: string[] = [];
  const workflows: string[] = [];

  before(async () => {
    await h.connect();
    c = h.c;
    const worker = startWorkerProcess(h.opts.taskQueue, drainflowEnv()).then((p) => (h.worker = p));
    const namespace = createNamespace(c, 'paused').then((n) => (ns = n));
    const results = await Promise.allSettled([worker, namespace]);
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
      for (const name of h.allPlans) await h.deletePlanObject(name).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      for (const node of nodes) await deleteNode(c, node).catch(() => undefined);
    }
  });

  /** A node of its own holding one pod `app=<app>` behind a PDB with minAvailable 1 (1 replica). */
  async function guardedNode(app: string): Promise<{ node: string; uid: string; pod: string }> {
    const node = await createTaintedNode(c, `paused-${app}`, { taint: { key: TAINT_KEY, value: 'x' } });
    nodes.push(node);
    const d = makeDeployment(ns, app, 1, { terminationGracePeriodSeconds: 30 });
    const spec = d.spec!.template.spec!;
    spec.nodeSelector = { 'kubernetes.io/hostname': node };
    spec.tolerations = [{ key: TAINT_KEY, operator: 'Equal', value: 'x', effect: 'NoSchedule' }];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, app, { app }, { minAvailable: 1 }),
    });
    await waitPodsReady(c, ns, { app }, 1);
    await waitPdb(c, ns, app, (p) => p.status?.currentHealthy === 1);
    const pod = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` })).items[0]!;
    return { node, uid: pod.metadata!.uid!, pod: pod.metadata!.name! };
  }

  /** Creates and starts a DeletePods plan for `node`; @returns its name and workflow handle. */
  async function startPlan(prefix: string, node: string) {
    const name = uniqueName(prefix);
    const plan = await createDirectPlan(c, name, {
      nodeNames: [node],
      drainTimeoutSeconds: DEADLINE_SECONDS,
      onDeadline: 'DeletePods',
      deadlineWarningSeconds: 5,
      eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 5 } },
    });
    h.allPlans.add(name);
    workflows.push(plan.workflowId);
    const handle = await h.client.workflow.start('drainPlanWorkflow', {
      taskQueue: h.opts.taskQueue,
      workflowId: plan.workflowId,
      args: [plan.input],
    });
    return { name, handle, uid: plan.input.plan.uid };
  }

  const nodeStatus = async (
    plan: string,
    want: (n: NonNullable<MaintenancePlanStatus['nodes']>[number]) => boolean,
    what: string,
    timeoutMs = 60_000,
  ) =>
    waitFor(
      async () => {
        const st = await readPlanStatus(c, plan);
        const n = st?.nodes?.[0];
        return n && want(n) ? st : undefined;
      },
      timeoutMs,
      { what, intervalMs: 250 },
    );

  /** The pod as the API server has it now, if it is still the one with `uid`. */
  const sameLivePod = async (name: string, uid: string) => {
    const p = await c.core.readNamespacedPod({ namespace: ns, name }).catch(() => undefined);
    return p?.metadata?.uid === uid && !p.metadata.deletionTimestamp ? p : undefined;
  };

  it('DeletePods paused over the deadline: the pod is left alone until the resume, then deleted', async () => {
    const g = await guardedNode('paused-db');
    const { name, handle, uid } = await startPlan('paused-plan', g.node);
    await nodeStatus(name, (n) => (n.blockedBy?.length ?? 0) > 0, 'the node claimed, blocked by its PDB');
    await handle.signal(pauseSignal);
    const paused = await nodeStatus(name, (n) => n.phase === 'Paused', 'the node Paused');
    const deadlineMs = Date.parse(paused.deadline!);
    assert.ok(Date.now() < deadlineMs, 'paused before the deadline');

    const past = await nodeStatus(
      name,
      (n) => n.reason === 'PausedPastDeadline',
      'the node Paused past its deadline',
      DEADLINE_SECONDS * 1000 + 60_000,
    );
    const seenPastMs = Date.now();
    assert.ok(seenPastMs >= deadlineMs, 'the deadline has passed');
    assert.equal(past.phase, 'Paused', showStatus(past));
    assert.match(past.nodes![0]!.message!, /onDeadline DeletePods applies when resumed/);
    assert.ok(await sameLivePod(g.pod, g.uid), 'the guarded pod is not deleted while paused');
    assert.equal(past.evictionProgress?.deleted ?? 0, 0);
    const events = await h.planEvents(name, uid);
    assert.ok(
      !events.some((e) => e.reason === 'PodsWillBeDeleted' || e.reason === 'PodDeletedAtDeadline'),
      `no deletion announced while paused: ${events.map((e) => e.reason).join(', ')}`,
    );

    const resumedAtMs = Date.now();
    await handle.signal(resumeSignal);
    await waitFor(async () => !(await sameLivePod(g.pod, g.uid)), 60_000, {
      what: 'the guarded pod deleted after the resume',
      intervalMs: 100,
    });
    const final = await waitFor(
      async () => {
        const st = await readPlanStatus(c, name);
        return st?.phase && !['Pending', 'Running', 'Paused'].includes(st.phase) ? st : undefined;
      },
      90_000,
      { what: `plan ${name} finished after the resume`, intervalMs: 250 },
    );
    console.log(
      `paused: deadline passed ${((seenPastMs - deadlineMs) / 1000).toFixed(1)} s before it was seen, resumed ${((resumedAtMs - deadlineMs) / 1000).toFixed(1)} s after it; ${final.phase}/${final.reason}`,
    );
    assert.equal(final.phase, 'Drained', showStatus(final));
    assert.equal(final.nodes?.[0]?.reason, 'PodsDeletedAtDeadline', showStatus(final));
    assert.equal(final.evictionProgress?.deleted, 1);
  });

  it('DeletePods on a node an admin uncordoned: nothing deleted at the deadline, Blocked/DeadlineExceeded', async () => {
    const g = await guardedNode('uncordoned-db');
    const { name } = await startPlan('uncordoned-plan', g.node);
    await nodeStatus(name, (n) => (n.blockedBy?.length ?? 0) > 0, 'the node claimed, blocked by its PDB');
    await c.core.patchNode({ name: g.node, body: { spec: { unschedulable: false } } }, MERGE_PATCH);
    await nodeStatus(name, (n) => n.reason === 'NodeUncordonedExternally', 'the uncordon seen');
    const final = await waitFor(
      async () => {
        const st = await readPlanStatus(c, name);
        return st?.phase && !['Pending', 'Running', 'Paused'].includes(st.phase) ? st : undefined;
      },
      DEADLINE_SECONDS * 1000 + 60_000,
      { what: `plan ${name} finished at its deadline`, intervalMs: 250 },
    );
    assert.equal(final.phase, 'Blocked', showStatus(final));
    assert.equal(final.nodes?.[0]?.phase, 'Blocked', showStatus(final));
    assert.equal(final.nodes?.[0]?.reason, 'DeadlineExceeded', showStatus(final));
    assert.match(final.nodes![0]!.message!, /none deleted/);
    assert.ok(await sameLivePod(g.pod, g.uid), 'the guarded pod is not deleted');
    assert.equal(final.evictionProgress?.deleted ?? 0, 0);
  });
});
