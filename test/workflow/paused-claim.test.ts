/**
 * A paused plan does not claim (cordon) a node it waits for in the
 * time-skipping environment against the sim cluster: node n1 is held by another plan ("plan A",
 * `heldBy` in the sim); this plan ("plan B") waits for it (Waiting, NodeHeldByOtherPlan) and is
 * paused; then plan A hands n1 back. While paused, B must not cordon n1 (a cordon takes the node's
 * capacity away, and a pause stops new work); once resumed it claims n1 at once and drains it. An
 * abort while paused and waiting ends the node Aborted, and the deadline ends the wait as it does
 * for a held node (Blocked under Stop, Skipped under SkipNode), with n1 never cordoned by B.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { abortSignal, pauseSignal, releaseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import type { NodeProgress } from '../../src/contract/progress.js';
import type { MaintenancePlanSpecInput } from '../../src/api/plan.js';
import { SimCluster, type CallRecord } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** Backoff of the waiting plan: short, so the code before the patch tries again within the skip. */
const BACKOFF = { initialSeconds: 5, maxSeconds: 30 };

const outcome = (c: CallRecord) => (c.result as { outcome?: string } | undefined)?.outcome;

/** n1 held by another plan, one pod on it. */
function heldNode(): SimCluster {
  const sim = new SimCluster().addNode('n1');
  sim.nodes.get('n1')!.heldBy = 'uid-other';
  sim.addPod({ namespace: 'app', name: 'a', node: 'n1' });
  return sim;
}

/** The cordonNode answers, in order. */
const cordons = (sim: SimCluster) => sim.calls.filter((c) => c.name === 'cordonNode').map(outcome);
const nodeStatus = (sim: SimCluster) => sim.lastStatus()?.nodes?.find((n) => n.name === 'n1');

/**
 * Starts the plan, waits until n1 is Waiting (held), pauses the plan, waits for Paused and lets
 * the other plan hand n1 back; then skips `pausedFor` of workflow time.
 */
async function pauseWhileHeld(
  sim: SimCluster,
  h: { signal(s: typeof pauseSignal): Promise<void> },
  pausedFor: string,
): Promise<void> {
  await wf.waitUntil(
    () => nodeStatus(sim)?.reason === 'NodeHeldByOtherPlan',
    'n1 Waiting (NodeHeldByOtherPlan)',
  );
  await h.signal(pauseSignal);
  await wf.waitUntil(() => sim.lastStatus()?.phase === 'Paused', 'plan Paused');
  delete sim.nodes.get('n1')!.heldBy; // the other plan hands n1 back
  await wf.skip(pausedFor);
}

describe('a paused plan and a node held by another plan (time-skipping)', () => {
  it('does not claim the node when it is handed back while paused; claims and drains it once resumed', async () => {
    const key = 'paused-claim-v1';
    const sim = heldNode();
    const inp = input(key, {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      eviction: { retryBackoff: BACKOFF },
    });
    let paused: { cordons: (string | undefined)[]; heldBy?: string; unschedulable?: boolean } = {
      cordons: [],
    };
    let pausedStatus: ReturnType<typeof sim.lastStatus>;
    let resumedAtMs = 0;
    const res = await wf.withWorker(sim, async (taskQueue) => {
      const h = await wf.startPlan(taskQueue, inp);
      await pauseWhileHeld(sim, h, '10m');
      const n1 = sim.nodes.get('n1')!;
      paused = {
        cordons: cordons(sim),
        ...(n1.heldBy ? { heldBy: n1.heldBy } : {}),
        ...(n1.unschedulable ? { unschedulable: true } : {}),
      };
      pausedStatus = sim.lastStatus();
      resumedAtMs = await wf.env.currentTimeMs();
      await h.signal(resumeSignal);
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained');
      await h.signal(releaseSignal);
      return wf.resultOf(h);
    });

    assert.equal(res.phase, 'Completed');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    // While paused: no claim, no cordon, and the status says why it waits.
    assert.deepEqual(
      paused,
      { cordons: ['HeldByOtherPlan'] },
      'n1 neither claimed nor cordoned while paused',
    );
    assert.equal(pausedStatus?.phase, 'Paused');
    const n1Paused = pausedStatus?.nodes?.find((n) => n.name === 'n1');
    assert.equal(n1Paused?.phase, 'Waiting');
    assert.equal(n1Paused?.reason, 'NodeHeldByOtherPlan');
    assert.match(n1Paused?.message ?? '', /was held by plan uid-other at the last try; paused: not claimed/);
    // Resumed: claimed at once (not at a backoff try), then drained.
    assert.deepEqual(cordons(sim), ['HeldByOtherPlan', 'Cordoned']);
    const claim = sim.calls.find((c) => c.name === 'cordonNode' && outcome(c) === 'Cordoned')!;
    assert.ok(claim.atMs >= resumedAtMs, 'claimed after the resume');
    assert.ok(claim.atMs - resumedAtMs < BACKOFF.initialSeconds * 1000, 'claimed at once on resume');
    assert.equal(sim.evictions().length, 1);
  });

  it('an abort while paused and waiting ends the node Aborted without claiming it', async () => {
    const sim = heldNode();
    const inp = input('paused-claim-abort', { nodeNames: ['n1'], eviction: { retryBackoff: BACKOFF } });
    const res = await wf.withWorker(sim, async (taskQueue) => {
      const h = await wf.startPlan(taskQueue, inp);
      await pauseWhileHeld(sim, h, '2m');
      await h.signal(abortSignal);
      return wf.resultOf(h);
    });
    assert.equal(res.phase, 'Aborted');
    const final: NodeProgress = await wf.env.client.workflow
      .getHandle(nodeWorkflowId(planWorkflowId(inp.plan), 'n1'))
      .result();
    assert.equal(final.phase, 'Aborted');
    assert.equal(final.message, 'aborted before the node was cordoned');
    assert.deepEqual(cordons(sim), ['HeldByOtherPlan'], 'never claimed');
    assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'never cordoned');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });

  it('a node paused for over a day continues as new and still does not claim until resumed', async () => {
    const sim = heldNode();
    const inp = input('paused-claim-can', {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      drainTimeoutSeconds: 3 * 24 * 3600,
      eviction: { retryBackoff: BACKOFF },
    });
    const nodeId = nodeWorkflowId(planWorkflowId(inp.plan), 'n1');
    let runsWhilePaused = 0;
    let cordonsWhilePaused: (string | undefined)[] = [];
    const res = await wf.withWorker(sim, async (taskQueue) => {
      const h = await wf.startPlan(taskQueue, inp);
      // Past CONTINUE_AS_NEW_AGE_MS (24 h): the node's next run starts paused (input.paused).
      await pauseWhileHeld(sim, h, '25h');
      runsWhilePaused = (await wf.runs(nodeId)).length;
      cordonsWhilePaused = cordons(sim);
      await h.signal(resumeSignal);
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained');
      await h.signal(releaseSignal);
      return wf.resultOf(h);
    });
    assert.ok(runsWhilePaused >= 2, `the node continued as new while paused (${runsWhilePaused} run(s))`);
    assert.deepEqual(cordonsWhilePaused, ['HeldByOtherPlan'], 'no claim in either run while paused');
    assert.equal(res.phase, 'Completed');
    assert.deepEqual(cordons(sim), ['HeldByOtherPlan', 'Cordoned']);
    assert.equal(sim.evictions().length, 1);
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });

  const deadlineCases: { onDeadline: 'Stop' | 'SkipNode'; plan: string; node: [string, string, string] }[] = [
    {
      onDeadline: 'Stop',
      plan: 'DeadlineExceeded',
      node: ['Blocked', 'DeadlineExceeded', 'deadline passed before the node could be claimed'],
    },
    {
      onDeadline: 'SkipNode',
      plan: 'NodesSkipped',
      node: ['Skipped', 'SkippedAtDeadline', 'deadline passed before the node could be claimed: skipped'],
    },
  ];
  for (const c of deadlineCases)
    it(`the deadline (onDeadline ${c.onDeadline}) ends the wait while paused, as for a held node`, async () => {
      const sim = heldNode();
      const spec: MaintenancePlanSpecInput = {
        nodeNames: ['n1'],
        drainTimeoutSeconds: 600,
        onDeadline: c.onDeadline,
        eviction: { retryBackoff: BACKOFF },
      };
      const inp = input(`paused-claim-deadline-${c.onDeadline.toLowerCase()}`, spec);
      const res = await wf.withWorker(sim, async (taskQueue) => {
        const h = await wf.startPlan(taskQueue, inp);
        await pauseWhileHeld(sim, h, '2m');
        await wf.waitUntil(() => nodeStatus(sim)?.phase === c.node[0], `n1 ${c.node[0]}`, 30_000, '1m');
        await wf.waitUntil(() => sim.lastStatus()?.phase === 'Blocked', 'plan Blocked');
        const ended = sim.lastStatus()!;
        await h.signal(abortSignal); // a Blocked plan waits for a release or an abort
        await wf.resultOf(h);
        return ended;
      });
      const final: NodeProgress = await wf.env.client.workflow
        .getHandle(nodeWorkflowId(planWorkflowId(inp.plan), 'n1'))
        .result();
      assert.deepEqual([final.phase, final.reason, final.message], c.node);
      assert.deepEqual(cordons(sim), ['HeldByOtherPlan'], 'never claimed');
      assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'never cordoned');
      assert.deepEqual([res.phase, res.reason], ['Blocked', c.plan]);
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    });
});
