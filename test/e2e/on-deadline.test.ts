// test-lane: parallel
/**
 * spec.onDeadline on the real stack (kube-apiserver, kube-controller-manager, kwok, Temporal dev
 * server, a `drainflow run --worker` process; the plan workflow started directly, no operator):
 *
 * - the CRD refuses bad deadline-policy fields with readable messages (enum, ranges, and the CEL
 *   rule nodeDrainTimeoutSeconds <= drainTimeoutSeconds, also against the defaulted 3600);
 * - DeletePods: a pod guarded by a PodDisruptionBudget that allows no disruption (minAvailable 1 of
 *   1 replica) is deleted at the node's deadline (nodeDrainTimeoutSeconds 8 of a 20 s plan), with
 *   its 60 s grace period cut to what is left until the plan's deadline, the PodsWillBeDeleted
 *   Warning before it and one PodDeletedAtDeadline Warning for it; the plan ends Drained with the
 *   deletion counted in status.evictionProgress.deleted, apart from evictions.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { MaintenancePlanStatus } from '../../src/api/plan.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { createDirectPlan, refusedPlanStatus, readPlanStatus, showStatus } from '../helpers/direct-plan.js';
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
import { createTaintedNode, directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';

const TAINT_KEY = 'drainflow.dev/e2e-deadline';
const POD_GRACE_SECONDS = 60;

describe('onDeadline on the real stack', () => {
  const h = directHarness('deadline-e2e', 'deadline-run');
  const planName = uniqueName('deadline-plan');
  let c: Clients;
  let ns = '';
  let node = '';
  let workflowId = '';

  before(async () => {
    await h.connect();
    c = h.c;
    const worker = startWorkerProcess(h.opts.taskQueue, drainflowEnv()).then((p) => (h.worker = p));
    const fixture = (async () => {
      ns = await createNamespace(c, 'deadline');
      node = await createTaintedNode(c, 'deadline-node', { taint: { key: TAINT_KEY, value: 'x' } });
      const d = makeDeployment(ns, 'db', 1, { terminationGracePeriodSeconds: POD_GRACE_SECONDS });
      const spec = d.spec!.template.spec!;
      spec.nodeSelector = { 'kubernetes.io/hostname': node };
      spec.tolerations = [{ key: TAINT_KEY, operator: 'Equal', value: 'x', effect: 'NoSchedule' }];
      await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: makePdb(ns, 'db', { app: 'db' }, { minAvailable: 1 }),
      });
      await waitPodsReady(c, ns, { app: 'db' }, 1);
      await waitPdb(c, ns, 'db', (p) => p.status?.currentHealthy === 1);
    })();
    const results = await Promise.allSettled([worker, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    if (workflowId) {
      const handle = h.client.workflow.getHandle(workflowId);
      await handle.signal(abortSignal).catch(() => undefined);
      const giveUp = new Promise((resolve) => setTimeout(resolve, 20_000).unref());
      await Promise.race([handle.result().catch(() => undefined), giveUp]);
    }
    await h.stop();
    if (c) {
      await h.deletePlanObject(planName).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      if (node) await deleteNode(c, node).catch(() => undefined);
    }
  });

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'an unknown onDeadline',
      { onDeadline: 'Force' },
      /spec\.onDeadline: .*must be Stop, SkipNode or DeletePods \(got "Force"\)/,
    ],
    [
      'nodeDrainTimeoutSeconds 0',
      { nodeDrainTimeoutSeconds: 0 },
      /spec\.nodeDrainTimeoutSeconds: Invalid value: 0: .*should be greater than or equal to 1/,
    ],
    [
      'nodeDrainTimeoutSeconds above drainTimeoutSeconds',
      { drainTimeoutSeconds: 600, nodeDrainTimeoutSeconds: 601 },
      /spec\.nodeDrainTimeoutSeconds: .*must be less than or equal to spec\.drainTimeoutSeconds \(3600 when not set;/,
    ],
    [
      'nodeDrainTimeoutSeconds above the defaulted drainTimeoutSeconds (3600)',
      { nodeDrainTimeoutSeconds: 7200 },
      /must be less than or equal to spec\.drainTimeoutSeconds \(3600 when not set; a node's deadline is the earlier of the two\)/,
    ],
    [
      'a negative deadlineWarningSeconds',
      { onDeadline: 'DeletePods', deadlineWarningSeconds: -1 },
      /spec\.deadlineWarningSeconds: Invalid value: -1: .*should be greater than or equal to 0/,
    ],
    [
      'deadlineWarningSeconds above a day',
      { onDeadline: 'DeletePods', deadlineWarningSeconds: 86401 },
      /spec\.deadlineWarningSeconds: Invalid value: 86401: .*should be less than or equal to 86400/,
    ],
  ];
  for (const [name, fields, message] of invalid)
    it(`the API server refuses a plan with ${name}, readably`, async () => {
      const bad = uniqueName('deadline-bad');
      const status = await refusedPlanStatus(c, bad, { nodeNames: ['a'], ...fields });
      assert.equal(status.code, 422);
      assert.match(status.message ?? '', message);
    });

  it('DeletePods deletes a PDB-guarded pod at the node deadline, grace cut, with its Events', async () => {
    const before = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=db' })).items;
    assert.equal(before.length, 1);
    const victim = before[0]!;
    const plan = await createDirectPlan(c, planName, {
      nodeNames: [node],
      drainTimeoutSeconds: 20,
      nodeDrainTimeoutSeconds: 8,
      onDeadline: 'DeletePods',
      deadlineWarningSeconds: 5,
      eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 5 } },
    });
    workflowId = plan.workflowId;
    h.allPlans.add(planName); // its Events are deleted at the end
    await h.client.workflow.start('drainPlanWorkflow', {
      taskQueue: h.opts.taskQueue,
      workflowId,
      args: [plan.input],
    });
    const running = await waitFor(
      async () => {
        const st = await readPlanStatus(c, planName);
        return st?.deadlineAction && st.nodes?.[0]?.deadline ? st : undefined;
      },
      30_000,
      { what: 'deadlineAction in status', intervalMs: 250 },
    );
    assert.equal(running.deadlineAction!.policy, 'DeletePods');
    assert.deepEqual(running.deadlineAction!.nodes, [node]);
    const nodeDeadline = Date.parse(running.nodes![0]!.deadline!);
    const planDeadline = Date.parse(running.deadline!);
    assert.equal(Date.parse(running.deadlineAction!.at!), nodeDeadline);
    assert.equal(Date.parse(running.deadlineAction!.warningAt!), nodeDeadline - 5000);

    // The pod gets a deletionTimestamp at the node's deadline, with the grace cut to what is left.
    const deleted = await waitFor(
      async () => {
        const p = await c.core
          .readNamespacedPod({ namespace: ns, name: victim.metadata!.name! })
          .catch(() => undefined);
        const md = p?.metadata;
        return md?.uid === victim.metadata!.uid && md?.deletionTimestamp ? p : undefined;
      },
      30_000,
      { what: 'the guarded pod deleted', intervalMs: 100 },
    );
    const seenAt = Date.now();
    const grace = (deleted as V1Pod).metadata!.deletionGracePeriodSeconds!;
    const left = Math.ceil((planDeadline - nodeDeadline) / 1000);
    assert.ok(grace >= 1 && grace <= left && grace < POD_GRACE_SECONDS, `grace ${grace} s (left ${left} s)`);
    assert.ok(
      seenAt >= nodeDeadline - 1000,
      `deleted ${(seenAt - nodeDeadline) / 1000} s after the node deadline`,
    );

    const final: MaintenancePlanStatus = await waitFor(
      async () => {
        const st = await readPlanStatus(c, planName);
        return st?.phase && !['Pending', 'Running'].includes(st.phase) ? st : undefined;
      },
      90_000,
      { what: `plan ${planName} finished`, intervalMs: 250 },
    );
    assert.equal(final.phase, 'Drained', showStatus(final));
    assert.equal(final.reason, 'DrainedWithDeletions', showStatus(final));
    assert.equal(final.nodes?.[0]?.reason, 'PodsDeletedAtDeadline', showStatus(final));
    assert.equal(final.evictionProgress?.deleted, 1);
    assert.equal(final.evictionProgress?.evicted, 0, 'the Eviction API never let it go');
    assert.equal(final.evictionProgress?.attempts, 0, 'no Eviction API call: the PDB never allowed one');

    const events = await h.planEvents(planName, plan.input.plan.uid);
    const warning = events.find((e) => e.reason === 'PodsWillBeDeleted');
    const deletion = events.filter((e) => e.reason === 'PodDeletedAtDeadline');
    assert.ok(warning, `PodsWillBeDeleted among ${events.map((e) => e.reason).join(', ')}`);
    assert.equal(warning.type, 'Warning');
    assert.match(warning.message ?? '', new RegExp(`${ns}/${victim.metadata!.name}`));
    assert.equal(deletion.length, 1, 'one Warning per deleted pod');
    assert.equal(deletion[0]!.type, 'Warning');
    assert.match(deletion[0]!.message ?? '', new RegExp(`grace period ${grace} s`));
  });
});
