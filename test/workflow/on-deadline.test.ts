/**
 * spec.onDeadline in the time-skipping environment, against the sim cluster: a plan of three nodes
 * where the middle one holds a pod whose PodDisruptionBudget never allows a disruption. Each policy
 * (Stop, SkipNode, DeletePods), the per-node deadline (spec.nodeDrainTimeoutSeconds), the advance
 * notice (status.deadlineAction, the PodsWillBeDeleted Event).
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MaintenancePlanSpecInput } from '../../src/api/plan.js';
import { abortSignal, releaseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

const NODES = ['n1', 'n2', 'n3'];

/** n1 and n3 hold two free pods each; n2 one more pod behind PDB app/db that allows 0 disruptions. */
function threeNodes(): SimCluster {
  const sim = new SimCluster();
  for (const n of NODES) {
    sim.addNode(n);
    sim.addPod({ namespace: 'app', name: `${n}-a`, node: n, terminationGracePeriodSeconds: 30 });
    sim.addPod({ namespace: 'app', name: `${n}-b`, node: n, terminationGracePeriodSeconds: 30 });
  }
  sim.pdbs.set('app/db', 0);
  sim.addPod({
    namespace: 'app',
    name: 'db-0',
    node: 'n2',
    pdbs: ['app/db'],
    terminationGracePeriodSeconds: 600,
  });
  return sim;
}

const spec = (extra: Partial<MaintenancePlanSpecInput>): MaintenancePlanSpecInput => ({
  nodeNames: NODES,
  uncordon: 'OnRelease',
  ...extra,
});

describe('onDeadline (time-skipping)', () => {
  it('Stop: the blocked node stays cordoned, the plan ends Blocked/DeadlineExceeded; deadlineAction says so before', async () => {
    const sim = threeNodes();
    const inp = input('deadline-stop', spec({ maxUnavailableNodes: 3, drainTimeoutSeconds: 600 }));
    const final = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(
        () => sim.lastStatus()?.nodes?.filter((n) => n.phase === 'Drained').length === 2,
        'n1 and n3 drained',
      );
      const before = sim.lastStatus()!;
      assert.equal(before.deadlineAction?.policy, 'Stop');
      assert.deepEqual(before.deadlineAction?.nodes, ['n2']);
      assert.equal(before.deadlineAction?.at, before.deadline);
      assert.match(before.deadlineAction!.message, /stay cordoned/);
      await waitUntil(
        () => sim.lastStatus()?.reason === 'DeadlineExceeded',
        'DeadlineExceeded',
        60_000,
        '30s',
      );
      const st = sim.lastStatus()!;
      await h.signal(abortSignal);
      await h.result();
      return st;
    });
    assert.equal(final.phase, 'Blocked');
    assert.equal(final.nodes?.find((n) => n.name === 'n2')?.phase, 'Blocked');
    assert.equal(final.deadlineAction, undefined, 'nothing left to happen');
    assert.equal(sim.calls.filter((c) => c.name === 'deletePod').length, 0);
    assert.equal(sim.pods.get('app/db-0')!.gone, undefined, 'the guarded pod stays');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, NODES));
  });

  it('SkipNode with a per-node deadline: n2 is uncordoned and Skipped at its own deadline, n1 and n3 drain', async () => {
    const sim = threeNodes();
    const inp = input(
      'deadline-skip',
      spec({
        maxUnavailableNodes: 1,
        drainTimeoutSeconds: 3600,
        nodeDrainTimeoutSeconds: 600,
        onDeadline: 'SkipNode',
      }),
    );
    let n2Deadline: string | undefined;
    let planDeadline: string | undefined;
    const final = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(
        () =>
          sim
            .lastStatus()
            ?.nodes?.find((n) => n.name === 'n2')
            ?.blockedBy?.some((b) => b.pod === 'app/db-0') === true,
        'n2 blocked by app/db-0',
      );
      const st = sim.lastStatus()!;
      n2Deadline = st.nodes?.find((n) => n.name === 'n2')?.deadline;
      planDeadline = st.deadline;
      assert.equal(st.deadlineAction?.policy, 'SkipNode');
      assert.equal(st.deadlineAction?.at, n2Deadline, "the next deadline is n2's own");
      assert.deepEqual(st.deadlineAction?.nodes, ['n2', 'n3']);
      assert.equal(sim.nodes.get('n3')!.unschedulable, false, 'n3 waits for the slot');
      await waitUntil(() => sim.lastStatus()?.reason === 'NodesSkipped', 'NodesSkipped', 60_000, '30s');
      const end = sim.lastStatus()!;
      await h.signal(releaseSignal);
      await h.result();
      return end;
    });
    assert.ok(n2Deadline, 'status.nodes[n2].deadline');
    assert.ok(Date.parse(n2Deadline!) < Date.parse(planDeadline!), "n2's deadline is before the plan's");
    assert.equal(final.phase, 'Blocked');
    const byName = new Map(final.nodes!.map((n) => [n.name, n]));
    assert.equal(byName.get('n1')?.phase, 'Drained');
    assert.equal(byName.get('n3')?.phase, 'Drained');
    const n2 = byName.get('n2')!;
    assert.equal(n2.phase, 'Skipped');
    assert.equal(n2.reason, 'SkippedAtDeadline');
    // Handed back: nothing blocks it any more; its message names what held it at the deadline.
    assert.equal(n2.blockedBy, undefined, 'no blockers that read as if they still applied');
    assert.match(
      n2.message ?? '',
      /skipped and handed back \(uncordoned\); held then by app\/db-0 \(PDB app\/db\)/,
    );
    assert.equal(final.evictionProgress?.pending, 0, 'pods left on the skipped node are not pending');
    assert.equal(sim.nodes.get('n2')!.unschedulable, false, 'n2 uncordoned at its deadline');
    assert.equal(sim.nodes.get('n2')!.heldBy, undefined, 'claim removed');
    // n3 started only after n2 gave its slot back, at n2's deadline.
    const n3Cordon = sim.calls.find(
      (c) => c.name === 'cordonNode' && (c.arg as { node: string }).node === 'n3',
    );
    const n2Release = sim.calls.find(
      (c) => c.name === 'releaseNode' && (c.arg as { node: string }).node === 'n2',
    );
    assert.ok(
      n3Cordon && n2Release && n3Cordon.atMs >= n2Release.atMs,
      'n3 cordoned after n2 was handed back',
    );
    assert.ok(n2Release.atMs >= Date.parse(n2Deadline!) && n2Release.atMs < Date.parse(n2Deadline!) + 5000);
    assert.ok(
      sim.events.some((e) => e.reason === 'NodeSkipped'),
      'NodeSkipped Warning',
    );
    assert.equal(sim.calls.filter((c) => c.name === 'deletePod').length, 0);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, NODES));
  });

  it('DeletePods: the warning goes out deadlineWarningSeconds before, the pod is deleted at the deadline with a cut grace', async () => {
    const sim = threeNodes();
    const inp = input(
      'on-deadline-v1',
      spec({
        maxUnavailableNodes: 3,
        drainTimeoutSeconds: 1800,
        onDeadline: 'DeletePods',
        deadlineWarningSeconds: 300,
      }),
    );
    let deadlineMs = 0;
    const final = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(() => sim.lastStatus()?.deadline !== undefined, 'deadline in status');
      deadlineMs = Date.parse(sim.lastStatus()!.deadline!);
      await waitUntil(
        () => sim.lastStatus()?.nodes?.filter((n) => n.phase === 'Drained').length === 2,
        'n1 and n3 drained',
      );
      const st = sim.lastStatus()!;
      assert.equal(st.deadlineAction?.policy, 'DeletePods');
      assert.deepEqual(st.deadlineAction?.nodes, ['n2']);
      assert.equal(Date.parse(st.deadlineAction!.warningAt!), deadlineMs - 300_000);
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000, '20s');
      const end = sim.lastStatus()!;
      await h.signal(releaseSignal);
      await h.result();
      return end;
    });
    const warning = sim.calls.find(
      (c) => c.name === 'recordEvent' && (c.arg as { reason: string }).reason === 'PodsWillBeDeleted',
    );
    assert.ok(warning, 'PodsWillBeDeleted recorded');
    assert.ok(
      warning.atMs >= deadlineMs - 300_000 && warning.atMs < deadlineMs - 290_000,
      `warning ${(deadlineMs - warning.atMs) / 1000} s before the deadline`,
    );
    const text = sim.events.find((e) => e.reason === 'PodsWillBeDeleted')!;
    assert.equal(text.type, 'Warning');
    assert.match(text.message, /app\/db-0/);
    const deletions = sim.pods.get('app/db-0')!.deletions ?? [];
    assert.equal(deletions.length, 1, 'deleted once');
    assert.ok(
      deletions[0]!.atMs >= deadlineMs && deletions[0]!.atMs < deadlineMs + 5000,
      `deleted ${(deletions[0]!.atMs - deadlineMs) / 1000} s after the deadline`,
    );
    assert.equal(
      deletions[0]!.gracePeriodSeconds,
      1,
      "grace cut to what is left of the plan's deadline (at least 1 s)",
    );
    assert.equal(
      sim.calls.filter((c) => c.name === 'deletePod').length,
      1,
      'only the blocked pod is deleted',
    );
    assert.ok(
      sim.events.some((e) => e.reason === 'PodDeletedAtDeadline' && /app\/db-0/.test(e.message)),
      'one Warning per deleted pod',
    );
    assert.equal(final.nodes?.find((n) => n.name === 'n2')?.reason, 'PodsDeletedAtDeadline');
    assert.equal(final.evictionProgress?.deleted, 1);
    assert.equal(final.evictionProgress?.evicted, 6);
    assert.equal(final.evictionProgress?.total, 7);
    assert.equal(final.evictionProgress?.pending, 0);
    assert.equal(final.phase, 'Drained');
    assert.equal(final.reason, 'DrainedWithDeletions', 'a forced drain does not read AllNodesDrained');
    // The plan's phase Event says the same as its status.
    const ended = sim.events.filter(
      (e) => e.reason === 'AllNodesDrained' || e.reason === 'DrainedWithDeletions',
    );
    assert.deepEqual(
      ended.map((e) => e.reason),
      ['DrainedWithDeletions'],
    );
    assert.match(ended[0]!.message, /1 pod\(s\) deleted at the deadline without the Eviction API/);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, NODES));
  });

  it('DeletePods: deletePod failing non-retryably ends the node Failed naming the error, the plan ends', async () => {
    const sim = threeNodes();
    sim.fail('deletePod', 'nonRetryable');
    const inp = input(
      'delete-fatal',
      spec({ maxUnavailableNodes: 3, drainTimeoutSeconds: 1800, onDeadline: 'DeletePods' }),
    );
    const final = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(
        () => sim.lastStatus()?.nodes?.find((n) => n.name === 'n2')?.phase === 'Failed',
        'n2 Failed',
        60_000,
        '20s',
      );
      const st = sim.lastStatus()!;
      await h.signal(releaseSignal);
      await h.result();
      return st;
    });
    const n2 = final.nodes!.find((n) => n.name === 'n2')!;
    assert.match(n2.message ?? '', /delete app\/db-0: .*injected non-retryable failure of deletePod/);
    assert.equal(sim.calls.filter((c) => c.name === 'deletePod').length, 1, 'not deleted again');
    assert.equal(sim.pods.get('app/db-0')!.gone, undefined, 'the pod stays');
    assert.deepEqual(
      final.nodes!.filter((n) => n.name !== 'n2').map((n) => n.phase),
      ['Drained', 'Drained'],
    );
    assert.equal(final.phase, 'Failed', 'the plan ended Failed before its release');
    assert.equal(sim.lastStatus()!.phase, 'Completed', 'released');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, NODES));
  });
});
