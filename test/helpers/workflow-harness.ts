/**
 * Shared harness of the time-skipping workflow tests (test/workflow/*.test.ts): the environment,
 * one workflow bundle, a worker per test serving a {@link SimCluster}, and the helpers to drive a
 * plan workflow, wait while the server skips time and read histories.
 *
 * Determinism guard (until the first release, the only one besides the lint rules; see
 * docs/upgrading.md): after every test, each plan and node workflow the test started (through
 * this harness's client, and the node children those plans started) is replayed from the history
 * the test server recorded, every run of it, against the current workflow bundle
 * ({@link WorkflowHarness.replayWorkflows}). A nondeterministic change fails the test that ran it.
 *
 * Usage: `const wf = new WorkflowHarness(); before(() => wf.setup()); after(() => wf.teardown());`
 * (constructed at the top level of a test file or of a `describe`: it registers the replay as an
 * `afterEach` hook there).
 */
import { readFileSync } from 'node:fs';
import { afterEach } from 'node:test';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import type { WorkflowClient, WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  Worker,
  type ReplayHistoriesIterable,
  type WorkerOptions,
  type WorkflowBundle,
} from '@temporalio/worker';
import { createGrantDeliveryActivities } from '../../src/activities/grant-delivery.js';
import { parseSpec, type MaintenancePlanSpecInput } from '../../src/api/plan.js';
import type { abortSignal, releaseSignal } from '../../src/contract/plan-messages.js';
import type { DrainPlanInput } from '../../src/workflows/messages.js';
import { evictionTaskQueue, planWorkflowId } from '../../src/contract/names.js';
import { workflowBundlePath } from '../../src/worker/bundle.js';
import { drainPlanWorkflow } from '../../src/workflows/plan.js';
import type { SimCluster } from './sim-cluster.js';
import { installTestRuntime, releaseUnusedTestRuntime } from './sdk-logs.js';
import { timeSkippingEnv } from './temporal.js';

export type History = proto.temporal.api.history.v1.IHistory;
export const EventType = proto.temporal.api.enums.v1.EventType;

/** The plan workflow's input for plan `name` (uid `uid-<name>`, generation 1). */
export function input(name: string, spec: MaintenancePlanSpecInput): DrainPlanInput {
  return { plan: { name, uid: `uid-${name}`, generation: 1 }, spec: parseSpec(spec) };
}

/** The workflow types of src/workflows whose histories the harness replays (hook workflows are the user's). */
export const REPLAYED_WORKFLOW_TYPES: ReadonlySet<string> = new Set([
  'drainPlanWorkflow',
  'drainNodeWorkflow',
]);

/** Encoded size of a history, bytes (the sum of its encoded events, as the server counts it). */
export function historyBytes(history: History): number {
  return proto.temporal.api.history.v1.History.encode(history).finish().length;
}

export class WorkflowHarness {
  env!: TestWorkflowEnvironment;
  bundle!: WorkflowBundle;
  private seq = 0;
  /** IDs of the workflows started through `env.client` since the last replay (see {@link track}). */
  private started = new Set<string>();

  constructor() {
    // Every test replays what it recorded (see the module comment).
    afterEach(async () => {
      const ids = [...this.started];
      this.started.clear();
      if (this.env && this.bundle) await this.replayWorkflows(ids);
    });
  }

  /**
   * Records the ID of every workflow started through `env.client` (start, execute,
   * signalWithStart), so that the test's end replays it.
   */
  private track(env: TestWorkflowEnvironment): TestWorkflowEnvironment {
    const wc: WorkflowClient = env.client.workflow;
    const note = (options: { workflowId: string }) => this.started.add(options.workflowId);
    const start = wc.start.bind(wc);
    const execute = wc.execute.bind(wc);
    const signalWithStart = wc.signalWithStart.bind(wc);
    wc.start = ((fn, options) => (note(options), start(fn, options))) as typeof wc.start;
    wc.execute = ((fn, options) => (note(options), execute(fn, options))) as typeof wc.execute;
    wc.signalWithStart = ((fn, options) => (
      note(options),
      signalWithStart(fn, options)
    )) as typeof wc.signalWithStart;
    return env;
  }

  /**
   * Starts the time-skipping server and loads the bundle of src/workflows: the worker's own cached
   * bundle (src/worker/bundle.ts, keyed by a hash of the workflow sources), built once by the first
   * file that needs it rather than by webpack in every test file.
   */
  setup = async (): Promise<void> => {
    // The SDK's lines through drainflow's logger, warnings and errors only (test/helpers/sdk-logs.ts).
    installTestRuntime();
    try {
      this.env = this.track(await timeSkippingEnv());
    } catch (err) {
      await releaseUnusedTestRuntime();
      throw err;
    }
    const path = workflowBundlePath(fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url)));
    this.bundle = { code: readFileSync(path, 'utf8') };
  };

  teardown = async (): Promise<void> => {
    await this.env?.teardown();
  };

  /**
   * Replaces the time-skipping server with a fresh one (about 0.1 s), for `beforeEach`: no
   * workflow, timer or time-skipping lock of an earlier test can slow or stall the next one
   * (a stalled server runs timers in real time, so a test waiting for hours of skipped time hangs).
   */
  freshServer = async (): Promise<void> => {
    await this.env?.teardown();
    this.started.clear();
    this.env = this.track(await timeSkippingEnv());
  };

  /**
   * Runs `fn` with a worker serving the sim cluster on a fresh task queue (`options` apply to it;
   * `options.taskQueue` names the queue instead, e.g. to start a worker again for workflows started
   * under an earlier one), and a second one serving the sim's `evictPod` on that queue's eviction
   * task queue, as `createWorker` does in production.
   */
  withWorker = async <T>(
    sim: SimCluster,
    fn: (taskQueue: string) => Promise<T>,
    options: Partial<WorkerOptions> = {},
  ): Promise<T> => {
    const taskQueue = options.taskQueue ?? `wf-test-${++this.seq}`;
    const activities = sim.activities();
    const worker = await Worker.create({
      connection: this.env.nativeConnection,
      taskQueue,
      workflowBundle: this.bundle,
      activities: { ...createGrantDeliveryActivities(), ...activities },
      ...options,
    });
    const evictions = await Worker.create({
      connection: this.env.nativeConnection,
      taskQueue: evictionTaskQueue(taskQueue),
      activities: { evictPod: activities.evictPod },
    });
    // The eviction worker stops once the main one stopped (after `fn` settled).
    return evictions.runUntil(worker.runUntil(fn(taskQueue)));
  };

  /** Starts the plan workflow for `inp` on `taskQueue`. */
  startPlan = (taskQueue: string, inp: DrainPlanInput): Promise<WorkflowHandle<typeof drainPlanWorkflow>> =>
    this.env.client.workflow.start(drainPlanWorkflow, {
      taskQueue,
      workflowId: planWorkflowId(inp.plan),
      args: [inp],
    });

  /**
   * Starts the plan workflow for `inp` on a worker serving `sim`, waits until the published status
   * reaches phase `until` (or the predicate `until` holds), runs `between` (assertions on that moment,
   * given the workflow handle), sends `signal` (release or abort) and returns the workflow's result.
   * `timeoutMs`: real time allowed for `until` (see {@link waitUntil}).
   */
  driveTo = async (
    sim: SimCluster,
    inp: DrainPlanInput,
    until: string | (() => boolean),
    signal: typeof releaseSignal | typeof abortSignal,
    between: (h: WorkflowHandle<typeof drainPlanWorkflow>) => unknown = () => undefined,
    timeoutMs = 30_000,
  ) =>
    this.withWorker(sim, async (taskQueue) => {
      const h = await this.startPlan(taskQueue, inp);
      if (typeof until === 'string')
        await this.waitUntil(() => sim.lastStatus()?.phase === until, `${until} status`, timeoutMs);
      else await this.waitUntil(until, until.toString(), timeoutMs);
      await between(h);
      await h.signal(signal);
      return this.resultOf(h);
    });

  /**
   * The workflow's result, failing with a clear error after `realLimitMs` of real time (a
   * time-skipping server that stalled — seen after it refused a task completion with
   * ACTIVITY_UNKNOWN on a loaded host — would otherwise leave the test hanging).
   */
  resultOf = async <R>(
    h: { result(): Promise<R>; workflowId: string },
    realLimitMs = 180_000,
  ): Promise<R> => {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`workflow ${h.workflowId} gave no result within ${realLimitMs} ms of real time`)),
        realLimitMs,
      );
    });
    try {
      return await Promise.race([h.result(), limit]);
    } finally {
      clearTimeout(timer);
    }
  };

  /**
   * Waits for `pred`, letting the test server skip time meanwhile (`step` of workflow time per
   * step, default 1 s), so durable timers in the workflow fire without real waiting.
   */
  waitUntil = async (pred: () => boolean, what: string, timeoutMs = 30_000, step = '1s'): Promise<void> => {
    const end = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await this.skip(step);
    }
  };

  /**
   * Lets the test server skip `duration` of workflow time (`env.sleep`), failing with a clear
   * error when that takes longer than `realLimitMs` of real time: a server that stopped skipping
   * time would otherwise run an hour-long sleep for a real hour.
   */
  skip = async (duration: string, realLimitMs = 120_000): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the time-skipping server did not skip ${duration} within ${realLimitMs} ms`)),
        realLimitMs,
      );
    });
    try {
      await Promise.race([this.env.sleep(duration), limit]);
    } finally {
      clearTimeout(timer);
    }
  };

  /** Every run of workflow `workflowId`, oldest first, walking the continue-as-new chain. */
  runs = async (workflowId: string): Promise<{ runId: string; history: History }[]> => {
    const latest = await this.env.client.workflow.getHandle(workflowId).fetchHistory();
    const out: { runId: string; history: History }[] = [];
    let runId: string | undefined =
      latest.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId ?? undefined;
    for (let i = 0; runId && i < 1000; i++) {
      const history = await this.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
      out.push({ runId, history });
      const last = history.events?.at(-1);
      runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    return out;
  };

  /**
   * Replays every run of the workflows `ids` and of the node children they started (found in
   * their histories' StartChildWorkflowExecutionInitiated events, recursively), as the test server
   * recorded them, against `bundle` (default: the current workflow code). Only
   * {@link REPLAYED_WORKFLOW_TYPES} are replayed; a workflow the server does not know is skipped.
   * A run still open replays up to its last completed workflow task.
   * @throws naming every run whose replay failed (nondeterminism: a `DeterminismViolationError`).
   */
  replayWorkflows = async (ids: readonly string[], bundle: WorkflowBundle = this.bundle): Promise<void> => {
    const histories: { workflowId: string; history: History }[] = [];
    const seen = new Set<string>();
    const queue = [...ids];
    while (queue.length > 0) {
      const id = queue.shift()!;
      if (seen.has(id)) continue;
      seen.add(id);
      let runs: { runId: string; history: History }[];
      try {
        runs = await this.runs(id);
      } catch {
        continue; // never started (e.g. a start the test expected to be refused)
      }
      for (const { history } of runs) {
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
        for (const e of history.events ?? []) {
          const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
          if (child?.workflowId && REPLAYED_WORKFLOW_TYPES.has(child.workflowType?.name ?? ''))
            queue.push(child.workflowId);
        }
        if (REPLAYED_WORKFLOW_TYPES.has(started?.workflowType?.name ?? ''))
          histories.push({ workflowId: id, history });
      }
    }
    if (histories.length === 0) return;
    const failed: string[] = [];
    const iterable: ReplayHistoriesIterable = histories;
    for await (const r of Worker.runReplayHistories({ workflowBundle: bundle }, iterable))
      if (r.error) failed.push(`${r.workflowId} (run ${r.runId}): ${r.error.name}: ${r.error.message}`);
    if (failed.length > 0)
      throw new Error(
        `replay of ${failed.length} of ${histories.length} recorded run(s) failed:\n${failed.join('\n')}`,
      );
  };
}
