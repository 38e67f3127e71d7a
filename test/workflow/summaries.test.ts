/**
 * Every timer and activity of a drain says what it is in the Temporal UI (time-skipping server,
 * sim cluster): the recorded histories of a plan and its node carry a user-metadata summary on each
 * TimerStarted and ActivityTaskScheduled event (src/drain/summaries.ts), e.g. the cooldown of a
 * refused pod and its eviction.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { releaseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { workflowIds } from '../helpers/drain-checks.js';
import { EventType, WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { driveTo } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** The summaries of a workflow's timers and activities, in history order (`undefined`: none). */
async function summaries(
  workflowId: string,
): Promise<{ timers: (string | undefined)[]; activities: (string | undefined)[] }> {
  const h = await wf.env.client.workflow.getHandle(workflowId).fetchHistory();
  const timers: (string | undefined)[] = [];
  const activities: (string | undefined)[] = [];
  for (const e of h.events ?? []) {
    const p = e.userMetadata?.summary;
    const summary = p ? defaultPayloadConverter.fromPayload<string>(p) : undefined;
    if (e.eventType === EventType.EVENT_TYPE_TIMER_STARTED) timers.push(summary);
    if (e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) activities.push(summary);
  }
  return { timers, activities };
}

describe('summaries of timers and activities (time-skipping)', () => {
  it("a refused pod's cooldown and its eviction say so; no timer or activity without a summary", async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'conflict', node: 'n1' });
    sim.refuse('Conflict', { pod: 'app/conflict', times: 1 });
    const inp = input('summaries', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    const [planId, nodeId] = workflowIds(inp, ['n1']);
    const plan = await summaries(planId!);
    const node = await summaries(nodeId!);
    for (const [who, got] of [
      ['plan', plan],
      ['node', node],
    ] as const) {
      assert.ok(got.activities.length > 0, `${who}: some activity`);
      assert.deepEqual(
        [...got.timers, ...got.activities].filter((s) => !s),
        [],
        `${who}: every timer and activity has a summary (${JSON.stringify(got)})`,
      );
    }
    assert.ok(plan.timers.length > 0, 'the plan waits on a timer');
    assert.ok(
      plan.timers.some((t) => /^deadline of plan summaries at \d\d:\d\d:\d\d$/.test(t!)),
      plan.timers.join(' | '),
    );
    assert.ok(plan.activities.includes('resolve nodes'), plan.activities.join(' | '));
    assert.ok(node.activities.includes('cordon n1'), node.activities.join(' | '));
    assert.ok(
      node.timers.some((t) => /^cooldown of pod app\/conflict until \d\d:\d\d:\d\d$/.test(t!)),
      node.timers.join(' | '),
    );
    assert.equal(
      node.activities.filter((a) => a === 'evict app/conflict').length,
      2,
      node.activities.join(' | '),
    );
  });
});
