/**
 * Issue 34: a PodDisruptionBudget that can never allow a disruption (a single replica behind
 * minAvailable: 1) is said at once, in the time-skipping environment against the sim cluster of
 * test/helpers/sim-cluster.ts (its `pdbShapes` make observations carry the diagnosis, as the
 * observeNode activity does): the node's blocker carries kind Never and the owner, the plan has the
 * DisruptionBlocked condition, and exactly one Warning Event goes out with the first observation
 * that shows the block, not at the deadline and not per attempt.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('PodDisruptionBudget diagnosis (time-skipping)', () => {
  it('a single replica behind minAvailable 1 reads Never at once, with one Warning Event', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('shop/web', 0);
    sim.pdbShapes.set('shop/web', {
      pdb: { spec: { minAvailable: 1 }, status: { currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 } },
      pod: 'shop/web-0',
      pods: [{ key: 'shop/web-0', node: 'n1', phase: 'Running', ready: true }],
      owner: { ref: 'Deployment shop/web', replicas: 1 },
    });
    sim.addPod({ namespace: 'shop', name: 'web-0', node: 'n1', pdbs: ['shop/web'] });
    const inp = input('pdb-never', { nodeNames: ['n1'], drainTimeoutSeconds: 3600 });
    const warnings = () => sim.events.filter((e) => e.reason === 'DisruptionBlocked');
    const res = await wf.driveTo(
      sim,
      inp,
      () => sim.lastStatus()?.nodes?.[0]?.blockedBy?.[0]?.kind !== undefined,
      abortSignal,
      async () => {
        const st = sim.lastStatus()!;
        const b = st.nodes![0]!.blockedBy![0]!;
        assert.equal(b.kind, 'Never');
        assert.equal(b.pdb, 'shop/web');
        assert.equal(b.owner, 'Deployment shop/web');
        assert.match(b.message, /can never allow a disruption \(Never: a single replica/);
        const c = (st.conditions ?? []).find((x) => x.type === 'DisruptionBlocked');
        assert.equal(c?.status, 'True');
        assert.equal(c?.reason, 'Never');
        assert.match(c!.message, /shop\/web/);
        assert.match(c!.message, /Deployment shop\/web/);
        const observations = sim.calls.filter((x) => x.name === 'observeNode').length;
        // The Warning follows the first observation that showed the block (the deadline is an hour away).
        await wf.waitUntil(() => warnings().length > 0, 'the Warning Event', 10_000, '100ms');
        assert.ok(observations <= 2, `${observations} observation(s) before the blocker showed`);
        // Time goes on (10 minutes, many more observations): still one Warning.
        await wf.skip('10m');
        assert.equal(warnings().length, 1, JSON.stringify(warnings()));
        assert.match(
          warnings()[0]!.message,
          /node n1: pod shop\/web-0: PodDisruptionBudget shop\/web can never/,
        );
      },
    );
    assert.equal(res.phase, 'Aborted');
    assert.equal(sim.pods.get('shop/web-0')!.evictedTimes ?? 0, 0);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});
