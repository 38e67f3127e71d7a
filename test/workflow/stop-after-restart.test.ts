/**
 * A pause or abort set while no worker runs (the worker killed mid-drain), then the worker started
 * again: no eviction may start after the stop was sent. The stop goes the way the operator sends it
 * (src/operator/node-stops.ts): a signal to the plan workflow and `nodeControl` straight to its
 * running node workflow. With the plan signal alone the node's pending workflow task (a cooldown
 * timer that fired while no worker ran) could run before the plan's and schedule one more
 * `evictPod` before the plan forwarded the stop.
 *
 * The time-skipping test server answers no visibility list, so the test gives the node workflow IDs
 * to `signalNodeStop` itself (what `runningNodeWorkflowIds` finds on a real server, covered by
 * test/unit/node-stops.test.ts and the e2e tests).
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { signalNodeStop, type NodeStop } from '../../src/operator/node-stops.js';
import { NODE_WORKFLOW_TYPE, nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { abortSignal, pauseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { workflowIds } from '../helpers/drain-checks.js';
import { EventType, WorkflowHarness, input, type History } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** Eviction calls that took effect (201 on a live pod), over every pod. */
function evicted(sim: SimCluster): number {
  return [...sim.pods.values()].reduce((n, p) => n + (p.evictedTimes ?? 0), 0);
}

/** Event IDs of the `evictPod` activities scheduled in a history. */
function evictPodScheduled(h: History): number[] {
  return (h.events ?? [])
    .filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        e.activityTaskScheduledEventAttributes?.activityType?.name === 'evictPod',
    )
    .map((e) => Number(e.eventId));
}

/** Polls `pred` every 250 ms of real time, failing after 30 s. */
async function until(pred: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await pred())) {
    assert.ok(Date.now() < end, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Whether the node completed a workflow task after both of its `evictPod` calls completed. */
function tookInBothAnswers(events: History['events'] & object): boolean {
  const done = events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
  const evictions = evictPodScheduled({ events });
  const answered = done.filter((e) =>
    evictions.includes(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId)),
  );
  if (answered.length < 2) return false;
  const last = Number(answered.at(-1)!.eventId);
  return events.some(
    (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && Number(e.eventId) > last,
  );
}

/** b-0's Retry-After, seconds of (real) time. */
const RETRY_AFTER_S = 6;

/** Set (to anything) to send the stop to the plan workflow only, as the operator did before. */
const PLAN_ONLY = process.env.DRAINFLOW_TEST_PLAN_ONLY_STOP !== undefined;

for (const stop of ['pause', 'abort'] as NodeStop[]) {
  describe(`${stop} sent while no worker runs (time-skipping)`, () => {
    it(`the restarted worker starts no eviction after the ${stop}; the plan ends ${stop === 'pause' ? 'Paused' : 'Aborted'}`, async () => {
      const sim = new SimCluster({ observePollMs: 0 });
      sim.addNode('n1');
      sim.addPod({ namespace: 'app', name: 'a-0', node: 'n1' });
      sim.addPod({ namespace: 'app', name: 'b-0', node: 'n1' });
      // b-0's first call is throttled (Retry-After RETRY_AFTER_S): the worker stops once the node
      // took the answer in, and the node's timer for b-0 fires while no worker runs, so the
      // restarted worker finds the node's workflow task pending with b-0's eviction due, as in the
      // reported history. (The time-skipping server skips no time while a workflow task waits for
      // a worker: that part runs in real time.)
      sim.refuse('Throttled', { pod: 'app/b-0', times: 1, retryAfterSeconds: RETRY_AFTER_S });
      const inp = input(`stop-after-restart-${stop}`, { nodeNames: ['n1'] });
      const planId = planWorkflowId(inp.plan);
      const nodeId = nodeWorkflowId(planId, 'n1');
      const client = wf.env.client;
      const nodeEvents = async () => (await client.workflow.getHandle(nodeId).fetchHistory()).events ?? [];
      let taskQueue = '';
      await withWorker(
        sim,
        async (tq) => {
          taskQueue = tq;
          await startPlan(tq, inp);
          await waitUntil(() => sim.evictions().length >= 2, 'a-0 evicted, b-0 throttled', 30_000, '100ms');
          await until(async () => tookInBothAnswers(await nodeEvents()), 'the node took in both answers');
        },
        // No sticky queue: the time-skipping server leaves a stopped worker's sticky tasks there
        // (a real server moves them to the task queue after the sticky schedule-to-start timeout).
        { maxCachedWorkflows: 0 },
      );
      const stoppedAt = Date.now();
      const nodeEventsBefore = (await nodeEvents()).length;
      const before = evicted(sim);
      await until(
        async () =>
          Date.now() >= stoppedAt + RETRY_AFTER_S * 1000 &&
          (await nodeEvents())
            .slice(nodeEventsBefore)
            .some((e) => e.eventType === EventType.EVENT_TYPE_TIMER_FIRED),
        "b-0's Retry-After timer fired",
      );
      // The worker is down: the stop, as the operator sends it.
      assert.equal((await client.workflow.getHandle(nodeId).describe()).type, NODE_WORKFLOW_TYPE);
      const stopAt = (await nodeEvents()).length;
      await client.workflow.getHandle(planId).signal(stop === 'pause' ? pauseSignal : abortSignal, {
        generation: 2,
      });
      if (!PLAN_ONLY) assert.deepEqual(await signalNodeStop(client, [nodeId], stop, 2), [nodeId]);
      assert.equal(evicted(sim), before, 'nothing evicted while no worker ran');

      const phase = stop === 'pause' ? 'Paused' : 'Aborted';
      const result = await withWorker(
        sim,
        async () => {
          await waitUntil(
            () => sim.lastStatus()?.phase === phase && sim.lastStatus()?.nodes?.[0]?.phase === phase,
            `plan and node ${phase}`,
          );
          // Paused: minutes pass (cooldowns, observations) and nothing is evicted; then an abort
          // ends the plan. Aborted: the plan ends on its own.
          if (stop === 'pause') {
            await wf.skip('5m');
            assert.equal(sim.lastStatus()?.phase, phase);
            await client.workflow.getHandle(planId).signal(abortSignal, { generation: 3 });
          }
          return wf.resultOf(client.workflow.getHandle(planId));
        },
        { taskQueue },
      );
      assert.equal((result as { phase: string }).phase, 'Aborted');
      const late = evictPodScheduled(await client.workflow.getHandle(nodeId).fetchHistory()).filter(
        (id) => id > stopAt,
      );
      assert.deepEqual(
        late,
        [],
        `evictPod scheduled at event(s) ${late.join(', ')} after the ${stop} was sent`,
      );
      assert.equal(evicted(sim), before, `no pod evicted after the ${stop}`);
      assert.equal(sim.pods.get('app/b-0')?.gone, undefined, 'b-0 is still there');
      // No workflow task failed (nondeterminism, a bug); one the stopped worker had started may
      // have timed out, as after a kill -9.
      for (const id of workflowIds(inp, ['n1'])) {
        const failed = ((await client.workflow.getHandle(id).fetchHistory()).events ?? []).filter(
          (e) =>
            e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED &&
            e.workflowTaskFailedEventAttributes?.cause !== 1, // UnhandledCommand: the SDK runs it again
        );
        assert.deepEqual(
          failed.map((e) => e.workflowTaskFailedEventAttributes?.failure?.message),
          [],
          `${id}: failed workflow task(s)`,
        );
      }
    });
  });
}
