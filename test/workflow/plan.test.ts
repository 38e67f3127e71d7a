/**
 * Workflow tests in @temporalio/testing's time-skipping environment (the installed
 * temporal-test-server, no download), with the in-memory cluster of test/helpers/sim-cluster.ts
 * standing behind the activity contract.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import proto from '@temporalio/proto';
import {
  abortSignal,
  pauseSignal,
  progressQuery,
  resumeSignal,
  releaseSignal,
  controlUpdate,
} from '../../src/contract/plan-messages.js';
import { planWorkflowId } from '../../src/contract/names.js';
import { drainPlanWorkflow } from '../../src/workflows/plan.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, driveTo, waitUntil } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

describe('drainPlanWorkflow (time-skipping)', () => {
  it('evicts behind a PodDisruptionBudget with one call per pod and no 429', async () => {
    const sim = new SimCluster().addNode('n1').addNode('n2');
    sim.pdbs.set('app/web', 1);
    sim.refill.add('app/web');
    for (let i = 0; i < 6; i++)
      sim.addPod({ namespace: 'app', name: `web-${i}`, node: 'n1', pdbs: ['app/web'] });
    sim.addPod({
      namespace: 'kube-system',
      name: 'ds-n1',
      node: 'n1',
      action: 'Skip',
      reason: 'DaemonSetPod',
    });
    const inp = input('pdb', { nodeNames: ['n1'], uncordon: 'OnRelease' });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal, () =>
      assert.equal(sim.nodes.get('n1')!.unschedulable, true, 'still cordoned until released'),
    );
    assert.equal(res.phase, 'Completed');
    assert.equal(
      sim.evictions().length,
      6,
      `one eviction call per pod: ${JSON.stringify(sim.calls.filter((c) => c.name !== 'writePlanStatus').map((c) => [c.name, c.atMs % 100000, (c.arg as { name?: string }).name ?? (c.arg as { pdb?: string }).pdb ?? (c.arg as { key?: string }).key, (c.result as { outcome?: string; disruptionsAllowed?: number })?.outcome ?? (c.result as { disruptionsAllowed?: number })?.disruptionsAllowed]))}`,
    );
    assert.equal(
      sim.evictions().filter((c) => (c.result as { outcome: string }).outcome !== 'Evicted').length,
      0,
    );
    // Never more than the PDB allowed: the allowance never went below zero.
    assert.ok((sim.pdbs.get('app/web') ?? 0) >= 0);
    assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'uncordoned on release');
    const drained = sim.statuses.find((s) => s.status.phase === 'Drained')?.status;
    assert.ok(drained, 'a Drained status was published');
    assert.equal(drained.evictionProgress?.evicted, 6);
    assert.equal(drained.evictionProgress?.total, 6);
    assert.equal(drained.nodes?.[0]?.phase, 'Drained');
    assert.equal(drained.conditions?.find((c) => c.type === 'Drained')?.status, 'True');
  });

  it('fires the deadline at exactly drainTimeoutSeconds and names the blocking PDB', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/db', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    const inp = input('deadline', { nodeNames: ['n1'], drainTimeoutSeconds: 300 });
    const final = await withWorker(sim, async (taskQueue) => {
      const h = await wf.env.client.workflow.start(drainPlanWorkflow, {
        taskQueue,
        workflowId: planWorkflowId(inp.plan),
        args: [inp],
      });
      await waitUntil(() => sim.lastStatus()?.phase === 'Running', 'Running status');
      await wf.skip('310s'); // the server skips time to the deadline
      await waitUntil(() => sim.lastStatus()?.reason === 'DeadlineExceeded', 'DeadlineExceeded status');
      const status = sim.lastStatus()!;
      await h.signal(abortSignal);
      await h.result();
      return status;
    });
    assert.equal(final.phase, 'Blocked');
    assert.equal(final.reason, 'DeadlineExceeded');
    const started = Date.parse(final.startedAt!);
    assert.equal(Date.parse(final.deadline!) - started, 300_000);
    const completed = Date.parse(final.completedAt!);
    assert.ok(
      completed >= started + 300_000 && completed < started + 302_000,
      `completed ${completed - started} ms after start`,
    );
    const blocker = final.nodes?.[0]?.blockedBy?.[0];
    assert.equal(blocker?.pod, 'app/db-0');
    assert.equal(blocker?.pdb, 'app/db');
    assert.equal(
      sim.nodes.get('n1')!.unschedulable,
      false,
      'abort after the deadline hands the node back (OnDelete)',
    );
    // PDB-blocked pods are not retried blindly: waits grow 5, 10, 20, 40, 80, 120... seconds.
    const calls = sim.evictions().length;
    assert.ok(calls <= 8, `${calls} eviction calls in 300 s (kubectl drain would send ~60)`);
  });

  it('sends no eviction before a Retry-After of 120 s has passed, whatever signals arrive', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({
      namespace: 'app',
      name: 'api-0',
      node: 'n1',
      script: [
        {
          outcome: 'TooManyRequests',
          cause: 'Throttled',
          retryAfterSeconds: 120,
          message: 'Too many requests',
        },
      ],
    });
    const inp = input('retry-after', { nodeNames: ['n1'], uncordon: 'OnRelease', release: true });
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await wf.env.client.workflow.start(drainPlanWorkflow, {
        taskQueue,
        workflowId: planWorkflowId(inp.plan),
        args: [inp],
      });
      await waitUntil(() => sim.evictions().length === 1, 'first eviction');
      await waitUntil(
        () => sim.lastStatus()?.evictionProgress?.nextActionAt !== undefined,
        'nextActionAt in status',
      );
      const next = Date.parse(sim.lastStatus()!.evictionProgress!.nextActionAt!);
      assert.equal(next - sim.evictions()[0]!.atMs >= 119_000, true, 'nextActionAt is ~120 s after the 429');
      // Signals and queries in between must not trigger an early eviction.
      await h.signal(pauseSignal);
      await h.signal(resumeSignal);
      await h.query(progressQuery);
      await h.signal(pauseSignal);
      await h.signal(resumeSignal);
      return h.result();
    });
    assert.equal(res.phase, 'Completed');
    const ev = sim.evictions();
    assert.equal(ev.length, 2);
    assert.ok(
      ev[1]!.atMs - ev[0]!.atMs >= 120_000,
      `second eviction ${ev[1]!.atMs - ev[0]!.atMs} ms after the 429`,
    );
  });

  it('holds every eviction while paused and continues on resume', async () => {
    const sim = new SimCluster().addNode('n1');
    for (let i = 0; i < 3; i++) sim.addPod({ namespace: 'app', name: `p-${i}`, node: 'n1' });
    const inp = input('pause', { nodeNames: ['n1'], paused: true, uncordon: 'OnRelease', release: true });
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await wf.env.client.workflow.start(drainPlanWorkflow, {
        taskQueue,
        workflowId: planWorkflowId(inp.plan),
        args: [inp],
      });
      await waitUntil(() => sim.lastStatus()?.phase === 'Paused', 'Paused status');
      await wf.skip('10m'); // time passes; nothing may be evicted
      assert.equal(sim.evictions().length, 0, 'no eviction while paused');
      const st = await h.executeUpdate(controlUpdate, { args: [{ action: 'resume' }] });
      assert.notEqual(st.phase, 'Paused', 'the update returns the new state');
      return h.result();
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 3);
  });

  it('abort stops evicting and uncordons only what the plan cordoned', async () => {
    const sim = new SimCluster().addNode('n1').addNode('n2', true);
    sim.pdbs.set('app/db', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    sim.addPod({ namespace: 'app', name: 'db-1', node: 'n2', pdbs: ['app/db'] });
    const inp = input('abort', { nodeNames: ['n1', 'n2'], maxUnavailableNodes: 2 });
    const res = await driveTo(
      sim,
      inp,
      () => sim.calls.filter((c) => c.name === 'cordonNode').length === 2,
      abortSignal,
      () => assert.equal(sim.nodes.get('n1')!.unschedulable, true),
    );
    assert.equal(res.phase, 'Aborted');
    assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'n1 uncordoned');
    assert.equal(sim.nodes.get('n2')!.unschedulable, true, 'n2 was cordoned before the plan and stays so');
    assert.equal(sim.nodes.get('n1')!.heldBy, undefined, 'claim removed');
    assert.equal(sim.lastStatus()?.phase, 'Aborted');
  });

  /** Three nodes with two pods each, no PDB; drained one node at a time with the given cordon policy. */
  const threeNodes = async (name: string, cordon: 'PerNode' | 'AllAtStart') => {
    const sim = new SimCluster().addNode('n1').addNode('n2').addNode('n3');
    for (const node of ['n1', 'n2', 'n3'])
      for (const i of [0, 1]) sim.addPod({ namespace: 'app', name: `${node}-web-${i}`, node });
    const inp = input(name, {
      nodeNames: ['n1', 'n2', 'n3'],
      maxUnavailableNodes: 1,
      cordon,
      uncordon: 'OnRelease',
    });
    const res = await driveTo(sim, inp, 'Drained', releaseSignal);
    const firstEviction = sim.calls.findIndex((c) => c.name === 'evictPod');
    const cordonedBefore = new Set(
      sim.calls
        .slice(0, firstEviction)
        .filter((c) => c.name === 'cordonNode')
        .map((c) => (c.arg as { node: string }).node),
    );
    return { sim, res, firstEviction, cordonedBefore };
  };

  it('cordon AllAtStart claims every node before the first eviction', async () => {
    const { sim, res, firstEviction, cordonedBefore } = await threeNodes('cordon-all', 'AllAtStart');
    assert.equal(res.phase, 'Completed');
    assert.ok(firstEviction > 0);
    assert.deepEqual([...cordonedBefore].sort(), ['n1', 'n2', 'n3']);
    assert.equal(sim.evictions().length, 6, 'one eviction call per pod');
    const drained = sim.statuses.find((s) => s.status.phase === 'Drained')?.status;
    assert.deepEqual(
      drained?.nodes?.map((n) => n.phase),
      ['Drained', 'Drained', 'Drained'],
    );
    assert.ok(
      [...sim.nodes.values()].every((n) => !n.unschedulable && !n.heldBy),
      'all handed back on release',
    );
  });

  it('cordon PerNode (the default) cordons a node only when its turn comes', async () => {
    const { res, cordonedBefore } = await threeNodes('cordon-per-node', 'PerNode');
    assert.equal(res.phase, 'Completed');
    assert.deepEqual([...cordonedBefore], ['n1']);
  });

  it('cordon AllAtStart: abort hands back nodes whose drain never started', async () => {
    const sim = new SimCluster().addNode('n1').addNode('n2').addNode('n3', true);
    sim.pdbs.set('app/db', 0);
    sim.addPod({ namespace: 'app', name: 'db-0', node: 'n1', pdbs: ['app/db'] });
    const inp = input('cordon-all-abort-v2', {
      nodeNames: ['n1', 'n2', 'n3'],
      maxUnavailableNodes: 1,
      cordon: 'AllAtStart',
    });
    const res = await driveTo(
      sim,
      inp,
      () =>
        [...sim.nodes.values()].every((n) => n.unschedulable) &&
        sim.calls.some((c) => c.name === 'observeNode' && (c.arg as { node: string }).node === 'n1'),
      abortSignal,
      async (h) => {
        const progress = await h.query(progressQuery);
        assert.equal(progress.nodes?.find((n) => n.name === 'n2')?.phase, 'Cordoned');
      },
    );
    assert.equal(res.phase, 'Aborted');
    assert.equal(sim.evictions().length, 0);
    assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'n1 uncordoned');
    assert.equal(sim.nodes.get('n2')!.unschedulable, false, 'n2 (never started) uncordoned');
    assert.equal(sim.nodes.get('n3')!.unschedulable, true, 'n3 was cordoned before the plan and stays so');
    assert.ok(
      [...sim.nodes.values()].every((n) => n.heldBy === undefined),
      'every claim removed',
    );
  });

  it('fills every free slot of maxUnavailableNodes in one workflow task', async () => {
    const sim = new SimCluster();
    sim.pdbs.set('app/db', 0);
    for (const node of ['n1', 'n2', 'n3', 'n4']) {
      sim.addNode(node);
      sim.addPod({ namespace: 'app', name: `db-${node}`, node, pdbs: ['app/db'] });
    }
    const inp = input('parallel-starts-v2', { nodeNames: ['n1', 'n2', 'n3', 'n4'], maxUnavailableNodes: 3 });
    let history: proto.temporal.api.history.v1.IHistory | undefined;
    const res = await driveTo(
      sim,
      inp,
      () =>
        new Set(
          sim.calls.filter((c) => c.name === 'observeNode').map((c) => (c.arg as { node: string }).node),
        ).size >= 3,
      abortSignal,
      async (h) => {
        history = await h.fetchHistory();
      },
    );
    assert.equal(res.phase, 'Aborted');
    const types = (history?.events ?? []).map((e) => e.eventType);
    const initiated = types.flatMap((t, i) =>
      t === proto.temporal.api.enums.v1.EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
        ? [i]
        : [],
    );
    assert.equal(initiated.length, 3, 'three children started, the fourth waits for a slot');
    const firstStarted = types.indexOf(
      proto.temporal.api.enums.v1.EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
    );
    assert.ok(initiated[2]! < firstStarted, 'all three initiated before the first start was confirmed');
    assert.deepEqual(
      ['n1', 'n2', 'n3', 'n4'].map((n) => sim.nodes.get(n)!.unschedulable),
      [false, false, false, false],
      'aborted children handed their nodes back',
    );
  });

  it('waits for a node held by another plan and says so in a Warning Event and the Blocked condition', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.nodes.get('n1')!.heldBy = 'uid-other';
    const inp = input('held', { nodeNames: ['n1'] });
    const res = await driveTo(
      sim,
      inp,
      () =>
        sim.events.some((e) => e.reason === 'NodeHeldByOtherPlan') &&
        sim.lastStatus()?.conditions?.some((c) => c.type === 'Blocked' && c.status === 'True') === true,
      abortSignal,
      () => {
        const blocked = sim.lastStatus()?.conditions?.find((c) => c.type === 'Blocked');
        assert.equal(blocked?.reason, 'NodeHeldByOtherPlan');
        assert.equal(sim.lastStatus()?.phase, 'Running', 'waiting is not an end: the plan keeps running');
        assert.equal(sim.nodes.get('n1')!.heldBy, 'uid-other', 'the other plan keeps its node');
      },
    );
    assert.equal(res.phase, 'Aborted');
    assert.equal(
      sim.events.filter((e) => e.reason === 'NodeHeldByOtherPlan').length,
      1,
      'one Event, not one per retry',
    );
    assert.equal(sim.evictions().length, 0);
  });

  it('fails with NodeNotFound for an unknown node and cordons nothing', async () => {
    const sim = new SimCluster().addNode('n1');
    const inp = input('missing', { nodeNames: ['n1', 'nope'] });
    const res = await withWorker(sim, (taskQueue) =>
      wf.env.client.workflow.execute(drainPlanWorkflow, {
        taskQueue,
        workflowId: planWorkflowId(inp.plan),
        args: [inp],
      }),
    );
    assert.equal(res.phase, 'Failed');
    assert.equal(res.reason, 'NodeNotFound');
    assert.match(res.message, /nope/);
    assert.equal(sim.calls.filter((c) => c.name === 'cordonNode').length, 0);
  });

  it('blocks a pod covered by two PDBs without any eviction call; the plan keeps running', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.pdbs.set('app/a', 5);
    sim.pdbs.set('app/b', 5);
    sim.addPod({ namespace: 'app', name: 'both', node: 'n1', pdbs: ['app/a', 'app/b'] });
    sim.addPod({ namespace: 'app', name: 'bare', node: 'n1', action: 'Block', reason: 'NoController' });
    sim.addPod({ namespace: 'app', name: 'ok', node: 'n1' });
    const inp = input('two-pdbs-v2', { nodeNames: ['n1'] });
    const res = await driveTo(
      sim,
      inp,
      () =>
        sim.lastStatus()?.nodes?.[0]?.phase === 'Blocked' &&
        sim.lastStatus()?.conditions?.some((c) => c.type === 'Blocked' && c.status === 'True') === true,
      abortSignal,
      async () => {
        await wf.skip('10m'); // time passes: blocked is not an end before the deadline
        const st = sim.lastStatus()!;
        assert.equal(st.phase, 'Running', 'a blocked node does not end the plan before its deadline');
        const node = st.nodes![0]!;
        assert.equal(node.phase, 'Blocked');
        const reasons = node.blockedBy!.map((b) => `${b.pod}:${b.reason}`);
        assert.deepEqual(reasons, ['app/bare:NoController', 'app/both:MultiplePodDisruptionBudgets']);
        assert.equal(st.conditions?.find((c) => c.type === 'Blocked')?.reason, 'PodsNotEvictable');
      },
    );
    assert.equal(res.phase, 'Aborted');
    const calls = (name: string) =>
      sim.evictions().filter((c) => (c.arg as { name: string }).name === name).length;
    assert.equal(calls('both'), 0, 'the eviction subresource refuses a pod under two PDBs: no call');
    assert.equal(calls('bare'), 0);
    assert.equal(calls('ok'), 1);
    assert.ok(
      sim.events.some((e) => e.reason === 'NoController'),
      'a Warning event names the blocker',
    );
    assert.ok(sim.events.some((e) => e.reason === 'MultiplePodDisruptionBudgets'));
  });
});

describe('plans of many nodes', () => {
  it('starts a 200-node plan (node list search attribute cut to its size limit)', async () => {
    const sim = new SimCluster();
    const names = Array.from(
      { length: 200 },
      (_, i) => `bench-node-with-a-long-name-${String(i).padStart(3, '0')}`,
    );
    for (const n of names) sim.addNode(n);
    const inp = input('many-nodes', {
      nodeNames: names,
      maxUnavailableNodes: 10,
      uncordon: 'OnRelease',
      release: true,
    });
    const res = await withWorker(sim, async (taskQueue) => {
      const h = await wf.env.client.workflow.start(drainPlanWorkflow, {
        taskQueue,
        workflowId: planWorkflowId(inp.plan),
        args: [inp],
      });
      const out = await h.result();
      const desc = await h.describe();
      const listed = desc.searchAttributes.DrainflowNodes as string[];
      assert.ok(listed.length > 10 && listed.length < 200, `${listed.length} nodes in the search attribute`);
      assert.deepEqual(listed, names.slice(0, listed.length));
      return out;
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.calls.filter((c) => c.name === 'cordonNode').length, 200);
  });
});
