/**
 * status.estimatedCompletion in the time-skipping environment (sim cluster of
 * test/helpers/sim-cluster.ts): written with the plan's status while it drains, sane (after the
 * write, before the deadline), and gone once the plan ended. The model itself is table-tested in
 * test/unit/eta.test.ts.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { releaseSignal } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('status.estimatedCompletion (time-skipping)', () => {
  it('is written while the plan drains, later than the write and earlier than the deadline, and cleared at the end', async () => {
    // 3 nodes one at a time, 4 pods each behind one PDB allowing 1 disruption: its replacement
    // becomes Ready 200 ms (real) after the evicted pod is gone, so the evictions are paced.
    const sim = new SimCluster({ graceMs: 50, readyDelayMs: 200 });
    sim.pdbs.set('app/web', 1);
    sim.refill.add('app/web');
    for (const n of ['n1', 'n2', 'n3']) {
      sim.addNode(n);
      for (let i = 0; i < 4; i++)
        sim.addPod({ namespace: 'app', name: `${n}-web-${i}`, node: n, pdbs: ['app/web'] });
    }
    const inp = input('eta', {
      nodeNames: ['n1', 'n2', 'n3'],
      maxUnavailableNodes: 1,
      drainTimeoutSeconds: 3600,
      uncordon: 'OnRelease',
    });
    const res = await wf.driveTo(sim, inp, 'Drained', releaseSignal, undefined, 120_000);
    assert.equal(res.phase, 'Completed');

    const midDrain = sim.statuses.filter(({ status }) => {
      const p = status.evictionProgress;
      return status.phase === 'Running' && p !== undefined && p.evicted > 0 && p.evicted < 12;
    });
    assert.ok(midDrain.length > 0, 'statuses were written mid-drain');
    const estimated = midDrain.filter(({ status }) => status.estimatedCompletion !== undefined);
    assert.ok(
      estimated.length > 0,
      `a mid-drain status carries an estimate: ${JSON.stringify(midDrain.map((s) => s.status.evictionProgress?.evicted))}`,
    );
    const deadlineMs = Date.parse(midDrain[0]!.status.deadline!);
    const endMs = Date.parse(
      sim.statuses.find(({ status }) => status.phase === 'Drained')!.status.completedAt!,
    );
    for (const { atMs, status } of estimated) {
      const etaMs = Date.parse(status.estimatedCompletion!);
      // Rounded up to the second from the workflow's time of the write; atMs is when the write ran.
      assert.ok(
        etaMs >= atMs - 1000,
        `estimate ${status.estimatedCompletion} after the write (${new Date(atMs).toISOString()})`,
      );
      assert.ok(
        etaMs < deadlineMs,
        `estimate ${status.estimatedCompletion} before the deadline ${status.deadline}`,
      );
    }
    // Half-way (the first estimate with at least half the pods gone): within a factor of 2 of the
    // time that was really left (the bench measures the fleet's figure).
    const half = estimated.find(({ status }) => status.evictionProgress!.evicted >= 6);
    if (half) {
      const left = endMs - half.atMs;
      const said = Date.parse(half.status.estimatedCompletion!) - half.atMs;
      assert.ok(
        said <= 2 * left + 1000 && said >= left / 2 - 1000,
        `half-way: said ${said} ms left, ${left} ms were`,
      );
    }
    for (const { status } of sim.statuses.filter(
      ({ status }) => status.phase === 'Drained' || status.phase === 'Completed',
    ))
      assert.equal(status.estimatedCompletion, undefined, `no estimate in phase ${status.phase}`);
  });
});
