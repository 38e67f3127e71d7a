/**
 * Shared harness of the time-skipping workflow tests (test/workflow/*.test.ts): the environment,
 * one workflow bundle, a worker per test serving a {@link SimCluster}, and the helpers to drive a
 * plan workflow, wait while the server skips time, read histories and save replay fixtures.
 *
 * Usage: `const wf = new WorkflowHarness(); before(() => wf.setup()); after(() => wf.teardown());`
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import { createGrantDeliveryActivities } from '../../src/activities/grant-delivery.js';
import { parseSpec, type MaintenancePlanSpecInput } from '../../src/api/plan.js';
import type { abortSignal, releaseSignal } from '../../src/contract/plan-messages.js';
import type { DrainPlanInput } from '../../src/workflows/messages.js';
import { evictionTaskQueue, nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { drainPlanWorkflow } from '../../src/workflows/plan.js';
import type { SimCluster } from './sim-cluster.js';
import { installTestRuntime, releaseUnusedTestRuntime } from './sdk-logs.js';
import { quietBundlerLogger, timeSkippingEnv } from './temporal.js';

export type History = proto.temporal.api.history.v1.IHistory;
export const EventType = proto.temporal.api.enums.v1.EventType;

/** The plan workflow's input for plan `name` (uid `uid-<name>`, generation 1). */
export function input(name: string, spec: MaintenancePlanSpecInput): DrainPlanInput {
  return { plan: { name, uid: `uid-${name}`, generation: 1 }, spec: parseSpec(spec) };
}

/** Directory of the replay fixtures (test/fixtures/histories/). */
export const HISTORIES_DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** Whether `UPDATE_HISTORIES` asks for any fixture (recorders of old shapes are registered only then). */
export function recordingHistories(): boolean {
  return (process.env.UPDATE_HISTORIES ?? '') !== '';
}

/** Whether `UPDATE_HISTORIES` (comma-separated) lists `key`. */
export function updateRequested(key: string): boolean {
  return (process.env.UPDATE_HISTORIES ?? '').split(',').includes(key);
}

/** Writes one history as a replay fixture named `<file>.bin` (the file name is the workflow ID the replay uses). */
export function writeHistory(file: string, history: History): void {
  mkdirSync(HISTORIES_DIR, { recursive: true });
  writeFileSync(
    `${HISTORIES_DIR}/${file}.bin`,
    proto.temporal.api.history.v1.History.encode(history).finish(),
  );
}

/** Encoded size of a history, bytes (the sum of its encoded events, as the server counts it). */
export function historyBytes(history: History): number {
  return proto.temporal.api.history.v1.History.encode(history).finish().length;
}

export class WorkflowHarness {
  env!: TestWorkflowEnvironment;
  bundle!: WorkflowBundle;
  private seq = 0;

  /** Starts the time-skipping server and bundles src/workflows. */
  setup = async (): Promise<void> => {
    // The SDK's lines through drainflow's logger, warnings and errors only (test/helpers/sdk-logs.ts).
    installTestRuntime();
    try {
      this.env = await timeSkippingEnv();
    } catch (err) {
      await releaseUnusedTestRuntime();
      throw err;
    }
    this.bundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../../src/workflows/index.ts', import.meta.url)),
      logger: quietBundlerLogger,
    });
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
    this.env = await timeSkippingEnv();
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
   * Saves the histories of plan workflow `id` and its children on `nodes` as replay fixtures
   * (test/fixtures/histories/<workflow ID>.bin) when `UPDATE_HISTORIES` lists `key`
   * (comma-separated, e.g. `UPDATE_HISTORIES=two-pdbs-v2,cordon-all-abort-v2`). See
   * test/workflow/replay.test.ts.
   */
  saveHistories = async (key: string, id: string, nodes: string[]): Promise<void> => {
    if (!updateRequested(key)) return;
    for (const wid of [id, ...nodes.map((n) => nodeWorkflowId(id, n))]) {
      writeHistory(wid, await this.env.client.workflow.getHandle(wid).fetchHistory());
    }
  };
}
