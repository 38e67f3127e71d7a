/**
 * A node whose deadline passed while no worker ran decides from a view observed after the deadline
 * (src/drain/node/deadline.ts, `FRESH_VIEW_WAIT_MS`), in the time-skipping environment against the sim
 * cluster: node n1 holds `app/web-0` (free, evicted before the crash and still terminating then) and
 * `app/db-0`, `app/db-1` behind PDB app/db, which allows no disruption. The worker stops mid-drain;
 * while none runs, web-0 finishes terminating (it is gone) and someone deletes db-1; time passes the
 * deadline; a new worker on the same task queue replays the workflows and goes on. Each policy
 * (Stop, SkipNode, DeletePods) must act on the cluster as it is after the deadline, not on the view
 * from before the crash.
 *
 * The test server skips time only while no task waits for a worker, so the worker is stopped at a
 * quiet point (the node's next timer is its deadline: `eviction.retryBackoff.maxSeconds` beyond it)
 * and the new one starts just after the deadline; that the wait is counted from the first decision
 * past the deadline, not from the deadline, is in test/unit/node-deadline.test.ts.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { createGrantDeliveryActivities } from '../../src/activities/grant-delivery.js';
import type { MaintenancePlanSpecInput } from '../../src/api/plan.js';
import { abortSignal, releaseSignal } from '../../src/contract/plan-messages.js';
import { evictionTaskQueue, nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import type { NodeProgress } from '../../src/contract/progress.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { workflowIds } from '../helpers/drain-checks.js';
import { EventType, WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

let seq = 0;

/**
 * No workflow task of any run of `ids` failed, but for UnhandledCommand (an event arrived while the
 * task ran; the SDK runs it again). A task the stopped worker had taken may time out: it never
 * completes it, and the new worker runs it again.
 */
async function assertNoTaskFailed(ids: string[]): Promise<void> {
  for (const id of ids)
    for (const run of await wf.runs(id)) {
      const failed = (run.history.events ?? [])
        .map((e) => (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED ? e : undefined))
        .map((e) => e?.workflowTaskFailedEventAttributes)
        .filter((a) => a && a.cause !== 1); // 1: WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND
      assert.deepEqual(
        failed.map((a) => `${a?.cause} ${a?.failure?.message}`),
        [],
        `${id}: failed workflow tasks`,
      );
    }
}

/** n1 with web-0 (evictable; terminating for an hour of real time once evicted) and db-0, db-1 behind app/db (0 allowed). */
function cluster(): SimCluster {
  const sim = new SimCluster().addNode('n1');
  sim.addPod({ namespace: 'app', name: 'web-0', node: 'n1', graceMs: 3_600_000 });
  sim.pdbs.set('app/db', 0);
  for (const name of ['db-0', 'db-1'])
    sim.addPod({ namespace: 'app', name, node: 'n1', pdbs: ['app/db'], terminationGracePeriodSeconds: 30 });
  return sim;
}

/**
 * drainflow's worker and the eviction worker on `taskQueue`, serving `sim`; every deletePod call is
 * recorded in `deletes` (`namespace/name`, also calls for pods already gone, which the sim does not
 * record). No workflow cache: the time-skipping server never times out a task on a stopped worker's
 * sticky queue, and a new worker must replay the histories, as after a crash.
 */
async function startWorkers(sim: SimCluster, taskQueue: string, deletes: string[]) {
  const activities = sim.activities();
  const main = await Worker.create({
    connection: wf.env.nativeConnection,
    taskQueue,
    workflowBundle: wf.bundle,
    activities: {
      ...createGrantDeliveryActivities(),
      ...activities,
      deletePod: (i: Parameters<typeof activities.deletePod>[0]) => {
        deletes.push(`${i.namespace}/${i.name}`);
        return activities.deletePod(i);
      },
    },
    maxCachedWorkflows: 0,
  });
  const evictions = await Worker.create({
    connection: wf.env.nativeConnection,
    taskQueue: evictionTaskQueue(taskQueue),
    activities: { evictPod: activities.evictPod },
  });
  const done = Promise.all([main.run(), evictions.run()]);
  void done.catch(() => undefined); // awaited (and so reported) by stop()
  return {
    stop: async () => {
      main.shutdown();
      evictions.shutdown();
      await done;
    },
  };
}

/**
 * Runs the plan until web-0 is evicted (terminating) and db-0, db-1 wait for their PDB, stops the
 * worker, lets web-0 go and db-1 be deleted, skips time past the deadline (600 s after the start)
 * and starts a new worker. @returns the node workflow's final progress, the plan's status once it
 * shows the node's end, and the deletePod calls.
 */
async function crashPastDeadline(
  key: string,
  extra: Partial<MaintenancePlanSpecInput>,
  signal: typeof abortSignal | typeof releaseSignal,
) {
  const sim = cluster();
  // eviction.retryBackoff.maxSeconds beyond the deadline: after an unchanged observation the node's next
  // timer is its deadline, so the test server (which skips time only up to the first timer that
  // needs a worker) can reach the deadline while no worker runs.
  const inp = input(key, {
    nodeNames: ['n1'],
    uncordon: 'OnRelease',
    drainTimeoutSeconds: 600,
    eviction: { retryBackoff: { initialSeconds: 5, maxSeconds: 3600 } },
    ...extra,
  });
  const planId = planWorkflowId(inp.plan);
  const taskQueue = `deadline-fresh-${++seq}`;
  const deletes: string[] = [];
  let workers = await startWorkers(sim, taskQueue, deletes);
  let stopped = false;
  try {
    const h = await wf.startPlan(taskQueue, inp);
    const n1 = () => sim.lastStatus()?.nodes?.find((n) => n.name === 'n1');
    await wf.waitUntil(
      () =>
        /1 of them terminating/.test(n1()?.message ?? '') &&
        (n1()?.blockedBy ?? []).filter((b) => b.pdb === 'app/db').length === 2,
      'web-0 evicted and terminating, db-0 and db-1 waiting for app/db',
    );
    assert.ok(sim.pods.get('app/web-0')!.terminatingUntil !== undefined, 'web-0 terminating');
    const deadlineMs = Date.parse(sim.lastStatus()!.deadline!);
    // Quiet: the node's last look found nothing new and nothing happened for a second of real
    // time, so its next timer is the deadline and no task is due (debounce timers fired first).
    await wf.skip('10s');
    const unchanged = () =>
      (sim.calls.filter((c) => c.name === 'observeNode').at(-1)?.result as { changed?: boolean })?.changed ===
      false;
    for (let n = -1; n !== sim.calls.length || !unchanged();) {
      n = sim.calls.length;
      await new Promise((r) => setTimeout(r, 1000));
    }

    await workers.stop();
    stopped = true;
    // While no worker runs: web-0 finishes terminating, someone deletes db-1, the deadline passes.
    sim.pods.get('app/web-0')!.gone = true;
    sim.pods.get('app/db-1')!.gone = true;
    await wf.skip(`${deadlineMs - (await wf.env.currentTimeMs()) + 2000}ms`);
    assert.ok((await wf.env.currentTimeMs()) > deadlineMs, 'past the deadline');

    workers = await startWorkers(sim, taskQueue, deletes);
    stopped = false;
    const node = await wf.resultOf(wf.env.client.workflow.getHandle(nodeWorkflowId(planId, 'n1')));
    await wf.waitUntil(() => n1()?.phase === node.phase, `n1 ${node.phase} in the plan's status`);
    const status = sim.lastStatus()!;
    await h.signal(signal);
    await wf.resultOf(h);
    return { node: node as NodeProgress, status, deletes, sim, deadlineMs, ids: workflowIds(inp, ['n1']) };
  } finally {
    if (!stopped) await workers.stop();
  }
}

describe('a deadline passed while no worker ran (time-skipping)', () => {
  it('Stop: the node ends Blocked/DeadlineExceeded from a view observed after the deadline', async () => {
    const key = 'deadline-fresh';
    const { node, status, sim, ids, deadlineMs } = await crashPastDeadline(key, {}, abortSignal);
    assert.equal(node.phase, 'Blocked', JSON.stringify(node));
    assert.equal(node.reason, 'DeadlineExceeded');
    assert.deepEqual(
      node.blockedBy.map((b) => b.pod),
      ['app/db-0'],
      `only the pod still there blocks: ${JSON.stringify(node.blockedBy)}`,
    );
    assert.match(node.message ?? '', /deadline passed with 1 pod\(s\) not evicted/);
    assert.equal(node.podsTotal, 3);
    assert.equal(node.podsEvicted, 1, 'web-0 evicted and gone');
    assert.equal(node.podsGoneWithoutEviction, 1, 'db-1 deleted by someone else');
    const n1 = status.nodes!.find((n) => n.name === 'n1')!;
    assert.deepEqual(
      n1.blockedBy?.map((b) => b.pod),
      ['app/db-0'],
    );
    assert.ok(
      !sim.events.some((e) => e.reason === 'Terminating'),
      `no Terminating Event for a pod that is gone: ${JSON.stringify(sim.events)}`,
    );
    // The cost: one observation past the deadline, the fresh look, then the end.
    const looks = sim.calls.filter((c) => c.name === 'observeNode' && c.atMs >= deadlineMs);
    assert.equal(looks.length, 1, JSON.stringify(looks));
    await assertNoTaskFailed(ids);
  });

  it('SkipNode: the skip message counts the pods the cluster still has', async () => {
    const { node, ids } = await crashPastDeadline(
      'deadline-fresh-skip',
      { onDeadline: 'SkipNode' },
      releaseSignal,
    );
    assert.equal(node.phase, 'Skipped', JSON.stringify(node));
    assert.equal(node.reason, 'SkippedAtDeadline');
    assert.match(node.message ?? '', /with 1 pod\(s\) left/);
    assert.equal(node.podsEvicted, 1);
    await assertNoTaskFailed(ids);
  });

  it('DeletePods: only the pod still there is deleted', async () => {
    const { node, deletes, ids } = await crashPastDeadline(
      'deadline-fresh-delete',
      { onDeadline: 'DeletePods', deadlineWarningSeconds: 0 },
      releaseSignal,
    );
    assert.deepEqual(deletes, ['app/db-0'], 'no DELETE for db-1, gone before the deadline');
    assert.equal(node.phase, 'Drained', JSON.stringify(node));
    assert.equal(node.reason, 'PodsDeletedAtDeadline');
    assert.equal(node.podsDeleted, 1);
    assert.equal(node.podsGoneWithoutEviction, 1);
    await assertNoTaskFailed(ids);
  });
});
