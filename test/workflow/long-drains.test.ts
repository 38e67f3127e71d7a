/**
 * Long and adversarial drains in the time-skipping environment, against the sim cluster of
 * test/helpers/sim-cluster.ts: days of skipped time (continue-as-new, bounded histories, the
 * deadline), big plans, injected activity faults, the reducer's rules seen end to end, and the
 * determinism guard. Histories are checked for size and for failed workflow tasks.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import webpack from 'webpack';
import { abortSignal, pauseSignal, releaseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import type { drainNodeWorkflow } from '../../src/workflows/node.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { quietBundlerLogger } from '../helpers/temporal.js';
import { assertNoWorkflowTaskFailed, evictedTwice, gapsOf, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, driveTo, waitUntil, startPlan } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/**
 * A driveTo condition: deletes node n1 once it has been observed, and is met when the plan is
 * Drained (the case of a node deleted mid-drain).
 */
const deleteN1OnceObserved = (sim: SimCluster) => () => {
  if (sim.calls.some((c) => c.name === 'observeNode') && sim.nodes.has('n1')) sim.deleteNode('n1');
  return sim.lastStatus()?.phase === 'Drained';
};

describe('injected activity faults (time-skipping)', () => {
  const twoPods = (name: string) => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'a', node: 'n1' });
    sim.addPod({ namespace: 'app', name: 'b', node: 'n1' });
    return { sim, inp: input(name, { nodeNames: ['n1'], uncordon: 'OnRelease' }) };
  };

  for (const activity of ['cordonNode', 'observeNode'] as const) {
    it(`${activity} failing non-retryably: the node ends Failed naming the error, the plan ends`, async () => {
      const { sim, inp } = twoPods(`fault-${activity.toLowerCase()}`);
      sim.fail(activity, 'nonRetryable');
      const res = await driveTo(sim, inp, 'Failed', releaseSignal, () => {
        const st = sim.lastStatus()!;
        assert.equal(st.nodes?.[0]?.phase, 'Failed');
        assert.match(st.message ?? '', new RegExp(`injected non-retryable failure of ${activity}`));
      });
      assert.equal(res.phase, 'Completed');
      assert.equal(sim.evictions().length, 0);
      assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'handed back');
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    });
  }

  it('evictPod failing non-retryably: the node ends Failed naming the error, the plan ends', async () => {
    const { sim, inp } = twoPods('fault-evictpod');
    sim.fail('evictPod', 'nonRetryable');
    const res = await driveTo(sim, inp, 'Failed', releaseSignal, () => {
      const st = sim.lastStatus()!;
      assert.equal(st.nodes?.[0]?.phase, 'Failed');
      assert.match(st.message ?? '', /injected non-retryable failure of evictPod/);
    });
    assert.equal(res.phase, 'Completed');
    assert.equal((sim.evictions()[0]!.result as { fault: string }).fault, 'nonRetryable');
    assert.deepEqual(evictedTwice(sim), []);
    assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'handed back');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });

  for (const activity of ['writePlanStatus', 'recordEvent'] as const) {
    it(`${activity} failing non-retryably: the drain continues`, async () => {
      const { sim, inp } = twoPods(`fault-${activity.toLowerCase()}`);
      sim.fail(activity, 'nonRetryable');
      const res = await driveTo(sim, inp, 'Drained', releaseSignal);
      assert.equal(res.phase, 'Completed');
      assert.equal(sim.evictions().length, 2);
      assert.ok(
        sim.calls.some(
          (c) => c.name === activity && (c.result as { fault?: string })?.fault === 'nonRetryable',
        ),
        'the fault was hit',
      );
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    });
  }

  it('releaseNode failing non-retryably: a HandBackFailed Warning, the plan still ends', async () => {
    const { sim, inp } = twoPods('fault-releasenode');
    sim.fail('releaseNode', 'nonRetryable');
    const res = await driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    assert.ok(
      sim.events.some(
        (e) =>
          e.reason === 'HandBackFailed' && /injected non-retryable failure of releaseNode/.test(e.message),
      ),
    );
    assert.equal(sim.nodes.get('n1')!.unschedulable, true, 'not handed back: the call failed');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});

describe("the node reducer's rules end to end (time-skipping)", () => {
  it('an externally uncordoned node gets no eviction and is never Drained while schedulable', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/web', 0);
    sim.refill.add('app/web');
    for (let i = 0; i < 3; i++)
      sim.addPod({ namespace: 'app', name: `web-${i}`, node: 'n1', pdbs: ['app/web'] });
    const inp = input('uncordoned', { nodeNames: ['n1'], uncordon: 'OnRelease', release: true });
    let recordonedAt = 0;
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await startPlan(taskQueue, inp);
      await waitUntil(() => sim.calls.some((c) => c.name === 'observeNode'), 'first observation');
      sim.uncordonExternally('n1');
      sim.pdbs.set('app/web', 3); // evictions would be allowed now, but the node is schedulable
      await waitUntil(
        () =>
          sim.lastStatus()?.conditions?.find((c) => c.type === 'Blocked')?.reason ===
          'NodeUncordonedExternally',
        'NodeUncordonedExternally',
      );
      assert.equal(sim.lastStatus()?.nodes?.[0]?.phase, 'Blocked');
      await wf.skip('10m');
      assert.equal(sim.evictions().length, 0, 'no eviction while schedulable');
      assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'the plan does not cordon it again');
      recordonedAt = sim.statuses.length;
      sim.cordonExternally('n1');
      return h.result();
    });
    assert.equal(res.phase, 'Completed');
    assert.ok(
      sim.statuses
        .slice(0, recordonedAt)
        .every((s) => s.status.phase !== 'Drained' && s.status.nodes?.[0]?.phase !== 'Drained'),
      'never Drained while schedulable',
    );
    assert.equal(sim.evictions().length, 3);
    const warnings = sim.events.filter((e) => e.reason === 'NodeUncordonedExternally');
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.type, 'Warning');
  });

  it('a node deleted mid-drain ends Deleted/NodeDeleted and the plan finishes', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/db', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    const inp = input('deleted', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const [, nodeId] = workflowIds(inp, ['n1']) as [string, string];
    const res = await driveTo(sim, inp, deleteN1OnceObserved(sim), releaseSignal, async () => {
      const st = sim.lastStatus()!;
      assert.equal(st.nodes?.[0]?.phase, 'Deleted');
      // The pod never evicted stays counted, and the plan does not
      // read AllNodesDrained.
      assert.equal(st.nodes?.[0]?.podsTotal, 1);
      assert.equal(st.nodes?.[0]?.podsEvicted, 0);
      assert.equal(st.nodes?.[0]?.podsGoneWithoutEviction, 1);
      assert.match(st.nodes?.[0]?.message ?? '', /0 pod\(s\) evicted, 1 never evicted went with the node/);
      assert.equal(st.evictionProgress?.goneWithoutEviction, 1);
      assert.equal(st.reason, 'DrainedWithNodesDeleted');
      assert.match(st.message ?? '', /1 pod\(s\) on the deleted node\(s\) left without eviction/);
      const node = await wf.env.client.workflow.getHandle<typeof drainNodeWorkflow>(nodeId).result();
      assert.equal(node.phase, 'Deleted');
      assert.equal(node.reason, 'NodeDeleted');
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 0);
    assert.ok(sim.events.some((e) => e.reason === 'NodeDeleted'));
  });

  it('a blocker removed (the second PDB deleted) drains the node without a new plan', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/a', 5);
    sim.pdbs.set('app/b', 5);
    sim.addPod({ namespace: 'app', name: 'both', node: 'n1', pdbs: ['app/a', 'app/b'] });
    const inp = input('unblocked', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const res = await driveTo(
      sim,
      inp,
      () => {
        if (sim.lastStatus()?.nodes?.[0]?.phase === 'Blocked' && sim.pdbs.has('app/b'))
          sim.deletePdb('app/b');
        return sim.lastStatus()?.phase === 'Drained';
      },
      releaseSignal,
    );
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 1, 'one call, after the second PDB went');
    assert.ok(
      sim.statuses.some((s) => s.status.nodes?.[0]?.phase === 'Blocked'),
      'it was Blocked first',
    );
  });

  it('bare pods on 3 nodes with maxUnavailableNodes 1: one node cordoned by the plan until the deadline', async () => {
    const sim = new SimCluster();
    for (const n of ['n1', 'n2', 'n3']) {
      sim.addNode(n);
      sim.addPod({ namespace: 'app', name: `bare-${n}`, node: n, action: 'Block', reason: 'NoController' });
    }
    const inp = input('bare-pods', {
      nodeNames: ['n1', 'n2', 'n3'],
      maxUnavailableNodes: 1,
      drainTimeoutSeconds: 3600,
    });
    let maxCordoned = 0;
    const res = await driveTo(
      sim,
      inp,
      () => {
        maxCordoned = Math.max(
          maxCordoned,
          [...sim.nodes.values()].filter((n) => n.heldBy === inp.plan.uid).length,
        );
        return sim.lastStatus()?.reason === 'DeadlineExceeded';
      },
      abortSignal,
      () => {
        const st = sim.lastStatus()!;
        assert.equal(st.phase, 'Blocked');
        assert.deepEqual(
          st.nodes?.map((n) => n.phase),
          ['Blocked', 'Blocked', 'Blocked'],
        );
      },
    );
    assert.equal(res.phase, 'Aborted');
    assert.equal(maxCordoned, 1);
    assert.deepEqual(
      [
        ...new Set(
          sim.calls.filter((c) => c.name === 'cordonNode').map((c) => (c.arg as { node: string }).node),
        ),
      ],
      ['n1'],
      'only the first node was ever cordoned: a blocked node keeps its slot',
    );
    assert.equal(sim.evictions().length, 0);
  });

  it('429 with Retry-After 0 and a 429 naming an unknown PDB back off, never a 0 s loop', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/web', 5);
    sim.addPod({ namespace: 'app', name: 'zero', node: 'n1' });
    sim.addPod({ namespace: 'app', name: 'ghost', node: 'n1', pdbs: ['app/web'] });
    sim.refuse('RetryAfterZero', { pod: 'app/zero', times: 3 });
    sim.refuse('UnknownPdb', { pod: 'app/ghost', times: 3 });
    const inp = input('retry-zero', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    for (const pod of ['zero', 'ghost']) {
      const gaps = gapsOf(sim, pod);
      assert.equal(gaps.length, 3, `${pod}: three refusals, then evicted`);
      for (const g of gaps) assert.ok(g >= 5000, `${pod}: ${g} ms between calls (initialSeconds 5)`);
    }
    assert.deepEqual(evictedTwice(sim), []);
  });

  it('a timed-out eviction that took effect is not sent again while the pod terminates', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'slow', node: 'n1', graceMs: 4000 });
    sim.fail('evictPod', 'hang', { afterEffect: true, hangMs: 15_000 });
    const inp = input('timed-out', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      eviction: { callTimeoutSeconds: 2 },
    });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 1, 'the timed-out call only');
    assert.equal(sim.pods.get('app/slow')!.evictedTimes, 1);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});

describe('determinism guard', () => {
  it('a changed command order of the node loop fails the replay of the histories just recorded', async () => {
    const sim = new SimCluster().addNode('n1');
    for (let i = 0; i < 3; i++) sim.addPod({ namespace: 'app', name: `p-${i}`, node: 'n1' });
    const inp = input('parallel-evictions-v2', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    await driveTo(sim, inp, 'Drained', releaseSignal);
    const nodeId = nodeWorkflowId(planWorkflowId(inp.plan), 'n1');
    const history = await wf.env.client.workflow.getHandle(nodeId).fetchHistory();
    const scheduled = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'evictPod',
    );
    assert.equal(scheduled.length, 3, 'three evictions');
    // The harness's replay (run after every test) passes with the code as it is...
    await wf.replayWorkflows([planWorkflowId(inp.plan)]);
    // ...and fails with the same code whose node loop evicts one pod at a time (three evictions
    // scheduled in one workflow task become one).
    const changed = fileURLToPath(
      new URL('../fixtures/workflows/node-decide-one-at-a-time.ts', import.meta.url),
    );
    const bundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url)),
      logger: quietBundlerLogger,
      webpackConfigHook: (config) => {
        config.plugins = [
          ...(config.plugins ?? []),
          new webpack.NormalModuleReplacementPlugin(
            /^(\.\.\/)+drain\/node\/decide\.js$/,
            (resource: { request: string; context: string }) => {
              if (resource.context.includes('/src/workflows')) resource.request = changed;
            },
          ),
        ];
        return config;
      },
    });
    await assert.rejects(wf.replayWorkflows([planWorkflowId(inp.plan)], bundle), (err: Error) => {
      assert.match(err.message, /replay of 1 of 2 recorded run\(s\) failed/);
      assert.match(err.message, new RegExp(`${nodeId} \\(run [^)]+\\): DeterminismViolationError`));
      return true;
    });
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: bundle }, history, nodeId),
      DeterminismViolationError,
    );
  });
});

describe('the loop end to end (time-skipping)', () => {
  it('cooldown: no eviction before a Retry-After of 120 s', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'api-0', node: 'n1' });
    sim.refuse('Throttled', { retryAfterSeconds: 120, times: 1 });
    const inp = input('cooldown-v2', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    const gaps = gapsOf(sim, 'api-0');
    assert.equal(gaps.length, 1);
    assert.ok(gaps[0]! >= 120_000, `${gaps[0]} ms`);
  });

  it('paused plan: nothing evicted until resumed', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/web', 0);
    sim.refill.add('app/web');
    for (let i = 0; i < 2; i++)
      sim.addPod({ namespace: 'app', name: `p-${i}`, node: 'n1', pdbs: ['app/web'] });
    const inp = input('paused-v2', { nodeNames: ['n1'], uncordon: 'OnRelease', release: true });
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await startPlan(taskQueue, inp);
      await waitUntil(() => sim.calls.some((c) => c.name === 'observeNode'), 'first observation');
      await h.signal(pauseSignal);
      await waitUntil(() => sim.lastStatus()?.nodes?.[0]?.phase === 'Paused', 'node Paused');
      sim.pdbs.set('app/web', 2);
      await wf.skip('10m');
      assert.equal(sim.evictions().length, 0);
      assert.equal(sim.lastStatus()?.phase, 'Paused');
      await h.signal(resumeSignal);
      return h.result();
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 2);
  });

  it('a paused node lists no blockers: the pause holds it, not its PodDisruptionBudget', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/web', 0);
    for (let i = 0; i < 2; i++)
      sim.addPod({ namespace: 'app', name: `p-${i}`, node: 'n1', pdbs: ['app/web'] });
    const inp = input('paused-v3', { nodeNames: ['n1'], uncordon: 'OnRelease', release: true });
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await startPlan(taskQueue, inp);
      const blocked = () => sim.lastStatus()?.nodes?.[0]?.blockedBy?.map((b) => `${b.pod}: ${b.reason}`);
      await waitUntil(() => (blocked()?.length ?? 0) === 2, 'the PDB blocks both pods');
      assert.deepEqual(blocked(), ['app/p-0: DisruptionBudget', 'app/p-1: DisruptionBudget']);
      await h.signal(pauseSignal);
      await waitUntil(() => sim.lastStatus()?.nodes?.[0]?.phase === 'Paused', 'node Paused');
      await wf.skip('2m');
      const paused = sim.lastStatus()!;
      assert.equal(paused.phase, 'Paused');
      assert.equal(paused.nodes?.[0]?.blockedBy, undefined, 'a paused node lists no blockers');
      assert.equal(paused.evictionProgress?.pending, 2, 'its pods are still pending');
      await h.signal(resumeSignal);
      await waitUntil(() => (blocked()?.length ?? 0) === 2, 'resumed: the PDB blocks both pods again');
      sim.pdbs.set('app/web', 2);
      return h.result();
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 2);
  });

  it('past the deadline: Blocked/DeadlineExceeded, then aborted', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/db', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    const inp = input('deadline-v2', { nodeNames: ['n1'], drainTimeoutSeconds: 300 });
    const res = await driveTo(
      sim,
      inp,
      () => sim.lastStatus()?.reason === 'DeadlineExceeded',
      abortSignal,
      () => wf.skip('1h'), // past the deadline, the plan waits for release or abort
    );
    assert.equal(res.phase, 'Aborted');
    assert.equal(sim.evictions().length, 0);
  });
});
