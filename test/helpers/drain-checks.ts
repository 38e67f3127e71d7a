/**
 * Checks shared by the long workflow tests (test/workflow/long-drains.test.ts,
 * test/workflow/two-day-drain.test.ts): workflow IDs of a plan, history event types, failed
 * workflow tasks over every run, pods evicted twice, gaps between eviction calls.
 */
import assert from 'node:assert/strict';
import type { DrainPlanInput } from '../../src/workflows/messages.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import type { SimCluster } from './sim-cluster.js';
import { EventType, type History, type WorkflowHarness } from './workflow-harness.js';

/** Workflow IDs of a plan and its node workflows. */
export function workflowIds(inp: DrainPlanInput, nodes: string[]): string[] {
  const id = planWorkflowId(inp.plan);
  return [id, ...nodes.map((n) => nodeWorkflowId(id, n))];
}

/** Event types of a history, as names (EVENT_TYPE_...). */
export function eventTypes(h: History): string[] {
  return (h.events ?? []).map((e) => EventType[e.eventType ?? 0] ?? String(e.eventType));
}

/** Asserts that no run of any of `ids` has a failed or timed-out workflow task; @returns every run. */
export async function assertNoWorkflowTaskFailed(
  wf: WorkflowHarness,
  ids: string[],
  opts: { allowUnhandledCommand?: boolean } = {},
) {
  let unhandled = 0;
  const all = [];
  for (const id of ids) {
    for (const run of await wf.runs(id)) {
      const bad = (run.history.events ?? []).filter((e) => {
        if (e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) return true;
        if (e.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) return false;
        // UnhandledCommand: the server refused a completion because an event (a timer, a signal)
        // arrived meanwhile; the SDK runs the task again. Counted, allowed only when asked.
        const isUnhandled = e.workflowTaskFailedEventAttributes?.cause === 1;
        if (isUnhandled) unhandled++;
        return !(isUnhandled && opts.allowUnhandledCommand);
      });
      const why = bad.map(
        (e) =>
          `${EventType[e.eventType ?? 0]} ${e.workflowTaskFailedEventAttributes?.cause ?? ''} ${e.workflowTaskFailedEventAttributes?.failure?.message ?? ''}`,
      );
      assert.deepEqual(why, [], `${id} run ${run.runId}: ${bad.length} failed workflow task(s)`);
      all.push({ id, ...run });
    }
  }
  return Object.assign(all, { unhandled });
}

/** The current run ID of a workflow. */
export async function currentRun(wf: WorkflowHarness, id: string): Promise<string> {
  return (await wf.env.client.workflow.getHandle(id).describe()).runId;
}

/** Pods evicted more than once (201/200 on an eviction call counted by the sim). */
export function evictedTwice(sim: SimCluster): string[] {
  return [...sim.pods.values()]
    .filter((p) => (p.evictedTimes ?? 0) > 1)
    .map((p) => `${p.namespace}/${p.name}`);
}

/** Server-time gaps between consecutive eviction calls of one pod. */
export function gapsOf(sim: SimCluster, pod: string): number[] {
  const at = sim
    .evictions()
    .filter((c) => (c.arg as { name: string }).name === pod)
    .map((c) => c.atMs);
  return at.slice(1).map((t, i) => t - at[i]!);
}
