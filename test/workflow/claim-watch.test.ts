/**
 * A node held by another plan is claimed as soon as that plan hands it back
 * (the `waitClaimReleased` activity), not at the node's next backoff try,
 * in the time-skipping environment against the sim cluster: node n1 is held by another plan; the
 * plan waits (`retryBackoff` 60 s, so its next try is 60 s after the first); once the node shows
 * Waiting the other plan lets go, and the claim must follow within a few seconds. The hand-back and
 * the wait for the claim run in real time with no time skipped, so the backoff timer cannot fire
 * meanwhile: only the wait for the hand-back can claim the node in that window. And an abort while
 * that wait runs ends the node at once: the workflow never awaits the wait (it is abandoned).
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { abortSignal, releaseSignal } from '../../src/contract/plan-messages.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import type { NodeProgress } from '../../src/contract/progress.js';
import { SimCluster, type CallRecord } from '../helpers/sim-cluster.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
before(wf.setup);
beforeEach(wf.freshServer);
after(wf.teardown);

/** Backoff of the waiting plan: its first try after the held one comes 60 s later. */
const BACKOFF_SECONDS = 60;
/** Real time allowed for the claim after the hand-back (no time is skipped meanwhile). */
const CLAIM_WITHIN_MS = 10_000;

describe('a node held by another plan (time-skipping)', () => {
  it('is claimed as soon as the other plan hands it back, long before the next backoff try', async () => {
    const key = 'claim-watch-v1';
    // The sim's wait for the hand-back polls up to a minute of real time (the real one waits up to
    // the next try), so it is still waiting when the hand-back comes.
    const sim = new SimCluster({ claimPollMs: 60_000 }).addNode('n1');
    sim.nodes.get('n1')!.heldBy = 'uid-other';
    sim.addPod({ namespace: 'app', name: 'a', node: 'n1' });
    const inp = input(key, {
      nodeNames: ['n1'],
      uncordon: 'OnRelease',
      eviction: { retryBackoff: { initialSeconds: BACKOFF_SECONDS, maxSeconds: 120 } },
    });
    const outcome = (c: CallRecord) => (c.result as { outcome?: string } | undefined)?.outcome;
    const claim = () => sim.calls.find((c) => c.name === 'cordonNode' && outcome(c) === 'Cordoned');
    let handBackAtMs = 0;
    let claimedInRealTime = false;
    const res = await wf.withWorker(sim, async (taskQueue) => {
      const h = await wf.startPlan(taskQueue, inp);
      await wf.waitUntil(
        () => sim.lastStatus()?.nodes?.find((n) => n.name === 'n1')?.reason === 'NodeHeldByOtherPlan',
        'n1 Waiting (NodeHeldByOtherPlan)',
      );
      assert.equal(claim(), undefined);
      // The other plan hands the node back; then real time only, no time skipped.
      handBackAtMs = await wf.env.currentTimeMs();
      delete sim.nodes.get('n1')!.heldBy;
      const realEnd = Date.now() + CLAIM_WITHIN_MS;
      while (!claim() && Date.now() < realEnd) await sleep(20);
      claimedInRealTime = claim() !== undefined;
      // Not claimed in real time (asserted below): skip to the next try so that the run ends.
      if (!claimedInRealTime) await wf.waitUntil(() => claim() !== undefined, 'the claim at the next try');
      await wf.waitUntil(() => sim.lastStatus()?.phase === 'Drained', 'Drained');
      await h.signal(releaseSignal);
      return wf.resultOf(h);
    });

    assert.equal(res.phase, 'Completed');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    const cordons = sim.calls.filter((c) => c.name === 'cordonNode').map(outcome);
    assert.deepEqual(cordons, ['HeldByOtherPlan', 'Cordoned'], 'one try while held, one claim');
    assert.ok(claimedInRealTime, `claimed within ${CLAIM_WITHIN_MS} ms of real time after the hand-back`);
    const afterMs = claim()!.atMs - handBackAtMs;
    assert.ok(
      afterMs < (BACKOFF_SECONDS * 1000) / 2,
      `claimed ${afterMs} ms (server time) after the hand-back; the backoff try was ${BACKOFF_SECONDS} s after the first`,
    );
    const waits = sim.calls.filter((c) => c.name === 'waitClaimReleased');
    assert.deepEqual(waits.map(outcome), ['Released'], 'one wait for the hand-back, answered by it');
    assert.equal(sim.evictions().length, 1);
  });

  it('an abort ends the node at once while it waits for the hand-back', async () => {
    const sim = new SimCluster({ claimPollMs: 60_000 }).addNode('n1');
    sim.nodes.get('n1')!.heldBy = 'uid-other';
    const inp = input('claim-watch-abort', {
      nodeNames: ['n1'],
      eviction: { retryBackoff: { initialSeconds: BACKOFF_SECONDS, maxSeconds: 120 } },
    });
    let abortedInMs = Infinity;
    const res = await wf.withWorker(sim, async (taskQueue) => {
      const h = await wf.startPlan(taskQueue, inp);
      await wf.waitUntil(() => sim.claimWaitsRunning > 0, 'the wait for the hand-back running');
      const t0 = Date.now();
      await h.signal(abortSignal);
      const r = await wf.resultOf(h, 30_000);
      abortedInMs = Date.now() - t0;
      return r;
    });
    assert.equal(res.phase, 'Aborted');
    // The sim's wait would run a minute of real time: the node did not wait for it.
    assert.ok(abortedInMs < CLAIM_WITHIN_MS, `the plan ended ${abortedInMs} ms (real) after the abort`);
    const final: NodeProgress = await wf.env.client.workflow
      .getHandle(nodeWorkflowId(planWorkflowId(inp.plan), 'n1'))
      .result();
    assert.equal(final.phase, 'Aborted');
    assert.equal(sim.nodes.get('n1')!.heldBy, 'uid-other', 'the other plan keeps its node');
    await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
  });
});
