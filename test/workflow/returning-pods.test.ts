/**
 * The node workflow with pods that come back (src/drain/returning.ts) and pods the API server
 * evicts without a PDB check (src/drain/eviction-gate.ts), in the time-skipping environment against
 * the sim cluster:
 *
 * - 3 pods of one controller that tolerate the cordon, each replaced on the same node once gone:
 *   3 evictions, the node Drained with the replacements in `skipped` (ReturnsToNode), one Warning
 *   Event for the controller, whatever the deadline;
 * - two nodes (the plan hands out PDB budgets) with a not-Ready pod each behind a PDB allowing 0
 *   (exempt): both evicted at once, no grant asked, the plan Drained.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { releaseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('pods that come back, pods exempt from their PDB (time-skipping)', () => {
  it('replacements bound back to the node are not evicted: 3 calls, Drained, one Warning', async () => {
    const sim = new SimCluster({ graceMs: 200 });
    sim.addNode('n1');
    for (let i = 0; i < 3; i++)
      sim.addPod({
        namespace: 'app',
        name: `agent-${i}`,
        node: 'n1',
        controller: { uid: 'rs-1', ref: 'ReplicaSet app/agent-1' },
        returns: 'ToleratesCordon',
        comesBack: true,
      });
    await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, input('returning', { nodeNames: ['n1'], uncordon: 'OnRelease' }));
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000);
      const node = sim.lastStatus()!.nodes![0]!;
      const skipped = node.skipped ?? [];
      assert.equal(skipped.length, 3, JSON.stringify(skipped));
      for (const p of skipped) {
        assert.equal(p.reason, 'ReturnsToNode');
        assert.match(p.pod, /^app\/agent-\d-r\d$/, 'a replacement, not a pod at the cordon');
      }
      await waitUntil(() => sim.events.some((e) => e.reason === 'ReturnsToNode'), 'Warning', 10_000);
      await h.signal(releaseSignal);
      await h.result();
    });
    assert.equal(sim.evictions().length, 3);
    const warnings = sim.events.filter((e) => e.reason === 'ReturnsToNode');
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]!.type, 'Warning');
    assert.match(warnings[0]!.message, /^node n1: pods of ReplicaSet app\/agent-1 come back/);
  });

  it('not-Ready pods behind a PDB allowing 0 (exempt) are evicted at once on every node, without grants', async () => {
    const sim = new SimCluster({ graceMs: 100 });
    sim.pdbs.set('app/web', 0);
    for (const n of ['n1', 'n2']) {
      sim.addNode(n);
      sim.addPod({
        namespace: 'app',
        name: `web-${n}`,
        node: n,
        pdbs: ['app/web'],
        pdbExempt: 'UnhealthyPodEvictionPolicy',
      });
    }
    await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, input('exempt', { nodeNames: ['n1', 'n2'], uncordon: 'OnRelease' }));
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000);
      await h.signal(releaseSignal);
      await h.result();
    });
    assert.deepEqual(
      sim.evictions().map((c) => (c.result as { outcome: string }).outcome),
      ['Evicted', 'Evicted'],
    );
  });
});
