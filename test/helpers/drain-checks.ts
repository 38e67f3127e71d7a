/**
 * Checks shared by the long workflow tests (test/workflow/long-drains.test.ts,
 * test/workflow/two-day-drain.test.ts): workflow IDs of a plan, history event types, failed
 * workflow tasks over every run, pods evicted twice, gaps between eviction calls.
 */
import assert from 'node:assert/strict';
import proto from '@temporalio/proto';
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

/**
 * A workflow task failure a test expects, named exactly, with at most how many it accepts.
 *
 * `UnhandledCommand`: the server refused a task completion that closes the run (complete, or
 * continue-as-new) because new events arrived while the worker ran the task; they are recorded
 * right after the failure, the SDK runs the task again with them, and nothing is lost. `arrived`
 * names the event types that may have crossed the closing task (every event recorded between the
 * failure and the next task must be one of them), `in` whose runs (the plan's or its node
 * workflows'), `atMostPerRun` how many such failures one run may have.
 */
export interface ExpectedTaskFailure {
  cause: 'UnhandledCommand';
  /** Event types (EventType names without `EVENT_TYPE_`, e.g. `TIMER_FIRED`) that may cross. */
  arrived: readonly string[];
  /** Whose runs: the plan workflow's (the first of the IDs checked) or its node workflows'. */
  in: 'plan' | 'node';
  /** When set, every activity event that crossed must be of one of these activity types. */
  activities?: readonly string[];
  /** At most this many such failures in any one run. */
  atMostPerRun: number;
}

/**
 * The one workflow task failure the drain tests name: a node workflow's closing task crossed by one
 * of its own wake timers. `WakeTimer` (src/workflows/wake-timer.ts) never cancels the timers it
 * started, so a node workflow ends (src/workflows/node.ts: the loop exits, then `finish`) with some
 * still pending (its deadline, its next report or look); when one fires while the task that closes
 * the run is in flight (the time-skipping server skips to it as soon as the workflow is idle), the
 * server refuses that completion with UnhandledCommand and the worker runs the task again with the
 * TIMER_FIRED event. At most twice per run: the task run again may be crossed by another of its
 * timers (seen in CI at load 8 in a test with a 5 s retryBackoff bound, whose node keeps timers a
 * few seconds apart). Cancelling the timers before the close would avoid it, but the time-skipping
 * server then refused a 500-node plan's tasks ("invalid history builder state for action").
 */
export const NODE_CLOSE_CROSSED_BY_ITS_TIMER: ExpectedTaskFailure = {
  cause: 'UnhandledCommand',
  arrived: ['TIMER_FIRED'],
  in: 'node',
  atMostPerRun: 2,
};

/**
 * The plan's closing task crossed by what its node workflows send: the plan continues as new (or
 * completes) while node workflows still signal it (reports, budget requests) or one of its own wake
 * timers (WakeTimer, as above) fires; the server refuses that completion with UnhandledCommand so
 * that no signal is lost, and the plan runs the task again with them. Seen at most three times in
 * one run (each task run again may be crossed once more; three in CI at load 8) in tests whose
 * plan continues as new every few dozen events while three to five nodes signal it.
 */
export const PLAN_CLOSE_CROSSED_BY_NODE_SIGNALS: ExpectedTaskFailure = {
  cause: 'UnhandledCommand',
  arrived: ['WORKFLOW_EXECUTION_SIGNALED', 'TIMER_FIRED'],
  in: 'plan',
  atMostPerRun: 3,
};

/**
 * A node workflow's closing task crossed by the answer of a call it abandoned: observations
 * (`observeNode`) and claim waits (`waitClaimReleased`) use ActivityCancellationType ABANDON
 * (src/workflows/node/activities.ts), so a node that ends while one runs (e.g. Failed on a
 * non-retryable DELETE at its deadline) does not wait for it; when its answer is recorded while the
 * task that closes the run is in flight, the server refuses that completion with UnhandledCommand
 * and the worker runs the task again with the activity's events. At most once per run: the
 * abandoned call is the node's only one. Accepted in every test ({@link assertNoWorkflowTaskFailed}).
 */
export const NODE_CLOSE_CROSSED_BY_ABANDONED_CALL: ExpectedTaskFailure = {
  cause: 'UnhandledCommand',
  arrived: [
    'ACTIVITY_TASK_STARTED',
    'ACTIVITY_TASK_COMPLETED',
    'ACTIVITY_TASK_FAILED',
    'ACTIVITY_TASK_TIMED_OUT',
  ],
  activities: ['observeNode', 'waitClaimReleased'],
  in: 'node',
  atMostPerRun: 1,
};

/** One failed or timed-out workflow task of a history, as {@link assertNoWorkflowTaskFailed} sees it. */
interface TaskFailure {
  id: string;
  runId: string;
  /** EVENT_TYPE_WORKFLOW_TASK_FAILED or _TIMED_OUT. */
  type: string;
  /** WorkflowTaskFailedCause name without its prefix (UNHANDLED_COMMAND), '' for a timeout. */
  cause: string;
  message: string;
  /** Event types recorded after the failure, before the next workflow task (the buffered events). */
  arrived: string[];
  /** The activity types of the activity events among `arrived`. */
  arrivedActivities: string[];
}

const CAUSE = proto.temporal.api.enums.v1.WorkflowTaskFailedCause;

/** The failed and timed-out workflow tasks of one run's history. */
function taskFailures(id: string, runId: string, h: History): TaskFailure[] {
  const events = h.events ?? [];
  const out: TaskFailure[] = [];
  events.forEach((e, i) => {
    const failed = e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED;
    if (!failed && e.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) return;
    const attrs = e.workflowTaskFailedEventAttributes;
    const arrived: string[] = [];
    const arrivedActivities: string[] = [];
    for (const next of events.slice(i + 1)) {
      if (next.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) break;
      arrived.push((EventType[next.eventType ?? 0] ?? String(next.eventType)).replace(/^EVENT_TYPE_/, ''));
      const scheduledId =
        next.activityTaskStartedEventAttributes?.scheduledEventId ??
        next.activityTaskCompletedEventAttributes?.scheduledEventId ??
        next.activityTaskFailedEventAttributes?.scheduledEventId ??
        next.activityTaskTimedOutEventAttributes?.scheduledEventId;
      if (scheduledId !== undefined && scheduledId !== null) {
        const scheduled = events.find((x) => Number(x.eventId) === Number(scheduledId));
        arrivedActivities.push(scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?');
      }
    }
    out.push({
      id,
      runId,
      type: EventType[e.eventType ?? 0] ?? String(e.eventType),
      cause: failed
        ? (CAUSE[attrs?.cause ?? 0] ?? String(attrs?.cause)).replace(/^WORKFLOW_TASK_FAILED_CAUSE_/, '')
        : '',
      message: attrs?.failure?.message ?? '',
      arrived,
      arrivedActivities,
    });
  });
  return out;
}

/** Whether failure `f` is what `expected` names (its cause, its workflow, what crossed it). */
function isExpected(f: TaskFailure, planId: string, expected: ExpectedTaskFailure): boolean {
  return (
    f.cause === 'UNHANDLED_COMMAND' &&
    expected.cause === 'UnhandledCommand' &&
    (expected.in === 'plan') === (f.id === planId) &&
    f.arrived.length > 0 &&
    f.arrived.every((t) => expected.arrived.includes(t)) &&
    (expected.activities === undefined || f.arrivedActivities.every((a) => expected.activities!.includes(a)))
  );
}

/**
 * Asserts that no run of any of `ids` (the plan's ID first, as {@link workflowIds} lists them) has
 * a failed or timed-out workflow task, but for the failures `expect` names (and
 * {@link NODE_CLOSE_CROSSED_BY_ABANDONED_CALL}, which any drain may meet), at most `atMostPerRun` of
 * each in one run. @returns every run, and how many expected failures each entry of `expect` (then
 * the abandoned call's) matched over all of them.
 */
export async function assertNoWorkflowTaskFailed(
  wf: WorkflowHarness,
  ids: string[],
  opts: { expect?: readonly ExpectedTaskFailure[] } = {},
) {
  const expect = [...(opts.expect ?? []), NODE_CLOSE_CROSSED_BY_ABANDONED_CALL];
  const matched = expect.map(() => 0);
  const unexpected: TaskFailure[] = [];
  const all = [];
  const planId = ids[0] ?? '';
  const show = (f: TaskFailure) =>
    `${f.id} run ${f.runId}: ${f.type} ${f.cause} ${f.message} (then ${f.arrived.join(', ') || 'nothing'}${f.arrivedActivities.length ? ` of ${f.arrivedActivities.join(', ')}` : ''})`;
  for (const id of ids) {
    for (const run of await wf.runs(id)) {
      const inRun = expect.map(() => 0);
      for (const f of taskFailures(id, run.runId, run.history)) {
        const k = expect.findIndex((x) => isExpected(f, planId, x));
        if (k >= 0 && inRun[k]! < expect[k]!.atMostPerRun) {
          inRun[k]!++;
          matched[k]!++;
        } else unexpected.push(f);
      }
      all.push({ id, ...run });
    }
  }
  assert.deepEqual(
    unexpected.map(show),
    [],
    `${unexpected.length} failed workflow task(s) beyond the ones the test names`,
  );
  return Object.assign(all, { matched });
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
