/**
 * A node deleted mid-drain, in the time-skipping environment against the sim cluster of
 * test/helpers/sim-cluster.ts: it ends at once, no call goes on about it, and its hand-back changes
 * nothing.
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
const { driveTo } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('a node deleted mid-drain (time-skipping)', () => {
  it('ends Deleted at once, no call goes on about it for an hour, and its hand-back changes nothing', async () => {
    const sim = new SimCluster().addNode('n1').addNode('n2');
    sim.pdbs.set('app/db', 0); // n1's pod waits behind a PDB that never frees
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    sim.addPod({ namespace: 'app', name: 'web-0', node: 'n2' });
    const inp = input('deleted-no-loop', {
      nodeNames: ['n1', 'n2'],
      maxUnavailableNodes: 2,
      uncordon: 'OnRelease',
    });
    // n1 goes the moment its first observation is made (not when a poll notices it).
    let callsAtDeletion = -1;
    sim.onCall = (c) => {
      if (callsAtDeletion < 0 && c.name === 'observeNode' && (c.arg as { node: string }).node === 'n1') {
        sim.deleteNode('n1');
        callsAtDeletion = sim.calls.length;
      }
    };
    const res = await driveTo(sim, inp, 'Drained', releaseSignal, async () => {
      assert.deepEqual(
        sim.lastStatus()?.nodes?.map((n) => [n.name, n.phase]),
        [
          ['n1', 'Deleted'],
          ['n2', 'Drained'],
        ],
      );
      await wf.skip('1h'); // waiting for the release: nothing may go on about the missing node
    });
    assert.equal(res.phase, 'Completed');
    const about = (name: string) =>
      sim.calls
        .slice(callsAtDeletion)
        .filter((c) => (c.arg as { node?: string } | undefined)?.node === 'n1' && c.name === name);
    // At most the observation that was waiting when the node went, and none after the end.
    assert.ok(
      about('observeNode').length <= 1,
      `${about('observeNode').length} observations of the deleted node`,
    );
    assert.equal(about('cordonNode').length, 0);
    // The plan still sends the deleted node's hand-back once (the node's last report says it was
    // claimed), and it changes nothing: the real releaseNode reads the node, finds it absent and
    // writes nothing (answering `left: 'gone'`).
    const release = about('releaseNode');
    assert.ok(release.length <= 1, `${release.length} hand-backs of the deleted node`);
    for (const r of release) assert.deepEqual(r.result, { uncordoned: false, left: 'gone' });
    assert.equal(sim.nodes.has('n1'), false);
    assert.equal(
      sim.calls.filter((c) => c.name === 'releaseNode' && (c.arg as { node: string }).node === 'n2').length,
      1,
      'the other node is handed back',
    );
    assert.equal(sim.evictions().filter((c) => (c.arg as { name: string }).name === 'db-0').length, 0);
    // UnhandledCommand (a report arrived while a task completed; the SDK runs it again) is allowed.
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER],
    });
  });
  for (const copy of [true, false])
    it(`a node deleted and created again ${copy ? 'from its manifest (claim and cordon copied)' : 'fresh'}: ends Deleted, the new node is neither drained nor handed back`, async () => {
      const sim = new SimCluster().addNode('n1').addNode('n2');
      sim.pdbs.set('app/db', 0);
      sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
      sim.addPod({ namespace: 'app', name: 'web-0', node: 'n2' });
      const inp = input(`recreated-${copy}`, {
        nodeNames: ['n1', 'n2'],
        maxUnavailableNodes: 2,
        uncordon: 'OnRelease',
      });
      let recreated = false;
      const res = await driveTo(
        sim,
        inp,
        () => {
          if (
            !recreated &&
            sim.calls.some((c) => c.name === 'observeNode' && (c.arg as { node: string }).node === 'n1')
          ) {
            sim.recreateNode('n1', copy);
            // The pod still bound to the name could go now: a drain of the new node would evict it.
            sim.pdbs.set('app/db', 1);
            recreated = true;
          }
          return sim.lastStatus()?.phase === 'Drained';
        },
        releaseSignal,
      );
      assert.equal(res.phase, 'Completed');
      const n1 = sim.lastStatus()?.nodes?.find((n) => n.name === 'n1');
      assert.equal(n1?.phase, 'Deleted');
      assert.equal(n1?.reason, 'NodeDeleted');
      assert.match(n1?.message ?? '', /created again under its name .*not claimed by this plan/);
      assert.equal(sim.evictions().filter((c) => (c.arg as { name: string }).name === 'db-0').length, 0);
      // The new node keeps what it came with: its copied cordon, or schedulable.
      assert.equal(sim.nodes.get('n1')!.unschedulable, copy);
      for (const r of sim.calls.filter(
        (c) => c.name === 'releaseNode' && (c.arg as { node: string }).node === 'n1',
      ))
        assert.deepEqual(r.result, { uncordoned: false, left: 'replaced' });
      assert.equal(
        sim.calls.filter((c) => c.name === 'cordonNode' && (c.arg as { node: string }).node === 'n1').length,
        1,
        'claimed once, the old node',
      );
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']), {
        expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER],
      });
    });

  it('spec.cordon AllAtStart: a node created again before its drain starts is not claimed by it', async () => {
    const sim = new SimCluster().addNode('n1').addNode('n2');
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n2' });
    // n2 is created again the moment the plan's cordon of both nodes has taken effect (the second
    // cordon call), before n1's drain (which n2's waits for: maxUnavailableNodes 1) even claims n1.
    sim.onCall = (call) => {
      if (call.name === 'cordonNode' && sim.calls.filter((c) => c.name === 'cordonNode').length === 2)
        sim.recreateNode('n2', false);
    };
    const inp = input('recreated-all-at-start', {
      nodeNames: ['n1', 'n2'],
      maxUnavailableNodes: 1,
      cordon: 'AllAtStart',
      uncordon: 'OnRelease',
    });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    const n2 = sim.lastStatus()?.nodes?.find((n) => n.name === 'n2');
    assert.equal(n2?.phase, 'Deleted', JSON.stringify(n2));
    assert.match(n2?.message ?? '', /before its drain started/);
    assert.equal(sim.nodes.get('n2')!.unschedulable, false, 'the new node is not cordoned');
    assert.equal(sim.evictions().filter((c) => (c.arg as { name: string }).name === 'db-0').length, 0);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER],
    });
  });
});
