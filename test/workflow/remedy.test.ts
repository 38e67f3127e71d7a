/**
 * Issue 34, the remedy by surge (spec.remedies.rolloutRestart), in the time-skipping environment
 * against the sim cluster of test/helpers/sim-cluster.ts: a single replica of a Deployment whose
 * rollout never lowers availability, behind minAvailable: 1 (a Never block). With Approve the plan
 * proposes the restart (the Remedy condition and a Warning Event), refuses an approval of a
 * Deployment it did not propose, restarts once on the approval (the annotation value from the
 * approval time; a retry after a lost answer requests no second rollout) and drains; with Auto it
 * restarts after afterSeconds on its own (a durable timer); an abort while the rollout runs says
 * the rollout finishes on its own.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { abortSignal, approveRemedyUpdate } from '../../src/contract/plan-messages.js';
import type { MaintenancePlanSpecInput } from '../../src/api/plan.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** n1 with shop/web-0, the one pod of Deployment shop/web (default strategy), behind minAvailable 1. */
function cluster(readyDelayMs = 50): SimCluster {
  const sim = new SimCluster({ readyDelayMs }).addNode('n1');
  sim.pdbs.set('shop/web', 0);
  sim.pdbShapes.set('shop/web', {
    pdb: { spec: { minAvailable: 1 }, status: { currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 } },
    pod: 'shop/web-0',
    pods: [{ key: 'shop/web-0', node: 'n1', phase: 'Running', ready: true }],
    owner: { ref: 'Deployment shop/web', replicas: 1, deployment: { replicas: 1 } },
  });
  sim.addPod({ namespace: 'shop', name: 'web-0', node: 'n1', pdbs: ['shop/web'] });
  sim.addDeployment('shop/web', ['shop/web-0']);
  return sim;
}

const spec = (remedies: MaintenancePlanSpecInput['remedies']): MaintenancePlanSpecInput => ({
  nodeNames: ['n1'],
  drainTimeoutSeconds: 3600,
  remedies,
});
const remedyCondition = (sim: SimCluster) =>
  (sim.lastStatus()?.conditions ?? []).find((c) => c.type === 'Remedy');
const reasons = (sim: SimCluster) =>
  sim.events.filter((e) => e.reason.startsWith('Remedy') || e.reason === 'RolloutRestarted');
const restarts = (sim: SimCluster) => sim.calls.filter((c) => c.name === 'restartDeployment');

describe('remedy by surge (time-skipping)', () => {
  it('Approve: proposed, a wrong approval refused, restarted once on the approval, drained', async () => {
    const sim = cluster();
    // The first restart takes effect and its answer is lost: the retry must request no second rollout.
    sim.fail('restartDeployment', 'retryable', { afterEffect: true });
    const inp = input('remedy-approve', spec({ rolloutRestart: 'Approve' }));
    await wf.withWorker(sim, async (tq) => {
      const h = await wf.startPlan(tq, inp);
      await wf.waitUntil(
        () => remedyCondition(sim)?.reason === 'RemedyProposed',
        'the proposal',
        30_000,
        '200ms',
      );
      const c = remedyCondition(sim)!;
      assert.equal(c.status, 'True');
      assert.match(c.message, /drainflow approve remedy-approve --workload shop\/web/);
      const proposed = sim.events.find((e) => e.reason === 'RemedyProposed');
      assert.equal(proposed?.type, 'Warning');
      assert.match(proposed!.message, /Deployment shop\/web/);
      // Nothing is restarted without an approval, however long it waits.
      await wf.skip('30m');
      assert.equal(restarts(sim).length, 0);
      assert.equal(sim.lastStatus()?.phase, 'Running');
      await assert.rejects(
        h.executeUpdate(approveRemedyUpdate, { args: [{ workload: 'shop/other', by: 'alice' }] }),
        (err: Error) =>
          /plan remedy-approve proposes no rollout restart of Deployment shop\/other \(proposed now: shop\/web\)/.test(
            String((err.cause as Error)?.message),
          ),
      );
      const st = await h.executeUpdate(approveRemedyUpdate, {
        args: [{ workload: 'shop/web', by: 'alice' }],
      });
      assert.ok(st.conditions?.some((x) => x.type === 'Remedy'));
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 30_000, '200ms');
      // The outcome in the condition, and its Event (sent as an activity beside the status write).
      await wf.waitUntil(
        () =>
          remedyCondition(sim)?.reason === 'RemedySucceeded' &&
          reasons(sim).some((e) => e.reason === 'RemedySucceeded'),
        'the outcome',
        10_000,
        '200ms',
      );
      const d = sim.deployments.get('shop/web')!;
      assert.equal(d.rollouts, 1, 'exactly one rollout requested');
      const calls = restarts(sim);
      assert.equal(calls.length, 2, 'the call whose answer was lost, and its retry');
      assert.deepEqual(calls[1]!.result, { outcome: 'AlreadyRestarted' });
      assert.equal((calls[0]!.arg as { restartedAt: string }).restartedAt, d.restartedAt);
      assert.equal(sim.pods.get('shop/web-0')!.evictedTimes ?? 0, 0, 'moved by the rollout, not evicted');
      // Each Event once. Their order is not asserted: the plan sends its Events as activities
      // side by side, so two sent close together (the approval's and the restart's) may arrive
      // in either order.
      assert.deepEqual(
        reasons(sim)
          .map((e) => `${e.type} ${e.reason}`)
          .sort(),
        [
          'Normal RemedyApproved',
          'Normal RemedySucceeded',
          'Normal RolloutRestarted',
          'Warning RemedyProposed',
        ],
      );
      assert.match(reasons(sim).find((e) => e.reason === 'RemedyApproved')!.message, /approved by alice/);
      // Approving again after the restart is refused.
      await assert.rejects(
        h.executeUpdate(approveRemedyUpdate, { args: [{ workload: 'shop/web', by: 'alice' }] }),
        /./,
      );
      await h.signal(abortSignal);
      await wf.resultOf(h);
    });
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });

  it('Auto: restarted after afterSeconds of the block (a durable timer), no command', async () => {
    const sim = cluster();
    const inp = input('remedy-auto', spec({ rolloutRestart: 'Auto', afterSeconds: 600 }));
    await wf.withWorker(sim, async (tq) => {
      const h = await wf.startPlan(tq, inp);
      await wf.waitUntil(
        () => remedyCondition(sim)?.reason === 'RemedyProposed',
        'the proposal',
        30_000,
        '200ms',
      );
      const proposedAt = sim.calls.find(
        (c) => c.name === 'recordEvent' && (c.arg as { reason: string }).reason === 'RemedyProposed',
      )!.atMs;
      assert.equal(sim.events.find((e) => e.reason === 'RemedyProposed')?.type, 'Normal');
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000, '1m');
      const [call] = restarts(sim);
      assert.ok(call, 'restarted');
      assert.ok(
        call.atMs - proposedAt >= 600_000 - 1000,
        `restarted ${call.atMs - proposedAt} ms after the proposal`,
      );
      assert.ok(
        call.atMs - proposedAt < 660_000,
        `restarted ${call.atMs - proposedAt} ms after the proposal`,
      );
      assert.equal(sim.deployments.get('shop/web')!.rollouts, 1);
      assert.match(reasons(sim).find((e) => e.reason === 'RemedyApproved')!.message, /approved by Auto/);
      await h.signal(abortSignal);
      await wf.resultOf(h);
    });
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });

  it('an abort while the rollout runs leaves it to finish on its own, and says so', async () => {
    const sim = cluster(60_000); // the new pod takes a minute of real time to be Ready
    const inp = input('remedy-abort', spec({ rolloutRestart: 'Auto', afterSeconds: 0 }));
    const res = await wf.driveTo(
      sim,
      inp,
      () => remedyCondition(sim)?.reason === 'RolloutRestarted',
      abortSignal,
    );
    assert.equal(res.phase, 'Aborted');
    assert.match(
      res.message,
      /rollout restart of Deployment shop\/web \(restartedAt .*\) is left to finish on its own/,
    );
    assert.equal(sim.deployments.get('shop/web')!.rollouts, 1);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });

  it('Never (the default): nothing is proposed; an approval is refused', async () => {
    const sim = cluster();
    const inp = input('remedy-never', { nodeNames: ['n1'], drainTimeoutSeconds: 3600 });
    await wf.withWorker(sim, async (tq) => {
      const h = await wf.startPlan(tq, inp);
      await wf.waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.blockedBy?.[0]?.remedy === 'RolloutRestart',
        'the blocker with its remedy',
        30_000,
        '200ms',
      );
      assert.match(sim.lastStatus()!.nodes![0]!.blockedBy![0]!.message, /drainflow can move it by surge/);
      await wf.skip('10m');
      assert.equal(remedyCondition(sim), undefined);
      await assert.rejects(
        h.executeUpdate(approveRemedyUpdate, { args: [{ workload: 'shop/web', by: 'alice' }] }),
        (err: Error) => /none is proposed now/.test(String((err.cause as Error)?.message)),
      );
      assert.equal(restarts(sim).length, 0);
      await h.signal(abortSignal);
      await wf.resultOf(h);
    });
  });
});
