/**
 * An aborted plan counts the pods it evicted that were still terminating at the abort
 * (src/drain/node/report.ts, `nodeCounts`), in the time-skipping environment against the
 * sim cluster: node n1 holds db-0..db-3 behind PDB app/db, which allows one disruption; every pod
 * stays terminating for an hour of real time once evicted. As soon as the first evicted pod is
 * terminating the plan is aborted: the node ends Aborted before any observation shows that pod
 * gone. Its final counts, and the plan's status, must count it as evicted (it was answered 201 and
 * will go), the total unchanged.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import type { NodeProgress } from '../../src/contract/progress.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('abort while an evicted pod is terminating', () => {
  it('the node and the plan count that pod as evicted', async () => {
    const key = 'abort-terminating-v1';
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/db', 1);
    for (const i of [0, 1, 2, 3])
      sim.addPod({ namespace: 'app', name: `db-${i}`, node: 'n1', pdbs: ['app/db'], graceMs: 3_600_000 });
    const inp = input(key, { nodeNames: ['n1'] });
    const planId = planWorkflowId(inp.plan);
    const n1 = () => sim.lastStatus()?.nodes?.find((n) => n.name === 'n1');
    const res = await wf.driveTo(
      sim,
      inp,
      () => /1 of them terminating/.test(n1()?.message ?? ''),
      abortSignal,
    );

    assert.equal(res.phase, 'Aborted');
    const evicted = sim
      .evictions()
      .filter((c) => (c.result as { outcome?: string } | undefined)?.outcome === 'Evicted');
    assert.equal(evicted.length, 1, 'one eviction took effect before the abort');
    const terminating = [...sim.pods.values()].filter((p) => p.terminatingUntil !== undefined && !p.gone);
    assert.equal(terminating.length, 1, 'that pod is still terminating at the end');
    const final: NodeProgress = await wf.env.client.workflow.getHandle(nodeWorkflowId(planId, 'n1')).result();
    assert.equal(final.phase, 'Aborted');
    assert.equal(final.final, true);
    assert.equal(final.podsEvicted, 1, 'the node counts the terminating evicted pod');
    assert.equal(final.podsTotal, 4);
    assert.equal(final.podsFailed, 0);
    const status = sim.lastStatus()!;
    assert.equal(status.phase, 'Aborted');
    assert.equal(n1()?.podsEvicted, 1, 'status.nodes[n1].podsEvicted');
    assert.deepEqual(
      {
        evicted: status.evictionProgress?.evicted,
        failed: status.evictionProgress?.failed,
        total: status.evictionProgress?.total,
      },
      { evicted: 1, failed: 0, total: 4 },
      'status.evictionProgress',
    );
  });
});
