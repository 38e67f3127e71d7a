/**
 * A 500-node plan, in a file (a process, a test server) of its own: after it the in-memory test
 * server is too slow for the tests that follow. Time-skipping environment, sim cluster of
 * test/helpers/sim-cluster.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planWorkflowId } from '../../src/contract/names.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import {
  NODE_CLOSE_CROSSED_BY_ITS_TIMER,
  PLAN_CLOSE_CROSSED_BY_NODE_SIGNALS,
  assertNoWorkflowTaskFailed,
  evictedTwice,
  workflowIds,
} from '../helpers/drain-checks.js';
import { WorkflowHarness, historyBytes, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { withWorker, startPlan } = wf;

before(wf.setup);
after(wf.teardown);

describe('a 500-node plan (time-skipping)', () => {
  it('drains 500 nodes, 50 at a time, with every history under 20,000 events and 10 MB', drainFiveHundred);
});

/**
 * Most real ms without a new activity call: the time-skipping server has been seen to stop making
 * progress in a run this big (it refused a workflow task completion with ACTIVITY_UNKNOWN and never
 * scheduled the task again); the test then fails saying so instead of waiting for its timeout.
 */
const STALL_MS = 60_000;

async function drainFiveHundred(): Promise<void> {
  const real = Date.now();
  const sim = new SimCluster({ observePollMs: 50 });
  const names = Array.from({ length: 500 }, (_, i) => `node-${String(i).padStart(3, '0')}`);
  for (const n of names) {
    sim.addNode(n);
    for (let p = 0; p < 3; p++) sim.addPod({ namespace: 'app', name: `${n}-p${p}`, node: n });
  }
  const inp = input('five-hundred', {
    nodeNames: names,
    maxUnavailableNodes: 50,
    uncordon: 'OnRelease',
    release: true,
  });
  let maxHeld = 0;
  const res = await withWorker(sim, async (taskQueue) => {
    const h = await startPlan(taskQueue, inp);
    const done = h.result();
    let finished = false;
    void done.then(
      () => (finished = true),
      () => (finished = true),
    );
    let calls = 0;
    let progressAt = Date.now();
    while (!finished) {
      if (sim.calls.length !== calls) {
        calls = sim.calls.length;
        progressAt = Date.now();
      } else if (Date.now() - progressAt > STALL_MS) {
        await h.terminate('the test server stalled').catch(() => undefined);
        throw new Error(
          `the test server stalled: no activity call for ${STALL_MS / 1000} s after ${calls} calls`,
        );
      }
      // Nodes being drained: claimed by the plan with pods still on them (drained nodes stay
      // cordoned until the release and no longer hold a slot).
      const busy = new Set([...sim.pods.values()].filter((p) => !p.gone).map((p) => p.node));
      maxHeld = Math.max(
        maxHeld,
        [...sim.nodes.entries()].filter(([name, n]) => n.heldBy === inp.plan.uid && busy.has(name)).length,
      );
      await new Promise((r) => setTimeout(r, 50));
    }
    return done;
  });
  assert.equal(res.phase, 'Completed');
  assert.ok(maxHeld > 1 && maxHeld <= 50, `${maxHeld} nodes drained at once`);
  assert.equal(sim.evictions().length, 1500);
  assert.deepEqual(evictedTwice(sim), []);
  const all = await assertNoWorkflowTaskFailed(wf, workflowIds(inp, names), {
    expect: [NODE_CLOSE_CROSSED_BY_ITS_TIMER, PLAN_CLOSE_CROSSED_BY_NODE_SIGNALS],
  });
  let maxEvents = 0;
  let maxBytes = 0;
  for (const r of all) {
    const events = r.history.events?.length ?? 0;
    const bytes = historyBytes(r.history);
    maxEvents = Math.max(maxEvents, events);
    maxBytes = Math.max(maxBytes, bytes);
    assert.ok(events <= 20000, `${r.id}: ${events} events`);
    assert.ok(bytes <= 10 * 1024 * 1024, `${r.id}: ${bytes} bytes`);
  }
  const plan = all.filter((r) => r.id === planWorkflowId(inp.plan));
  console.log(
    `500 nodes: ${Math.round((Date.now() - real) / 1000)} s real; plan ${plan.length} run(s), ` +
      `${plan.map((r) => r.history.events?.length).join('+')} events; largest run ${maxEvents} events, ${maxBytes} bytes; ` +
      `${all.matched.join('+')} expected workflow task failure(s)`,
  );
}
