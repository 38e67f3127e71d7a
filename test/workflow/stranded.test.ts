/**
 * Workflows and nodes a plan must not leave behind (time-skipping server, sim cluster):
 * an abort Update that arrives while the plan workflow is closing (the operator relayed
 * spec.abort as a signal first, as `drainflow abort` makes it do) completes, and the workflow closes.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { abortSignal, controlUpdate } from '../../src/contract/plan-messages.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** Rejects after `ms` of real time with `what`, else settles as `p`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/**
 * A plan whose node workflow was terminated by hand (Failed/NodeWorkflowFailed), then aborted as
 * `drainflow abort` does: the abort signal (the operator relaying spec.abort) first, the abort
 * Update once the plan wrote Aborted and waits for its Events. @returns the Update's answer, or
 * undefined when it did not settle within `updateLimitMs` of real time (the workflow then stays open).
 */
async function abortWhileClosing(name: string, updateLimitMs: number) {
  const sim = new SimCluster().addNode('n1');
  sim.pdbs.set('app/a', 0); // never allows: the node drain runs until it is stopped
  sim.addPod({ namespace: 'app', name: 'p', node: 'n1', pdbs: ['app/a'] });
  const inp = input(name, { nodeNames: ['n1'], uncordon: 'OnRelease' });
  const planId = planWorkflowId(inp.plan);
  return wf.withWorker(sim, async (tq) => {
    const h = await wf.startPlan(tq, inp);
    await wf.waitUntil(() => sim.lastStatus()?.nodes?.[0]?.phase === 'Draining', 'n1 Draining');
    await wf.env.client.workflow.getHandle(nodeWorkflowId(planId, 'n1')).terminate('by hand');
    // The real server reports the child's termination at once; the time-skipping server reports
    // none, so the plan marks the node lost 10 min after its deadline. Either way: Failed/NodeWorkflowFailed.
    await wf.waitUntil(() => sim.lastStatus()?.phase === 'Failed', 'plan Failed', 60_000, '1m');
    assert.equal(sim.lastStatus()?.reason, 'NodeWorkflowFailed');
    // The Aborted Event's call hangs for 3 s of real time: the plan is closing (status written,
    // waiting for its Events) when the Update arrives.
    sim.fail('recordEvent', 'hang', { hangMs: 3000 });
    await h.signal(abortSignal);
    await wf.waitUntil(() => sim.lastStatus()?.phase === 'Aborted', 'Aborted status', 30_000, '100ms');
    const answer = await within(
      h.executeUpdate(controlUpdate, { args: [{ action: 'abort' }] }),
      updateLimitMs,
      'the abort Update',
    ).catch(() => undefined);
    return { sim, inp, h, answer };
  });
}

describe('abort of a plan whose node workflow was terminated (time-skipping)', () => {
  it('an abort Update arriving while the plan closes completes, and the plan workflow closes Aborted', async () => {
    const { sim, inp, h, answer } = await abortWhileClosing('late-update-v1', 30_000);
    assert.equal(answer?.phase, 'Aborted', 'the Update completed');
    const res = await wf.resultOf(h, 30_000);
    assert.equal(res.phase, 'Aborted');
    assert.equal((await h.describe()).status.name, 'COMPLETED');
    assert.equal(sim.nodes.get('n1')?.unschedulable, false, 'n1 handed back (uncordon OnRelease)');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, []));
  });
});
