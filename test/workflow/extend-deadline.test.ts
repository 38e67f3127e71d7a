/**
 * A later deadline (src/drain/plan-extend.ts) in the time-skipping environment, against the sim
 * cluster: a plan Blocked at its deadline (onDeadline Stop) by a PodDisruptionBudget that allows no
 * disruption is given more time by the extendDeadline Update, or by the operator's relay of a raised
 * spec.drainTimeoutSeconds; it goes back to Running, drains its node again under the claim it kept
 * (the node never uncordoned), and ends Drained once the PDB allows. Refusals of the Update's
 * validator.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { MaintenancePlanSpecInput } from '../../src/api/plan.js';
import { drainTimeoutSignal, extendDeadlineUpdate, releaseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

const NODES = ['n1', 'n2'];

/** n1 holds a free pod; n2 one more pod behind PDB app/db that allows 0 disruptions. */
function twoNodes(): SimCluster {
  const sim = new SimCluster();
  for (const n of NODES) {
    sim.addNode(n);
    sim.addPod({ namespace: 'app', name: `${n}-a`, node: n, terminationGracePeriodSeconds: 30 });
  }
  sim.pdbs.set('app/db', 0);
  sim.addPod({
    namespace: 'app',
    name: 'db-0',
    node: 'n2',
    pdbs: ['app/db'],
    terminationGracePeriodSeconds: 30,
  });
  return sim;
}

const spec: MaintenancePlanSpecInput = {
  nodeNames: NODES,
  uncordon: 'OnRelease',
  maxUnavailableNodes: 2,
  drainTimeoutSeconds: 600,
  onDeadline: 'Stop',
};

/** Calls of `name` for node `node` the sim recorded. */
function callsFor(sim: SimCluster, name: string, node: string) {
  return sim.calls.filter((c) => c.name === name && (c.arg as { node: string }).node === node);
}

describe('extend a plan Blocked at its deadline (time-skipping)', () => {
  for (const how of ['update', 'spec'] as const) {
    it(`${how === 'update' ? 'extendDeadline Update' : 'raised spec.drainTimeoutSeconds'}: Running again, n2 drained under its kept claim, never uncordoned`, async () => {
      const sim = twoNodes();
      const inp = input(`extend-${how}`, spec);
      const final = await withWorker(sim, async (tq) => {
        const h = await startPlan(tq, inp);
        await waitUntil(
          () => sim.lastStatus()?.reason === 'DeadlineExceeded',
          'Blocked/DeadlineExceeded',
          60_000,
          '30s',
        );
        const blocked = sim.lastStatus()!;
        assert.equal(blocked.phase, 'Blocked');
        assert.equal(sim.nodes.get('n2')!.unschedulable, true, 'n2 stays cordoned at the deadline');
        const oldDeadline = Date.parse(blocked.deadline!);
        if (how === 'update') {
          const st = await h.executeUpdate(extendDeadlineUpdate, {
            args: [{ addSeconds: 1800, by: 'alice' }],
          });
          assert.equal(st.phase, 'Running');
          assert.equal(Date.parse(st.deadline!), oldDeadline + 1800_000);
        } else {
          await h.signal(drainTimeoutSignal, { drainTimeoutSeconds: 2400, generation: 2 });
          await waitUntil(() => sim.lastStatus()?.phase === 'Running', 'Running again');
          assert.equal(Date.parse(sim.lastStatus()!.deadline!), oldDeadline + 1800_000);
        }
        await waitUntil(() => callsFor(sim, 'cordonNode', 'n2').length === 2, 'n2 drained again');
        // The blocker goes: the PDB allows one disruption.
        sim.pdbs.set('app/db', 1);
        await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000, '10s');
        const drained = sim.lastStatus()!;
        assert.equal(sim.nodes.get('n2')!.unschedulable, true, 'still cordoned until the release');
        assert.equal(callsFor(sim, 'releaseNode', 'n2').length, 0, 'never handed back in between');
        await h.signal(releaseSignal);
        await h.result();
        return drained;
      });
      assert.equal(final.reason, 'AllNodesDrained');
      assert.equal(sim.pods.get('app/db-0')!.gone !== undefined, true, 'the guarded pod was evicted');
      const second = callsFor(sim, 'cordonNode', 'n2')[1]!;
      assert.equal(
        (second.result as { outcome: string }).outcome,
        'Cordoned',
        'the kept claim is taken over',
      );
      const ext = sim.events.filter((e) => e.reason === 'DeadlineExtended');
      assert.equal(ext.length, 1);
      assert.equal(ext[0]!.type, 'Normal');
      assert.match(
        ext[0]!.message,
        how === 'update'
          ? /by alice at .*node\(s\) n2 drain again/
          : /by spec.drainTimeoutSeconds 2400 \(generation 2\)/,
      );
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, NODES));
    });
  }

  it('a Running plan extended before its deadline: the running node gets the new deadline and does not stop at the old one', async () => {
    const sim = twoNodes();
    const inp = input('extend-running', spec);
    await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(
        () =>
          sim
            .lastStatus()
            ?.nodes?.find((n) => n.name === 'n2')
            ?.blockedBy?.some((b) => b.pod === 'app/db-0') === true,
        'n2 blocked by app/db-0',
      );
      const st = await h.executeUpdate(extendDeadlineUpdate, { args: [{ addSeconds: 3600, by: 'carol' }] });
      assert.equal(st.phase, 'Running');
      const newDeadline = Date.parse(st.deadline!);
      // Past the old deadline (600 s) and well before the new one: still Running, n2 still draining.
      await wf.skip('20 minutes');
      const mid = sim.lastStatus()!;
      assert.equal(mid.phase, 'Running', mid.message);
      assert.notEqual(mid.nodes?.find((n) => n.name === 'n2')?.reason, 'DeadlineExceeded');
      assert.equal(callsFor(sim, 'cordonNode', 'n2').length, 1, 'the same drain, not a new one');
      sim.pdbs.set('app/db', 1);
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained', 60_000, '10s');
      assert.equal(Date.parse(sim.lastStatus()!.deadline!), newDeadline);
      await h.signal(releaseSignal);
      await h.result();
    });
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, NODES));
  });

  it('the validator refuses a non-positive --by, an earlier deadline, and a plan that is not Running or Blocked at its deadline', async () => {
    const sim = twoNodes();
    const inp = input('extend-refused', spec);
    await withWorker(sim, async (tq) => {
      const h = await startPlan(tq, inp);
      await waitUntil(() => sim.lastStatus()?.phase === 'Running', 'Running');
      const refused = async (args: { addSeconds?: number; deadline?: string; by: string }, why: RegExp) => {
        const err = await h.executeUpdate(extendDeadlineUpdate, { args: [args] }).then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(err instanceof WorkflowUpdateFailedError, `refused: ${JSON.stringify(args)}`);
        assert.match((err.cause as Error).message, why);
      };
      await refused({ addSeconds: 0, by: 'bob' }, /addSeconds must be a positive number/);
      await refused({ deadline: '2000-01-01T00:00:00Z', by: 'bob' }, /not later than the current one/);
      sim.pdbs.set('app/db', 1);
      await waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained');
      await refused(
        { addSeconds: 60, by: 'bob' },
        /is Drained: only a Running plan or one Blocked at its deadline/,
      );
      await h.signal(releaseSignal);
      await h.result();
    });
  });
});
