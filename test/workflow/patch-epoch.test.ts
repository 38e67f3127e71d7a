/**
 * Patch epochs (src/workflows/patches.ts): a run started by this code records one patch marker
 * (its workflow type's epoch) and at most one upsert of `TemporalChangeVersion`, instead of one marker and
 * one upsert per change, and still behaves as every change of the epoch says (evictions go to the
 * eviction task queue, `patched('eviction-task-queue')`). Its histories are the replay fixture of
 * the epoch's shape (`UPDATE_HISTORIES=patch-epoch-v1`); the older fixtures are the shapes before.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { releaseSignal } from '../../src/contract/plan-messages.js';
import { NODE_EPOCH_1, PLAN_EPOCH_1 } from '../../src/workflows/patches.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input, type History } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** The patch ids of a history's markers, in order, and how many upserts of `TemporalChangeVersion` it holds. */
function patchBookkeeping(h: History): { markers: string[]; upserts: number } {
  const markers: string[] = [];
  let upserts = 0;
  for (const e of h.events ?? []) {
    const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    if (fields && 'TemporalChangeVersion' in fields) upserts++;
    const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    if (data) markers.push((JSON.parse(Buffer.from(data).toString()) as { id: string }).id);
  }
  return { markers, upserts };
}

describe('patch epochs (time-skipping)', () => {
  it('a new run records one marker, its epoch, and applies every change of the epoch', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'a', node: 'n1' });
    sim.addPod({ namespace: 'app', name: 'b', node: 'n1' });
    const inp = input('patch-epoch-v1', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const res = await wf.driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    const planId = planWorkflowId(inp.plan);
    const get = (id: string) => wf.env.client.workflow.getHandle(id).fetchHistory();
    const plan = patchBookkeeping(await get(planId));
    const nodeHistory = await get(nodeWorkflowId(planId, 'n1'));
    const node = patchBookkeeping(nodeHistory);
    assert.deepEqual(plan.markers, [PLAN_EPOCH_1.id]);
    assert.deepEqual(node.markers, [NODE_EPOCH_1.id]);
    assert.ok(plan.upserts <= 1 && node.upserts <= 1, JSON.stringify({ plan, node }));
    // The epoch applies `eviction-task-queue`: every evictPod went to the eviction task queue.
    const evictQueues = (nodeHistory.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a?.activityType?.name === 'evictPod')
      .map((a) => a!.taskQueue?.name ?? '');
    assert.equal(evictQueues.length, 2);
    for (const q of evictQueues) assert.match(q, /-evictions$/);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    await wf.saveHistories('patch-epoch-v1', planId, ['n1']);
  });
});
