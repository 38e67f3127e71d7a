/**
 * The `deliverGrants` activity (src/activities/grant-delivery.ts) against the time-skipping
 * server's real client: each grant becomes a `pdbGrant` signal in its node's history, and a
 * workflow that does not exist (a node run that closed) is reported, not an error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createGrantDeliveryActivities } from '../../src/activities/grant-delivery.js';
import { drainPlanWorkflow } from '../../src/workflows/plan.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
after(wf.teardown);

describe('deliverGrants (time-skipping server)', () => {
  it('signals each grant to its workflow; a missing workflow is reported as not found', async () => {
    // A running workflow with no worker: it takes signals into its history.
    const inp = input('grant-target', { nodeNames: ['n1'] });
    const target = await wf.env.client.workflow.start(drainPlanWorkflow, {
      taskQueue: 'no-worker-here',
      workflowId: 'grant-target',
      args: [inp],
    });
    const grant = { seq: 3, grants: { 'app/a': 2 }, reports: ['app/a'] };
    const env = new MockActivityEnvironment({}, { client: wf.env.client });
    const { deliverGrants } = createGrantDeliveryActivities();
    const res = await env.run(deliverGrants, {
      grants: [
        { workflowId: 'grant-target', grant },
        { workflowId: 'no-such-node-run', grant: { seq: 1, grants: {} } },
      ],
    });
    assert.deepEqual(res, {
      delivered: [{ workflowId: 'grant-target', grant }],
      notFound: ['no-such-node-run'],
    });
    const signals = ((await target.fetchHistory()).events ?? [])
      .map((e) => e.workflowExecutionSignaledEventAttributes)
      .filter((s) => s?.signalName === 'pdbGrant')
      .map((s) => JSON.parse(Buffer.from(s!.input!.payloads![0]!.data!).toString()) as unknown);
    assert.deepEqual(signals, [grant]);
    await target.terminate('test over');
  });
});
