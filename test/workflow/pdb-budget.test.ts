/**
 * One PodDisruptionBudget budget per plan (time-skipping server, sim cluster): nodes drained in
 * parallel that share PDBs never spend the same disruption. Every eviction call takes 50 ms of real
 * time in the sim, so calls of different nodes overlap; the sim records each call sent while more
 * calls were in flight behind its PDB than the PDB allowed.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pauseSignal, releaseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { planWorkflowId } from '../../src/contract/names.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import {
  NODE_CLOSE_CROSSED_BY_ITS_TIMER,
  PLAN_CLOSE_CROSSED_BY_NODE_SIGNALS,
  assertNoWorkflowTaskFailed,
  evictedTwice,
  workflowIds,
} from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** `nodes` nodes with 2 pods behind each of 3 shared PDBs (allowing 2, 1 and 3; refilled when replacements are Ready). */
function sharedPdbs(nodes: number): { sim: SimCluster; names: string[]; allowed: Map<string, number> } {
  const sim = new SimCluster({ evictDelayMs: 50, readyDelayMs: 100, graceMs: 50 });
  const allowed = new Map([
    ['app/a', 2],
    ['app/b', 1],
    ['app/c', 3],
  ]);
  for (const [key, n] of allowed) {
    sim.pdbs.set(key, n);
    sim.refill.add(key);
  }
  const names: string[] = [];
  for (let i = 1; i <= nodes; i++) {
    const node = `n${i}`;
    names.push(node);
    sim.addNode(node);
    for (const key of allowed.keys())
      for (let j = 0; j < 2; j++) {
        const app = key.split('/')[1]!;
        sim.addPod({ namespace: 'app', name: `${app}-${node}-${j}`, node, pdbs: [key] });
      }
  }
  return { sim, names, allowed };
}

/** DEBUG_BUDGET=1: prints the plan's budget requests and grants when a call went over budget. */
async function dumpBudget(sim: SimCluster, inp: ReturnType<typeof input>): Promise<void> {
  if (!process.env.DEBUG_BUDGET || sim.overBudget.length === 0) return;
  {
    const h = await wf.env.client.workflow.getHandle(planWorkflowId(inp.plan)).fetchHistory();
    const dec = (p: { data?: Uint8Array | null } | undefined) =>
      p?.data ? Buffer.from(p.data).toString() : '';
    for (const e of h.events ?? []) {
      const sig = e.workflowExecutionSignaledEventAttributes;
      const ext = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      if (sig?.signalName === 'pdbBudget')
        console.log('REQ', String(e.eventId), dec(sig.input?.payloads?.[0]));
      if (ext?.signalName === 'pdbGrant')
        console.log(
          'GRANT',
          String(e.eventId),
          ext.workflowExecution?.workflowId,
          dec(ext.input?.payloads?.[0]),
        );
    }
    console.log(
      JSON.stringify(
        sim
          .evictions()
          .map((c) => [
            c.atMs % 100000,
            (c.arg as { name: string }).name,
            (c.result as { outcome?: string })?.outcome,
          ]),
      ),
    );
  }
}

/**
 * How the plan's grants went out: the workflow tasks that ran a `deliverGrants` local activity,
 * and the `pdbGrant` signal commands (none expected: grants go out through the activity).
 */
async function grantDeliveries(planId: string): Promise<{ activityTasks: number; signalCommands: number }> {
  const h = await wf.env.client.workflow.getHandle(planId).fetchHistory();
  const tasks = new Set<string>();
  let signalCommands = 0;
  for (const e of h.events ?? []) {
    if (e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'pdbGrant')
      signalCommands++;
    const m = e.markerRecordedEventAttributes;
    const data =
      m?.markerName === 'core_local_activity' ? m.details?.['data']?.payloads?.[0]?.data : undefined;
    if (!data) continue;
    const { activity_type } = JSON.parse(Buffer.from(data).toString()) as { activity_type?: string };
    if (activity_type === 'deliverGrants') tasks.add(String(m!.workflowTaskCompletedEventId));
  }
  return { activityTasks: tasks.size, signalCommands };
}

const refusals = (sim: SimCluster) =>
  sim
    .evictions()
    .filter((c) => (c.result as { outcome?: string } | undefined)?.outcome === 'TooManyRequests');

describe('one PDB budget per plan (time-skipping)', () => {
  it('5 nodes sharing 3 PDBs: no 429, never more calls in flight per PDB than it allows', async () => {
    const { sim, names, allowed } = sharedPdbs(5);
    // Named -v4 so that saving its histories keeps the `shared-pdbs` and `shared-pdbs-v3` fixtures (older shapes).
    const inp = input('shared-pdbs-v4', { nodeNames: names, maxUnavailableNodes: 5, uncordon: 'OnRelease' });
    const res = await wf.driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    await dumpBudget(sim, inp);
    assert.deepEqual(sim.overBudget, [], 'no call beyond what its PDB allowed');
    assert.deepEqual(refusals(sim), [], 'no 429');
    assert.equal(sim.evictions().length, 30, 'one eviction call per pod');
    assert.deepEqual(evictedTwice(sim), []);
    for (const [key, n] of allowed)
      assert.ok((sim.maxInFlight.get(key) ?? 0) <= n, `${key}: at most ${n} in flight`);
    // Parallel, not one node after the other: some PDB had more than one call in flight at once.
    assert.ok(
      [...sim.maxInFlight.values()].some((n) => n > 1),
      `calls overlapped: ${JSON.stringify([...sim.maxInFlight])}`,
    );
    const st = sim.lastStatus()!;
    assert.equal(st.evictionProgress?.evicted, 30);
    // Grants go out through the deliverGrants local activity (client signals), not as the plan's
    // own signal commands.
    const g = await grantDeliveries(planWorkflowId(inp.plan));
    assert.ok(g.activityTasks > 0, 'the plan delivered grants');
    assert.equal(g.signalCommands, 0, 'no pdbGrant signal command');
    // A grant that reaches a node drain as it completes fails that workflow task with
    // UnhandledCommand; the SDK runs it again with the signal (benign, as in many-nodes.test.ts).
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, names), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER],
    });
  });

  it('a 429 despite the budget gives the disruption back: every pod still leaves, the plan drains', async () => {
    const { sim, names } = sharedPdbs(3);
    sim.refuse('PdbProcessing', { pod: 'app/b-n2-0', times: 1 });
    const inp = input('shared-pdbs-refused', {
      nodeNames: names,
      maxUnavailableNodes: 3,
      uncordon: 'OnRelease',
    });
    // Up to 90 s of real time for Drained (1 s of workflow time per step): the refused PDB allows
    // nothing until a newer version or the probe bound, and on a loaded host an unchanged sim
    // observation can pace a node for 2 min of workflow time (about 20 s of real time).
    const res = await wf.driveTo(sim, inp, 'Drained', releaseSignal, undefined, 90_000);
    assert.equal(res.phase, 'Completed');
    await dumpBudget(sim, inp);
    assert.equal(refusals(sim).length, 1, 'only the injected 429');
    assert.equal(sim.evictions().length, 19, 'one call per pod plus the refused one');
    assert.deepEqual(sim.overBudget, []);
    // A grant that reaches a node drain as it completes fails that workflow task with
    // UnhandledCommand; the SDK runs it again with the signal (benign, as in many-nodes.test.ts).
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, names), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER],
    });
  });

  it("a node refused at an older PDB version than the plan's ends its refusal with its probe: the PDB does not stay shut", async () => {
    // n3 starts first and spends app/b's only disruption; n1 starts last and so reports app/b once
    // n3 is done; n2 reports no PDB and its one pod never changes, so its view of app/b stays at
    // the first version while the plan's moves on. Its call is then refused (429): its probe
    // report, at that old version, must end the refusal, or app/b stays shut for n1 and n2 until
    // the deadline.
    const sim = new SimCluster({
      evictDelayMs: 50,
      readyDelayMs: 100,
      graceMs: 50,
      cordonDelayMs: { n2: 300, n1: 600 },
    });
    sim.pdbs.set('app/b', 1);
    sim.refill.add('app/b');
    const names = ['n1', 'n2', 'n3'];
    for (const node of names) {
      sim.addNode(node);
      sim.addPod({
        namespace: 'app',
        name: `b-${node}-0`,
        node,
        pdbs: ['app/b'],
        graceMs: node === 'n3' ? 1500 : 50,
      });
    }
    sim.refuse('PdbProcessing', { pod: 'app/b-n2-0', times: 1 });
    const inp = input('refusing-node', {
      nodeNames: names,
      maxUnavailableNodes: 3,
      uncordon: 'OnRelease',
    });
    const res = await wf.withWorker(sim, async (taskQueue) => {
      const h = await wf.startPlan(taskQueue, inp);
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained status', 60_000);
      await h.signal(releaseSignal);
      return wf.resultOf(h);
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(refusals(sim).length, 1, 'only the injected 429');
    assert.deepEqual(
      sim.evictions().map((c) => (c.arg as { name: string }).name),
      [
        'b-n3-0',
        'b-n2-0',
        ...sim
          .evictions()
          .slice(2)
          .map((c) => (c.arg as { name: string }).name),
      ],
      'n3 spent the budget first, then n2 was refused',
    );
    assert.equal(sim.evictions().length, 4, 'one call per pod plus the refused one');
    assert.deepEqual(sim.overBudget, []);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, names), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER],
    });
  });

  it('a one-node plan hands out no budget: no budget signals in its histories', async () => {
    const { sim, names } = sharedPdbs(1);
    const inp = input('one-node-budget', { nodeNames: names, uncordon: 'OnRelease' });
    const res = await wf.driveTo(sim, inp, 'Drained', releaseSignal);
    assert.equal(res.phase, 'Completed');
    assert.deepEqual(refusals(sim), []);
    const signals: string[] = [];
    for (const id of workflowIds(inp, names)) {
      const h = await wf.env.client.workflow.getHandle(id).fetchHistory();
      for (const e of h.events ?? []) {
        const name =
          e.workflowExecutionSignaledEventAttributes?.signalName ??
          e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName;
        if (name) signals.push(name);
      }
    }
    assert.ok(!signals.includes('pdbBudget') && !signals.includes('pdbGrant'), signals.join(','));
  });
});

describe('the PDB budget across continue-as-new (time-skipping)', () => {
  /**
   * The plan continues as new every 40 history events (dozens of boundaries in one drain) while
   * budget requests and grants flow: grants, Events and forwarded controls that handlers produce in
   * the last workflow task of a run reach the next one, so no PDB stalls while it allows disruptions
   * (a grant lost at a boundary stays counted as issued in the plan's ledger, and its PDB stalls for
   * good).
   *
   * `retryBackoff.maxSeconds` is short here because of how the sim answers observations: it says
   * "unchanged" after 200 ms of real time, where the real observeNode waits up to that bound for a
   * change, and the node looks again only once the bound has passed. A PDB's rise after another
   * node's eviction reaches the plan through the PDB's reporting node, so with the default 120 s a
   * reporter that had just looked brought it only 120 s of skipped time later, more than this
   * test's real-time limit on a loaded host (the "stall" seen in most runs before this was found).
   */
  it('5 nodes sharing 3 PDBs, a new run every 40 events: every pod leaves, within budget', async () => {
    const { sim, names } = sharedPdbs(5);
    const inp = {
      ...input('shared-pdbs-can', {
        nodeNames: names,
        maxUnavailableNodes: 5,
        uncordon: 'OnRelease',
        eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 5 } },
      }),
      continueAsNewEvents: 40,
    };
    // Dozens of runs: 120 s of real time for a loaded 2-core host (5 s alone).
    const res = await wf.driveTo(sim, inp, 'Drained', releaseSignal, undefined, 120_000);
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 30, 'one eviction call per pod');
    assert.deepEqual(sim.overBudget, [], 'no call beyond what its PDB allowed');
    assert.deepEqual(evictedTwice(sim), []);
    const runs = await wf.runs(planWorkflowId(inp.plan));
    assert.ok(runs.length >= 5, `the plan continued as new often (${runs.length} runs)`);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, names), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER, PLAN_CLOSE_CROSSED_BY_NODE_SIGNALS],
    });
  });

  it('pause, resume and release sent around the boundaries all take effect', async () => {
    const { sim, names } = sharedPdbs(3);
    const inp = {
      ...input('controls-can', {
        nodeNames: names,
        maxUnavailableNodes: 3,
        uncordon: 'OnRelease',
        // Short for the sim's early "unchanged" observations (see the test above).
        eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 5 } },
      }),
      continueAsNewEvents: 30,
    };
    const res = await wf.withWorker(sim, async (tq) => {
      const h = await wf.startPlan(tq, inp);
      await wf.waitUntil(() => sim.evictions().length >= 2, 'evictions under way', 60_000, '100ms');
      await h.signal(pauseSignal);
      await wf.waitUntil(
        () => sim.lastStatus()?.nodes?.every((n) => n.phase === 'Paused' || n.phase === 'Drained') === true,
        'every running node Paused',
        60_000,
      );
      const calls = sim.evictions().length;
      await wf.skip('5m');
      assert.equal(sim.evictions().length, calls, 'no eviction while paused');
      await h.signal(resumeSignal);
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained after the resume', 120_000);
      await h.signal(releaseSignal);
      return wf.resultOf(h);
    });
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, 18);
    assert.ok(
      [...sim.nodes.values()].every((n) => !n.unschedulable),
      'every node handed back',
    );
    assert.ok((await wf.runs(planWorkflowId(inp.plan))).length >= 3, 'the plan continued as new');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, names), {
      expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER, PLAN_CLOSE_CROSSED_BY_NODE_SIGNALS],
    });
  });
});
