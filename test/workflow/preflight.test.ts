/**
 * spec.mode Preflight in the plan workflow (time-skipping server, the in-memory cluster of
 * test/helpers/sim-cluster.ts for the drain activities, and a `preflightNode` built on the real
 * report builder from each sim node's pods): the plan examines every node in batches, never
 * cordons or evicts, projects the report into status.preflight and ends Previewed; a node whose
 * activity fails for good is reported with its error (PreflightIncomplete); an abort during the
 * preflight ends it Aborted; between two batches (nodes Previewed, others not yet examined) the
 * status has no deadline and no deadlineAction.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/activity';
import type { PreflightActivities } from '../../src/activities/types.js';
import type { MaintenancePlanStatus } from '../../src/api/plan.js';
import { buildPreflightNode } from '../../src/drain/preflight.js';
import type { PodInfo } from '../../src/drain/pods.js';
import { abortSignal, progressQuery } from '../../src/contract/plan-messages.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan, waitUntil, resultOf } = wf;

before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** A pod of the sim as PodInfo: managed by a ReplicaSet unless its action is Block (no controller). */
function podInfo(sim: SimCluster, node: string): PodInfo[] {
  return [...sim.pods.values()]
    .filter((p) => p.node === node && !p.gone)
    .map((p) => ({
      metadata: {
        namespace: p.namespace,
        name: p.name,
        uid: p.uid,
        labels: { app: p.name.split('-')[0]! },
        ...(p.action === 'Block'
          ? {}
          : {
              ownerReferences: [
                { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'r', controller: true },
              ],
            }),
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    }));
}

/** `preflightNode` over the sim: the real builder; `fail` nodes throw a non-retryable error; every call is counted. */
function preflightOver(
  sim: SimCluster,
  opts: { fail?: Set<string>; gate?: Promise<void> } = {},
): PreflightActivities & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    async preflightNode({ node, selection }) {
      seen.push(node);
      await opts.gate;
      if (opts.fail?.has(node)) throw ApplicationFailure.nonRetryable(`list pods of node ${node}: HTTP 403`);
      return buildPreflightNode({
        node,
        pods: podInfo(sim, node),
        pdbs: [
          {
            namespace: 'app',
            name: 'web',
            selector: { matchLabels: { app: 'web' } },
            hasStatus: true,
            generation: 1,
            observedGeneration: 1,
            disruptionsAllowed: 1,
          },
        ],
        selection,
        dryRun: Object.fromEntries(
          podInfo(sim, node).map((p) => [`app/${p.metadata.name}`, { verdict: 'Accepted' as const }]),
        ),
      });
    },
  };
}

/** A sim of 12 nodes n00…n11, each with one pod `web-<node>` behind the PDB app/web. */
function twelveNodes(): { sim: SimCluster; nodes: string[] } {
  const sim = new SimCluster();
  const nodes = Array.from({ length: 12 }, (_, i) => `n${String(i).padStart(2, '0')}`);
  for (const n of nodes) {
    sim.addNode(n);
    sim.addPod({ namespace: 'app', name: `web-${n}`, node: n, pdbs: ['app/web'] });
  }
  return { sim, nodes };
}

describe('spec.mode Preflight (time-skipping)', () => {
  it('examines 12 nodes, cordons and evicts nothing, ends Previewed with the report', async () => {
    const { sim, nodes } = twelveNodes();
    sim.addPod({ namespace: 'app', name: 'bare', node: 'n03', action: 'Block', reason: 'NoController' });
    const pre = preflightOver(sim);
    const inp = input('preflight-v1', { nodeNames: nodes, mode: 'Preflight' });
    const res = await withWorker(
      sim,
      async (tq) => {
        const r = await resultOf(await startPlan(tq, inp));
        return r;
      },
      { activities: { ...sim.activities(), ...pre } },
    );
    assert.equal(res.phase, 'Previewed');
    assert.equal(res.reason, 'BlockersFound');
    assert.deepEqual([...pre.seen].sort(), nodes);
    const names = new Set(sim.calls.map((c) => c.name));
    for (const forbidden of ['cordonNode', 'evictPod', 'deletePod', 'releaseNode', 'observeNode'])
      assert.ok(!names.has(forbidden), `${forbidden} called: ${[...names].join(', ')}`);
    for (const n of nodes) assert.equal(sim.nodes.get(n)!.unschedulable, false);
    const st = sim.lastStatus()!;
    assert.equal(st.phase, 'Previewed');
    assert.equal(st.preflight?.nodesExamined, 12);
    assert.equal(st.preflight?.podsToEvict, 12);
    assert.equal(st.preflight?.blockerCount, 1);
    assert.equal(st.preflight?.nodes[0]?.name, 'n03', 'the blocked node first');
    assert.deepEqual(
      st.preflight?.pdbs?.map((p) => [p.pdb, p.podsToEvict, p.rounds]),
      [['app/web', 12, 12]],
    );
    assert.equal(st.preflight?.maxRounds, 12);
    assert.deepEqual(
      st.nodes?.map((n) => [n.phase, n.reason]),
      nodes.map((n) => ['Previewed', n === 'n03' ? 'BlockersFound' : 'NoBlockers']),
    );
    assert.equal(st.deadline, undefined, 'a preview has no deadline');
    assert.equal(st.deadlineAction, undefined);
    assert.ok(st.completedAt);
    const cond = st.conditions?.find((c) => c.type === 'Previewed');
    assert.deepEqual([cond?.status, cond?.reason], ['True', 'BlockersFound']);
    // The other conditions say what the preview found, and nothing reads as evictions pending.
    const blocked = st.conditions?.find((c) => c.type === 'Blocked');
    assert.deepEqual([blocked?.status, blocked?.reason], ['True', 'BlockersFound']);
    assert.match(blocked?.message ?? '', /found 1 blocker\(s\) on 1 of 12 node\(s\)/);
    const drained = st.conditions?.find((c) => c.type === 'Drained');
    assert.deepEqual([drained?.status, drained?.reason], ['False', 'PreviewOnly']);
    assert.equal(st.evictionProgress, undefined, 'a preview shows no eviction counters');
    for (const s of sim.statuses)
      assert.equal(s.status.evictionProgress, undefined, 'not while previewing either');
    for (const s of sim.statuses) {
      assert.equal(s.status.deadlineAction, undefined, `deadlineAction while ${s.status.phase}`);
      assert.equal(s.status.deadline, undefined, `deadline while ${s.status.phase}`);
    }
    const phases = sim.statuses.map((s) => s.status.phase);
    assert.ok(!phases.includes('Drained') && !phases.includes('Blocked'), phases.join(','));
  });

  it('between two batches (nodes Previewed, others not yet examined) it shows no deadline and no deadlineAction', async () => {
    const { sim, nodes } = twelveNodes();
    const base = preflightOver(sim);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const pre: PreflightActivities = {
      async preflightNode(arg) {
        if (++calls > 10) await held; // the second batch waits until the test has looked
        return base.preflightNode(arg);
      },
    };
    const { midway, res } = await withWorker(
      sim,
      async (tq) => {
        const h = await startPlan(tq, input('preflight-midway', { nodeNames: nodes, mode: 'Preflight' }));
        const previewed = (st?: MaintenancePlanStatus) =>
          st?.nodes?.filter((n) => n.phase === 'Previewed').length ?? 0;
        let st: MaintenancePlanStatus | undefined;
        const until = Date.now() + 60_000;
        while (previewed(st) < 10 && Date.now() < until) {
          st = await h.query(progressQuery);
          if (previewed(st) < 10) await new Promise((r) => setTimeout(r, 100));
        }
        release();
        return { midway: st, res: await resultOf(h) };
      },
      { activities: { ...sim.activities(), ...pre } },
    );
    assert.equal(midway?.phase, 'Running');
    assert.deepEqual(
      midway?.nodes?.map((n) => n.phase),
      [...Array<string>(10).fill('Previewed'), 'Pending', 'Pending'],
    );
    assert.equal(midway?.deadline, undefined, 'a preview has no deadline');
    assert.equal(midway?.deadlineAction, undefined, 'no node is named for a deadline policy');
    assert.equal(res.phase, 'Previewed');
  });

  it('a node that cannot be examined is reported with its error: PreflightIncomplete', async () => {
    const sim = new SimCluster().addNode('n1').addNode('n2');
    sim.addPod({ namespace: 'app', name: 'web-1', node: 'n1' });
    const pre = preflightOver(sim, { fail: new Set(['n2']) });
    const res = await withWorker(
      sim,
      async (tq) =>
        resultOf(await startPlan(tq, input('inc', { nodeNames: ['n1', 'n2'], mode: 'Preflight' }))),
      { activities: { ...sim.activities(), ...pre } },
    );
    assert.equal(res.phase, 'Previewed');
    assert.equal(res.reason, 'PreflightIncomplete');
    const st = sim.lastStatus()!;
    const n2 = st.preflight!.nodes.find((n) => n.name === 'n2')!;
    assert.match(n2.error ?? '', /HTTP 403/);
    assert.equal(st.nodes?.find((n) => n.name === 'n2')?.reason, 'PreflightFailed');
    assert.match(st.preflight!.summary, /1 node\(s\) could not be examined/);
    const blocked = st.conditions?.find((c) => c.type === 'Blocked');
    assert.deepEqual([blocked?.status, blocked?.reason], ['Unknown', 'PreflightIncomplete']);
  });

  it('an abort during the preflight ends it Aborted, nothing touched', async () => {
    const sim = new SimCluster().addNode('n1');
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const pre = preflightOver(sim, { gate });
    const res = await withWorker(
      sim,
      async (tq) => {
        const h = await startPlan(tq, input('abort', { nodeNames: ['n1'], mode: 'Preflight' }));
        await waitUntil(() => pre.seen.length === 1, 'the preflight started');
        await h.signal(abortSignal);
        open();
        return resultOf(h);
      },
      { activities: { ...sim.activities(), ...pre } },
    );
    assert.equal(res.phase, 'Aborted');
    assert.equal(sim.lastStatus()?.phase, 'Aborted');
    assert.equal(sim.lastStatus()?.preflight, undefined);
    assert.ok(!sim.calls.some((c) => c.name === 'cordonNode' || c.name === 'releaseNode'));
  });
});
