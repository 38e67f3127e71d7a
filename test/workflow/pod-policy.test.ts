/**
 * Pod order groups, per-pod opt-outs and eviction.skipWaitForDeleteTimeoutSeconds in the
 * time-skipping environment, against the sim cluster.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { releaseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import {
  NODE_CLOSE_CROSSED_BY_ITS_TIMER,
  assertNoWorkflowTaskFailed,
  workflowIds,
} from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('pod policy (time-skipping)', () => {
  it('order groups: each group is evicted only once the lower ones are gone; status.nodes[].currentOrder follows (pod-order-v1)', async () => {
    const sim = new SimCluster({ graceMs: 300 });
    sim.addNode('n1');
    sim.addPod({ namespace: 'app', name: 'client-a', node: 'n1' });
    sim.addPod({ namespace: 'app', name: 'client-b', node: 'n1' });
    sim.addPod({ namespace: 'rook', name: 'osd-0', node: 'n1', order: 10 });
    sim.addPod({ namespace: 'rook', name: 'osd-1', node: 'n1', order: 10 });
    sim.addPod({ namespace: 'kube-system', name: 'dns', node: 'n1', order: 1000 });
    const inp = input('pod-order-v1', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      podOrder: [
        { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'rook' } }, order: 10 },
      ],
    });
    await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000);
      await h.signal(releaseSignal);
      await h.result();
    });
    const evicted = sim.calls
      .filter((c) => c.name === 'evictPod')
      .map((c) => (c.arg as { name: string }).name);
    assert.deepEqual(evicted.slice(0, 2).sort(), ['client-a', 'client-b']);
    assert.deepEqual(evicted.slice(2, 4).sort(), ['osd-0', 'osd-1']);
    assert.deepEqual(evicted.slice(4), ['dns']);
    const orders = sim.statuses
      .map((x) => x.status.nodes?.[0]?.currentOrder)
      .filter((o): o is number => o !== undefined);
    assert.deepEqual(
      orders,
      [...orders].sort((a, b) => a - b),
      'currentOrder never goes back',
    );
    // The status writer coalesces writes close together, so on a loaded host the short group-10
    // stretch may never reach a status (CI saw only 1000); the order of the evictions above is
    // the behaviour, the status must end at the last group and never go back.
    assert.equal(orders.at(-1), 1000, `currentOrder ends at 1000: ${orders.join(',')}`);
    assert.equal(sim.lastStatus()?.evictionProgress?.evicted, 5);
    // The plan may complete while the node's last report arrives: the server then refuses that
    // completion once (UnhandledCommand) and the SDK runs the task again (seen once in CI).
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER],
    });
  });

  it('skipWaitForDeleteTimeoutSeconds: a pod stuck terminating counts as gone after the timeout, reported in status and an Event', async () => {
    const sim = new SimCluster();
    sim.addNode('n1');
    sim.addPod({ namespace: 'app', name: 'web-0', node: 'n1' });
    // Held by a finalizer: terminating for far longer than the test runs.
    sim.addPod({ namespace: 'app', name: 'stuck-0', node: 'n1', graceMs: 3_600_000 });
    const inp = input('skip-wait', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      drainTimeoutSeconds: 3600,
      eviction: { skipWaitForDeleteTimeoutSeconds: 120 },
    });
    const final = await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(
        () => sim.pods.get('app/stuck-0')!.deletionTimestampMs !== undefined,
        'stuck-0 evicted',
      );
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000, '30s');
      const st = sim.lastStatus()!;
      await h.signal(releaseSignal);
      await h.result();
      return st;
    });
    const stuck = sim.pods.get('app/stuck-0')!;
    assert.equal(stuck.gone, undefined, 'the pod is still there (terminating)');
    // Counted gone (its Event) 120 s after the deletionTimestamp, by the workflow's timer, not at the deadline.
    const countedAt = sim.calls.find(
      (c) => c.name === 'recordEvent' && (c.arg as { reason: string }).reason === 'DeleteTimeoutPassed',
    )?.atMs;
    assert.ok(countedAt !== undefined, 'a DeleteTimeoutPassed Event was recorded');
    const after = countedAt - stuck.deletionTimestampMs!;
    assert.ok(after >= 120_000 && after < 125_000, `counted gone ${after} ms after the deletionTimestamp`);
    assert.equal(final.phase, 'Drained');
    assert.deepEqual(
      final.nodes?.[0]?.skipped?.map((p) => [p.pod, p.reason]),
      [['app/stuck-0', 'DeleteTimeoutPassed']],
    );
    const ev = sim.events.find((e) => e.reason === 'DeleteTimeoutPassed');
    assert.ok(ev, 'a DeleteTimeoutPassed Event');
    assert.match(ev.message, /app\/stuck-0 still terminating 120 s after its deletionTimestamp/);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});
