/**
 * A plan without maintenance windows that is paused and resumed, before its first cordon (spec.cordon
 * AllAtStart, created paused) and in the middle of a node's drain: the plan's own pause, forwarded
 * to its nodes, behaves as it does with windows.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nodeControlSignal } from '../../src/contract/node-messages.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { pauseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('pause and resume without windows (time-skipping)', () => {
  it('created paused with cordon AllAtStart, resumed, paused and resumed mid-drain: drains both nodes', async () => {
    const sim = new SimCluster({ observePollMs: 0 });
    sim.addNode('n1').addNode('n2');
    sim.pdbs.set('app/db', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    sim.addPod({ namespace: 'app', name: 'n2-web', node: 'n2' });
    const inp = input('pause-all-at-start-v2', {
      nodeNames: ['n1', 'n2'],
      maxUnavailableNodes: 1,
      cordon: 'AllAtStart',
      paused: true,
      uncordon: 'OnRelease',
      release: true,
    });
    const res = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(() => sim.lastStatus()?.phase === 'Paused', 'Paused');
      await wf.skip('5m');
      assert.equal(
        sim.calls.filter((c) => c.name === 'cordonNode').length,
        0,
        'nothing cordoned while paused',
      );
      await h.signal(resumeSignal);
      await waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.blockedBy?.[0]?.reason === 'DisruptionBudget',
        'n1 held by its PDB',
      );
      await h.signal(pauseSignal);
      await waitUntil(() => sim.lastStatus()?.nodes?.[0]?.phase === 'Paused', 'n1 Paused');
      sim.pdbs.set('app/db', 1);
      const before = sim.evictions().length;
      await wf.skip('10m');
      assert.equal(sim.evictions().length, before, 'no eviction while paused');
      await h.signal(resumeSignal);
      return wf.resultOf(h);
    });
    assert.equal(res.phase, 'Completed');
    assert.ok(sim.pods.get('app/db-0')?.gone && sim.pods.get('app/n2-web')?.gone);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']));
  });
});

/** Plan `name` on node n1, whose pod app/db-0 is held by a PDB allowing nothing; released at once when drained. */
function heldNodePlan(name: string) {
  const sim = new SimCluster({ observePollMs: 0 });
  sim.addNode('n1');
  sim.pdbs.set('app/db', 0);
  sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
  return { sim, inp: input(name, { nodeNames: ['n1'], uncordon: 'OnRelease', release: true }) };
}

describe('pause and resume relayed for an older generation (time-skipping)', () => {
  it('a pause for an older generation than the newest seen is ignored: the newer resume holds', async () => {
    // A standby operator's start-up relay (generation 2) arriving after the leader relayed the
    // user's resume (generation 3).
    const { sim, inp } = heldNodePlan('stale-controls');
    const res = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.blockedBy?.[0]?.reason === 'DisruptionBudget',
        'n1 held by its PDB',
      );
      await h.signal(pauseSignal, { generation: 2 });
      await waitUntil(() => sim.lastStatus()?.phase === 'Paused', 'Paused (generation 2)');
      await h.signal(resumeSignal, { generation: 3 });
      await waitUntil(() => sim.lastStatus()?.phase === 'Running', 'Running (generation 3)');
      await h.signal(pauseSignal, { generation: 2 }); // stale
      await wf.skip('1m');
      assert.equal(sim.lastStatus()?.phase, 'Running', 'the stale pause changed nothing');
      assert.equal(sim.lastStatus()?.observedGeneration, 3);
      // A pause without a generation (drainflow pause, an Update) or of the newest one still holds.
      await h.signal(pauseSignal, { generation: 3 });
      await waitUntil(() => sim.lastStatus()?.phase === 'Paused', 'Paused (generation 3)');
      await h.signal(resumeSignal, { generation: 4 });
      sim.pdbs.set('app/db', 1);
      return wf.resultOf(h);
    });
    assert.equal(res.phase, 'Completed');
    assert.ok(sim.pods.get('app/db-0')?.gone);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});

describe('a pause sent to a node directly for an older generation (time-skipping)', () => {
  it('pause 2 (plan and node), resume 3 (forwarded), a late direct pause 2: the node keeps draining and finishes', async () => {
    // The operator sends stops to the node workflows directly too (src/operator/node-stops.ts); a
    // standby's start-up relay of generation 2 reaching the node after the plan forwarded the
    // leader's resume of generation 3 must not pause it again.
    const { sim, inp } = heldNodePlan('node-stale-controls');
    const node = () => wf.env.client.workflow.getHandle(nodeWorkflowId(planWorkflowId(inp.plan), 'n1'));
    const nodePhase = () => sim.lastStatus()?.nodes?.[0]?.phase;
    const res = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.blockedBy?.[0]?.reason === 'DisruptionBudget',
        'n1 held by its PDB',
      );
      await h.signal(pauseSignal, { generation: 2 });
      await node().signal(nodeControlSignal, { action: 'pause', generation: 2 });
      await waitUntil(() => nodePhase() === 'Paused', 'n1 Paused (generation 2)');
      await h.signal(resumeSignal, { generation: 3 });
      await waitUntil(
        () => sim.lastStatus()?.phase === 'Running' && nodePhase() !== 'Paused',
        'plan and n1 running (generation 3)',
      );
      await node().signal(nodeControlSignal, { action: 'pause', generation: 2 }); // stale
      await wf.skip('1m');
      assert.notEqual(nodePhase(), 'Paused', 'the stale pause changed nothing');
      // A direct resume of generation 3 (a no-op), then a stale resume of generation 2 (dropped).
      await node().signal(nodeControlSignal, { action: 'resume', generation: 3 });
      await node().signal(nodeControlSignal, { action: 'resume', generation: 2 });
      await wf.skip('1m');
      sim.pdbs.set('app/db', 1);
      await waitUntil(() => sim.pods.get('app/db-0')?.gone === true, 'db-0 evicted without another resume');
      return wf.resultOf(h);
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.lastStatus()?.nodes?.[0]?.phase, 'Released');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});

describe('a node started after a resume knows its generation (time-skipping)', () => {
  it('pause 2, resume 3, then n2 starts: a late direct pause 2 to n2 changes nothing', async () => {
    // A standby operator's start-up relay of generation 2 reaching a node the plan started after
    // the leader's resume of generation 3: without the plan's generation in its input the node
    // has seen no control and would take the pause as new, while the plan runs.
    const sim = new SimCluster({ observePollMs: 0 });
    sim.addNode('n1');
    sim.addNode('n2');
    sim.pdbs.set('app/db', 0);
    sim.pdbs.set('app/web', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    sim.addPod({ namespace: 'app', name: 'web-0', node: 'n2', pdbs: ['app/web'] });
    const inp = input('node-start-generation', {
      nodeNames: ['n1', 'n2'],
      maxUnavailableNodes: 1,
      uncordon: 'OnRelease',
      release: true,
    });
    const n2 = () => wf.env.client.workflow.getHandle(nodeWorkflowId(planWorkflowId(inp.plan), 'n2'));
    const phaseOf = (node: string) => sim.lastStatus()?.nodes?.find((n) => n.name === node)?.phase;
    const blockedOf = (node: string) => sim.lastStatus()?.nodes?.find((n) => n.name === node)?.blockedBy;
    const res = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(() => blockedOf('n1')?.[0]?.reason === 'DisruptionBudget', 'n1 held by its PDB');
      await h.signal(pauseSignal, { generation: 2 });
      await waitUntil(() => sim.lastStatus()?.phase === 'Paused', 'Paused (generation 2)');
      await h.signal(resumeSignal, { generation: 3 });
      await waitUntil(() => sim.lastStatus()?.phase === 'Running', 'Running (generation 3)');
      sim.pdbs.set('app/db', 1);
      await waitUntil(
        () => blockedOf('n2')?.[0]?.reason === 'DisruptionBudget',
        'n2 started, held by its PDB',
      );
      await n2().signal(nodeControlSignal, { action: 'pause', generation: 2 }); // stale
      await wf.skip('1m');
      assert.notEqual(phaseOf('n2'), 'Paused', 'the stale pause changed nothing');
      // A direct resume of generation 3: a no-op.
      await n2().signal(nodeControlSignal, { action: 'resume', generation: 3 });
      sim.pdbs.set('app/web', 1);
      await waitUntil(() => sim.pods.get('app/web-0')?.gone === true, 'web-0 evicted');
      return wf.resultOf(h);
    });
    assert.equal(res.phase, 'Completed');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']));
  });
});
