/**
 * A workflow cancelled from Temporal (the UI's "Request Cancellation", `temporal workflow cancel`)
 * is an ordinary way to stop a drain: the cancelled workflow stops evicting, writes why and closes
 * CANCELED; a cancelled plan hands back its nodes as an abort does, a cancelled node workflow
 * leaves its node to the plan's hand-back, as an aborted node does. No workflow task fails on the way
 * (before, a condition the plan's grant pump waited on rejected with CancelledFailure unhandled,
 * so every later workflow task failed and the plan stayed RUNNING with frozen counters).
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** Two nodes behind one PDB that allows nothing, so the drain runs until it is stopped. */
function stuckCluster(): SimCluster {
  const sim = new SimCluster().addNode('n1').addNode('n2');
  sim.pdbs.set('app/a', 0);
  sim.addPod({ namespace: 'app', name: 'a-0', node: 'n1', pdbs: ['app/a'] });
  sim.addPod({ namespace: 'app', name: 'a-1', node: 'n2', pdbs: ['app/a'] });
  return sim;
}

/** Asserts that awaiting `result` fails as a cancelled workflow does. */
async function assertCancelled(result: Promise<unknown>): Promise<void> {
  await assert.rejects(result, (err: unknown) => {
    assert.ok(err instanceof WorkflowFailedError, `a WorkflowFailedError, got ${String(err)}`);
    assert.ok(err.cause instanceof CancelledFailure, `cause CancelledFailure, got ${String(err.cause)}`);
    return true;
  });
}

describe('a workflow cancelled from Temporal (time-skipping)', () => {
  it('a cancelled plan hands its nodes back, says why and closes CANCELED', async () => {
    const sim = stuckCluster();
    // Two nodes at once, so the plan coordinates the PDB (budget grants, the grant pump running).
    const inp = input('cancel-plan', { nodeNames: ['n1', 'n2'], maxUnavailableNodes: 2 });
    const planId = planWorkflowId(inp.plan);
    await wf.withWorker(sim, async (tq) => {
      const h = await wf.startPlan(tq, inp);
      await wf.waitUntil(
        () => sim.lastStatus()?.nodes?.every((n) => n.phase === 'Draining') === true,
        'both nodes Draining',
      );
      assert.equal(sim.nodes.get('n1')?.unschedulable, true);
      await h.cancel();
      await assertCancelled(wf.resultOf(h, 60_000));
      for (const node of ['n1', 'n2']) {
        const child = wf.env.client.workflow.getHandle(nodeWorkflowId(planId, node));
        assert.notEqual((await child.describe()).status.name, 'RUNNING', `${node}'s workflow closed`);
      }
    });
    assert.equal((await wf.env.client.workflow.getHandle(planId).describe()).status.name, 'CANCELLED');
    for (const node of ['n1', 'n2']) {
      assert.equal(sim.nodes.get(node)?.unschedulable, false, `${node} uncordoned`);
      assert.equal(sim.nodes.get(node)?.heldBy, undefined, `${node}'s claim removed`);
    }
    const last = sim.lastStatus();
    assert.equal(last?.phase, 'Aborted');
    assert.equal(last?.reason, 'WorkflowCanceled');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']));
  });

  it('a cancelled node workflow ends Aborted/WorkflowCanceled and the plan goes on with its others', async () => {
    const sim = stuckCluster();
    const inp = input('cancel-node', { nodeNames: ['n1', 'n2'], maxUnavailableNodes: 2 });
    const planId = planWorkflowId(inp.plan);
    const res = await wf.withWorker(sim, async (tq) => {
      const h = await wf.startPlan(tq, inp);
      await wf.waitUntil(
        () => sim.lastStatus()?.nodes?.every((n) => n.phase === 'Draining') === true,
        'both nodes Draining',
      );
      const child = wf.env.client.workflow.getHandle(nodeWorkflowId(planId, 'n1'));
      await child.cancel();
      await assertCancelled(wf.resultOf(child, 60_000));
      await wf.waitUntil(
        () => sim.lastStatus()?.nodes?.find((n) => n.name === 'n1')?.phase === 'Aborted',
        'n1 Aborted in the plan status',
      );
      const n1 = sim.lastStatus()?.nodes?.find((n) => n.name === 'n1');
      assert.equal(n1?.reason, 'WorkflowCanceled');
      // Like an aborted node, n1 stays claimed and cordoned until the plan hands its nodes back.
      assert.equal(sim.nodes.get('n1')?.unschedulable, true, 'n1 still cordoned');
      assert.equal(sim.nodes.get('n2')?.unschedulable, true, 'n2 still cordoned: its drain goes on');
      // The other node drains once its PDB allows: the plan was not frozen by the cancel.
      sim.pdbs.set('app/a', 1);
      await wf.waitUntil(
        () => sim.lastStatus()?.nodes?.find((n) => n.name === 'n2')?.phase === 'Drained',
        'n2 Drained',
      );
      await h.signal(abortSignal);
      return wf.resultOf(h, 60_000);
    });
    assert.equal(res.phase, 'Aborted');
    assert.equal(sim.nodes.get('n1')?.unschedulable, false, 'n1 handed back with the plan');
    assert.equal(sim.nodes.get('n2')?.unschedulable, false, 'n2 handed back with the plan');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']));
  });
});
