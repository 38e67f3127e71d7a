/**
 * Days of skipped time around continue-as-new: a pause at a node run's continue-as-new boundary, a
 * node held by another plan for 24 h. In a file (a process, a test server) of their own: after
 * this much skipped time the in-memory test server stops skipping time for the tests that follow
 * (seen: their first backoff timer never fired). Sim cluster of test/helpers/sim-cluster.ts.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pauseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import {
  assertNoWorkflowTaskFailed,
  currentRun,
  evictedTwice,
  workflowIds,
} from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, waitUntil, startPlan, runs } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('continue-as-new over days (time-skipping)', () => {
  it('honours a pause sent right after a node run continued as new', async () => {
    const sim = new SimCluster({ observePollMs: 0 });
    sim.addNode('n1');
    sim.pdbs.set('app/web', 0);
    sim.refill.add('app/web');
    for (let i = 0; i < 4; i++)
      sim.addPod({ namespace: 'app', name: `web-${i}`, node: 'n1', pdbs: ['app/web'] });
    const inp = input('pause-at-can', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      release: true,
      drainTimeoutSeconds: 172800,
      eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 10 } },
    });
    const [planId, nodeId] = workflowIds(inp, ['n1']) as [string, string];
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await startPlan(taskQueue, inp);
      await waitUntil(() => sim.calls.some((c) => c.name === 'observeNode'), 'first observation');
      const firstRun = await currentRun(wf, nodeId);
      await wf.skip('30m'); // well before 5000 events (one observation per 10 s)
      assert.equal(await currentRun(wf, nodeId), firstRun, 'no continue-as-new yet');
      let run = firstRun;
      for (let i = 0; run === firstRun; i++) {
        assert.ok(i < 2000, 'the node run continues as new within a few hours');
        await wf.skip('10s');
        run = await currentRun(wf, nodeId);
      }
      await h.signal(pauseSignal); // right at the boundary
      const pausedAt = sim.calls.length;
      sim.pdbs.set('app/web', 4); // the budget frees: only the pause holds the evictions now
      await wf.skip('1h');
      assert.equal(sim.evictions().length, 0, 'no eviction while paused');
      assert.ok(
        sim.calls.slice(pausedAt).some((c) => c.name === 'observeNode'),
        'the node kept observing while paused',
      );
      assert.equal(sim.lastStatus()?.phase, 'Paused');
      await h.signal(resumeSignal);
      return h.result();
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 4);
    assert.deepEqual(evictedTwice(sim), []);
    const all = await assertNoWorkflowTaskFailed(wf, [planId, nodeId]);
    const nodeRuns = all.filter((r) => r.id === nodeId);
    assert.ok(nodeRuns.length >= 2);
  });

  it('waits 24 h for a node held by another plan with bounded runs, then claims it', async () => {
    const sim = new SimCluster({ observePollMs: 0 }).addNode('n1');
    sim.nodes.get('n1')!.heldBy = 'uid-other';
    sim.addPod({ namespace: 'app', name: 'a', node: 'n1' });
    sim.addPod({ namespace: 'app', name: 'b', node: 'n1' });
    const inp = input('held-24h', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      release: true,
      drainTimeoutSeconds: 172800,
    });
    const ids = workflowIds(inp, ['n1']);
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await startPlan(taskQueue, inp);
      await waitUntil(() => sim.events.some((e) => e.reason === 'NodeHeldByOtherPlan'), 'held Event');
      for (let i = 0; i < 24; i++) await wf.skip('1h');
      assert.equal(sim.evictions().length, 0);
      assert.equal(sim.nodes.get('n1')!.heldBy, 'uid-other');
      const chain = await runs(ids[1]!);
      assert.ok(chain.length >= 2, `the waiting node continued as new (${chain.length} run(s))`);
      for (const r of chain)
        assert.ok((r.history.events?.length ?? 0) < 15000, `${r.history.events?.length} events`);
      delete sim.nodes.get('n1')!.heldBy; // the other plan lets go
      return h.result();
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 2);
    assert.equal(
      sim.events.filter((e) => e.reason === 'NodeHeldByOtherPlan').length,
      1,
      'one Event for 24 h of waiting',
    );
    const cordons = sim.calls.filter((c) => c.name === 'cordonNode');
    assert.equal((cordons.at(-1)!.result as { outcome: string }).outcome, 'Cordoned');
    assert.ok(cordons.length < 24 * 60, `${cordons.length} claim attempts in 24 h (backoff up to 120 s)`);
    await assertNoWorkflowTaskFailed(wf, ids);
  });
});
