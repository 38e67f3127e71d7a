/**
 * History that grows with the work, not with the square of the plan: the three mechanisms, each
 * checked in the histories of a real run (time-skipping environment, sim cluster of
 * test/helpers/sim-cluster.ts):
 * - a node workflow's input carries only what the node drain reads, not the plan's node list;
 * - the plan's status (written by a local activity, whose input is not recorded) appears in no
 *   event of the plan's history;
 * - a node sends at most one progress signal per {@link PROGRESS_INTERVAL_MS} (the final one may
 *   follow sooner).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import proto from '@temporalio/proto';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { PROGRESS_INTERVAL_MS } from '../../src/workflows/node/reporter.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { evictedTwice, workflowIds } from '../helpers/drain-checks.js';
import { EventType, WorkflowHarness, input, type History } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();

before(wf.setup);
after(wf.teardown);

const NODES = 12;
const PODS = 5;

/** The JSON text of a payload list (json/plain payloads). */
function payloadText(p: { payloads?: { data?: Uint8Array | null }[] | null } | null | undefined): string {
  return (p?.payloads ?? []).map((x) => new TextDecoder().decode(x.data ?? new Uint8Array())).join('\n');
}

/** Server time of a history event, ms since epoch. */
function eventMs(e: proto.temporal.api.history.v1.IHistoryEvent): number {
  return Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
}

describe('history that grows with the work (time-skipping)', () => {
  it(`a ${NODES}-node plan: small child inputs, no status in the plan history, progress signals at most one per ${PROGRESS_INTERVAL_MS} ms`, async () => {
    const sim = new SimCluster({ graceMs: 200 });
    const names = Array.from({ length: NODES }, (_, i) => `node-${String(i).padStart(2, '0')}`);
    for (const n of names) {
      sim.addNode(n);
      for (let p = 0; p < PODS; p++) sim.addPod({ namespace: 'app', name: `${n}-p${p}`, node: n });
    }
    // One eviction at a time per node: its pods leave one after another, so its progress changes
    // many times during the drain. No PDBs: the plan's PDB budget requests (which carry a changed
    // progress of their own) stay out of the way.
    const inp = input('history-growth', {
      nodeNames: names,
      maxUnavailableNodes: 6,
      uncordon: 'OnRelease',
      release: true,
      eviction: { maxConcurrentPerNode: 1 },
    });
    const res = await wf.withWorker(sim, async (taskQueue) =>
      wf.resultOf(await wf.startPlan(taskQueue, inp), 300_000),
    );
    assert.equal(res.phase, 'Completed');
    assert.equal(sim.evictions().length, NODES * PODS);
    assert.deepEqual(evictedTwice(sim), []);
    const planId = planWorkflowId(inp.plan);
    // Every run of every workflow (failed or timed-out workflow tasks are not this test's concern:
    // on a loaded host the plan's tasks may time out and run again, which changes no command).
    const all: { id: string; runId: string; history: History }[] = [];
    for (const id of workflowIds(inp, names)) for (const run of await wf.runs(id)) all.push({ id, ...run });

    // 1. Child inputs: only what the node drain reads; no other node's name.
    for (const n of names) {
      const first = all.find((r) => r.id === nodeWorkflowId(planId, n))!;
      const started = first.history.events?.[0]?.workflowExecutionStartedEventAttributes;
      const text = payloadText(started?.input);
      assert.ok(text.includes(`"${n}"`), `${n}: its input names its node`);
      const others = names.filter((o) => o !== n && text.includes(`"${o}"`));
      assert.deepEqual(others, [], `${n}: its input names other nodes of the plan`);
    }

    // 2. No status payload in the plan's history (a status always carries nodesTotal and conditions).
    for (const r of all.filter((x) => x.id === planId))
      for (const e of r.history.events ?? []) {
        const bytes = proto.temporal.api.history.v1.HistoryEvent.encode(e).finish();
        const text = new TextDecoder().decode(bytes);
        assert.ok(
          !(text.includes('"nodesTotal"') && text.includes('"conditions"')),
          `plan history event ${e.eventId} (${EventType[e.eventType ?? 0]}) carries a status`,
        );
      }

    // 3. Progress signals: at most one per interval per node, the final one excepted. The workflow's
    // clock is the start time of the workflow task that sent the signal.
    let signals = 0;
    for (const r of all.filter((x) => x.id !== planId)) {
      const sentAt: number[] = [];
      let taskStartedMs = 0;
      for (const e of r.history.events ?? []) {
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) taskStartedMs = eventMs(e);
        const sig = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
        if (sig?.signalName !== 'nodeProgress') continue;
        signals++;
        if (!payloadText(sig.input).includes('"final":true')) sentAt.push(taskStartedMs);
      }
      for (let i = 1; i < sentAt.length; i++) {
        const gap = sentAt[i]! - sentAt[i - 1]!;
        assert.ok(gap >= PROGRESS_INTERVAL_MS, `${r.id}: two progress signals ${gap} ms apart`);
      }
    }
    assert.ok(signals >= NODES, `${signals} progress signals: at least the final one per node`);
    console.log(`history growth: ${signals} progress signals for ${NODES * PODS} pods on ${NODES} nodes`);
  });
});
