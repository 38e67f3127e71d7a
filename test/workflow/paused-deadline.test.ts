/**
 * A deadline that passes while the plan is paused (time-skipping, against the sim cluster): the
 * plan's one node holds a pod behind a PodDisruptionBudget that never allows a disruption, under
 * onDeadline DeletePods. Paused before the deadline, nothing is deleted (nor announced) while
 * paused, however long past the deadline, and the paused node is not taken for lost; the
 * resume applies the policy: the pod is deleted then, and the plan ends Drained.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pauseSignal, releaseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('a deadline that passes while paused (time-skipping)', () => {
  it('DeletePods: nothing deleted or announced while paused, the node not lost; the resume deletes', async () => {
    const sim = new SimCluster();
    sim.addNode('n1');
    sim.pdbs.set('app/db', 0);
    sim.addPod({
      namespace: 'app',
      name: 'db-0',
      node: 'n1',
      pdbs: ['app/db'],
      terminationGracePeriodSeconds: 30,
    });
    const inp = input('paused-deadline', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      drainTimeoutSeconds: 600,
      onDeadline: 'DeletePods',
      deadlineWarningSeconds: 60,
    });
    const seen = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(() => sim.lastStatus()?.nodes?.[0]?.blockedBy?.length === 1, 'n1 blocked by its PDB');
      const deadlineMs = Date.parse(sim.lastStatus()!.deadline!);
      await h.signal(pauseSignal);
      await waitUntil(() => sim.lastStatus()?.nodes?.[0]?.phase === 'Paused', 'n1 paused');
      await waitUntil(
        () => /paused past the deadline/.test(sim.lastStatus()?.nodes?.[0]?.message ?? ''),
        'n1 paused past its deadline',
        60_000,
        '1m',
      );
      // Past the plan's grace for nodes that never report their end (10 min after the deadline).
      await wf.skip('30m');
      const paused = sim.lastStatus()!;
      const resumedAtMs = await wf.env.currentTimeMs();
      await h.signal(resumeSignal);
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained after the resume', 60_000, '10s');
      const end = sim.lastStatus()!;
      await h.signal(releaseSignal);
      await h.result();
      return { deadlineMs, paused, resumedAtMs, end };
    });
    const { deadlineMs, paused, resumedAtMs, end } = seen;
    assert.ok(resumedAtMs > deadlineMs + 30 * 60_000, 'resumed more than 30 min after the deadline');
    assert.equal(paused.phase, 'Paused');
    assert.equal(paused.nodes?.[0]?.phase, 'Paused', 'still paused, not lost');
    assert.match(paused.nodes![0]!.message!, /onDeadline DeletePods applies when resumed/);
    const deletions = sim.pods.get('app/db-0')!.deletions ?? [];
    assert.equal(deletions.length, 1, 'deleted once');
    assert.ok(
      deletions[0]!.atMs >= resumedAtMs,
      `deleted after the resume, not while paused (${(resumedAtMs - deletions[0]!.atMs) / 1000} s before it)`,
    );
    const warning = sim.calls.find(
      (c) => c.name === 'recordEvent' && (c.arg as { reason: string }).reason === 'PodsWillBeDeleted',
    );
    assert.equal(warning, undefined, 'no notice of a deletion that did not come at the deadline');
    assert.equal(end.nodes?.[0]?.reason, 'PodsDeletedAtDeadline');
    assert.equal(end.evictionProgress?.deleted, 1);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});
