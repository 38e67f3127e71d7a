/**
 * The plan's outcome in the Temporal workflow list (time-skipping server, sim cluster): the
 * DrainflowPhase and DrainflowReason search attributes follow the plan's phase and reason, so a
 * plan Blocked at its deadline (its workflow Running) and one that ended Aborted (its workflow
 * Completed) say so in list columns.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SA_PHASE, SA_REASON } from '../../src/contract/names.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { driveTo } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('outcome search attributes (time-skipping)', () => {
  it('Blocked/DeadlineExceeded while the plan waits, then Aborted with its reason', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/db', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    const inp = input('outcome', { nodeNames: ['n1'], drainTimeoutSeconds: 300 });
    let blocked: [unknown, unknown] | undefined;
    let handle: { describe(): Promise<{ typedSearchAttributes: { get(k: unknown): unknown } }> } | undefined;
    const res = await driveTo(
      sim,
      inp,
      () => sim.lastStatus()?.reason === 'DeadlineExceeded',
      abortSignal,
      async (h) => {
        handle = h;
        const sa = (await h.describe()).typedSearchAttributes;
        blocked = [sa.get(SA_PHASE), sa.get(SA_REASON)];
      },
    );
    assert.deepEqual(blocked, ['Blocked', 'DeadlineExceeded']);
    assert.equal(res.phase, 'Aborted');
    const sa = (await handle!.describe()).typedSearchAttributes;
    assert.deepEqual([sa.get(SA_PHASE), sa.get(SA_REASON)], [res.phase, res.reason]);
  });
});
