/**
 * Refusals that heal and the ends of a plan, in the time-skipping environment against the sim
 * cluster of test/helpers/sim-cluster.ts: a 409 Conflict and a 403 NamespaceTerminating from the
 * Eviction API, a resolveNodes activity failing non-retryably, and a node selector matching more
 * nodes than one plan may drain.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PLAN_NODES } from '../../src/api/bounds.js';
import { releaseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, evictedTwice, gapsOf, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, driveTo, startPlan, resultOf } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('self-healing refusals in the node loop (time-skipping)', () => {
  it('409 Conflict is retried after the backoff; after a 403 NamespaceTerminating the pod is waited for, not evicted again', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'conflict', node: 'n1' });
    sim.addPod({ namespace: 'gone', name: 'terminating', node: 'n1' });
    sim.refuse('Conflict', { pod: 'app/conflict', times: 2 });
    // The sim's 403 also starts the namespace deletion's termination of the pod (gone after graceMs).
    sim.refuse('NamespaceTerminating', { pod: 'gone/terminating', times: 1 });
    const inp = input('refusals-heal', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal, () => {
      const st = sim.lastStatus()!;
      assert.equal(st.nodes?.[0]?.phase, 'Drained');
      assert.equal(st.nodes?.[0]?.blockedBy, undefined, 'no blocker left');
      // The 409'd pod was evicted; the other left with its namespace.
      assert.equal(st.nodes?.[0]?.podsEvicted, 1);
      assert.equal(st.nodes?.[0]?.podsGoneWithoutEviction, 1);
    });
    assert.equal(res.phase, 'Completed');
    const conflictGaps = gapsOf(sim, 'conflict');
    assert.equal(conflictGaps.length, 2, 'two 409s, then the eviction');
    // retryBackoff defaults: initialSeconds 5, doubled per refusal.
    for (const g of conflictGaps) assert.ok(g >= 5000, `${g} ms between calls after a 409`);
    assert.equal(sim.pods.get('app/conflict')!.evictedTimes, 1);
    assert.equal(
      sim.evictions().filter((c) => (c.arg as { name: string }).name === 'terminating').length,
      1,
      'the pod of the terminating namespace got one call: the drain waited for it to go',
    );
    assert.equal(sim.pods.get('gone/terminating')!.evictedTimes ?? 0, 0);
    assert.deepEqual(evictedTwice(sim), []);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });

  it('a pod seen terminating while its call is in flight, then refused 403 NamespaceTerminating, counts as gone without eviction', async () => {
    // The 403 starts the namespace deletion's termination at once and its answer comes 300 ms
    // later, so an observation shows the pod terminating while the call is in flight (a loaded
    // host made this happen by chance). The refusal says the call did not evict it.
    const sim = new SimCluster({ answerDelayMs: 300 }).addNode('n1');
    sim.addPod({ namespace: 'gone', name: 'terminating', node: 'n1', graceMs: 1500 });
    sim.refuse('NamespaceTerminating', { pod: 'gone/terminating', times: 1 });
    const inp = input('refused-terminating', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
    });
    await withWorker(sim, async (taskQueue) => {
      const h = await startPlan(taskQueue, inp);
      // Small steps of workflow time: the call takes real time, and its 10 s timeout is workflow time.
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained status', 30_000, '100ms');
      const st = sim.lastStatus()!;
      assert.equal(st.nodes?.[0]?.podsEvicted, 0, 'the refused call evicted nothing');
      assert.equal(st.nodes?.[0]?.podsGoneWithoutEviction, 1);
      await h.signal(releaseSignal);
      assert.equal((await resultOf(h)).phase, 'Completed');
    });
    assert.equal(sim.evictions().length, 1, 'one call: the drain waited for the pod to go');
    assert.equal(sim.pods.get('gone/terminating')!.evictedTimes ?? 0, 0);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});

describe('ends of a plan before its nodes (time-skipping)', () => {
  it('resolveNodes failing non-retryably: the plan ends Failed/ResolveFailed naming the error, nothing cordoned', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'a', node: 'n1' });
    sim.fail('resolveNodes', 'nonRetryable');
    const inp = input('fault-resolvenodes', { nodeNames: ['n1'] });
    const res = await withWorker(sim, async (taskQueue) => resultOf(await startPlan(taskQueue, inp)));
    assert.equal(res.phase, 'Failed');
    assert.equal(res.reason, 'ResolveFailed');
    assert.match(res.message ?? '', /injected non-retryable failure of resolveNodes/);
    const st = sim.lastStatus()!;
    assert.equal(st.phase, 'Failed');
    assert.equal(st.reason, 'ResolveFailed');
    assert.match(
      st.message ?? '',
      /resolving the nodes failed: .*injected non-retryable failure of resolveNodes/,
    );
    assert.equal(sim.calls.filter((c) => c.name === 'cordonNode').length, 0);
    assert.equal(sim.nodes.get('n1')!.unschedulable, false);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, []));
  });

  it(`a node selector matching ${MAX_PLAN_NODES + 1} nodes: Failed/TooManyNodes, nothing cordoned`, async () => {
    const sim = new SimCluster();
    for (let i = 0; i <= MAX_PLAN_NODES; i++) sim.addNode(`node-${String(i).padStart(4, '0')}`);
    const inp = input('too-many-nodes', { nodeSelector: { matchLabels: { pool: 'all' } } });
    const res = await withWorker(sim, async (taskQueue) => resultOf(await startPlan(taskQueue, inp)));
    assert.equal(res.phase, 'Failed');
    assert.equal(res.reason, 'TooManyNodes');
    assert.equal(
      sim.lastStatus()?.message,
      `${MAX_PLAN_NODES + 1} nodes match; one plan drains at most ${MAX_PLAN_NODES}`,
    );
    assert.equal(sim.calls.filter((c) => c.name === 'cordonNode').length, 0);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, []));
  });
});
