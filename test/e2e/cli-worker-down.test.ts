// test-lane: parallel
/**
 * `drainflow status` when no worker polls the task queue, on the real stack: the progress query
 * cannot be answered, so the CLI shows the plan's written status within seconds and says that no
 * worker is polling the task queue (the first thing to check when a plan stalls).
 *
 * The worker of this test logs at debug level to its own stdout file, so the test also checks
 * that every line it writes — drainflow's, the Temporal SDK's worker side and its core — is JSON,
 * with the plan on the SDK's lines that name one of its workflows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '../../src/cli/plans.js';
import { loadCliConfig } from '../../src/shared/settings.js';
import { uniqueName, waitFor, type Clients } from '../helpers/k8s.js';
import { stackClients } from '../helpers/operator-harness.js';
import {
  freePort,
  nodePath,
  startRunProcess,
  startWorkerProcess,
  type DrainflowProcess,
} from '../helpers/processes.js';
import { blockedPlan, jsonLines, root, runCommand, type BlockedPlan } from './cli-fixtures.js';

const RUN_LABEL = 'drainflow.dev/e2e-cli-down';

/** `drainflow run --worker` with stdout and stderr in files of their own; ready once /readyz answers. */
async function startLoggingWorker(
  taskQueue: string,
): Promise<{ proc: ChildProcess; stdout: string; stderr: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'drainflow-json-logs-'));
  const stdout = join(dir, 'stdout.log');
  const stderr = join(dir, 'stderr.log');
  const port = await freePort();
  const [o, e] = [openSync(stdout, 'a'), openSync(stderr, 'a')];
  const proc = spawn(
    nodePath(),
    [
      join(root, 'bin', 'drainflow.js'),
      'run',
      '--worker',
      '--worker-port',
      String(port),
      '--task-queue',
      taskQueue,
      '--log-level',
      'debug',
    ],
    { cwd: root, env: process.env, stdio: ['ignore', o, e] },
  );
  closeSync(o);
  closeSync(e);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  await waitFor(
    async () => {
      if (gone)
        throw new Error(`worker exited:\n${readFileSync(stderr, 'utf8')}\n${readFileSync(stdout, 'utf8')}`);
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) }).catch(
        () => undefined,
      );
      return res?.status === 200;
    },
    90_000,
    { what: 'worker ready' },
  ).catch((err: unknown) => {
    // Not ready in time: the caller never gets a handle to stop it, and a live worker keeps the
    // test process from exiting.
    proc.kill('SIGKILL');
    throw err;
  });
  return {
    proc,
    stdout,
    stderr,
    async stop() {
      if (!gone) proc.kill('SIGTERM');
      await exited;
    },
  };
}

describe('drainflow status with no worker', () => {
  let c: Clients;
  let operator: DrainflowProcess | undefined;
  let worker: Awaited<ReturnType<typeof startLoggingWorker>> | undefined;
  let cleanupWorker: DrainflowProcess | undefined;
  let plan: BlockedPlan | undefined;
  const run = uniqueName('cli-down');

  before(async () => {
    c = await stackClients();
    operator = await startRunProcess({ run, label: RUN_LABEL, parts: 'operator' });
    worker = await startLoggingWorker(run);
  });

  after(async () => {
    await worker?.stop();
    // Deleting the plan needs a worker: the workflow hands the node back.
    cleanupWorker = await startWorkerProcess(run).catch(() => undefined);
    await plan?.cleanup();
    await cleanupWorker?.stop('SIGTERM');
    await operator?.stop('SIGTERM');
  });

  it('answers at once from the written status and says no worker polls the task queue; the worker logs JSON only', async () => {
    plan = await blockedPlan(c, 'cli-down', { [RUN_LABEL]: run });

    const live = await runCommand(['status', plan.name]);
    assert.equal(live.code, 0, live.err);
    assert.match(live.out, new RegExp(`MaintenancePlan ${plan.name}: Running`));
    assert.doesNotMatch(live.out, /note:/, 'a running worker answers the query');

    await worker!.stop();
    // The answer's own time, without the process start (seconds on a loaded machine: loading
    // @kubernetes/client-node alone took 9 s at a load average of 22 here).
    const t0 = Date.now();
    const view = await status(loadCliConfig({}), plan.name);
    const ms = Date.now() - t0;
    console.log(`status() with the worker stopped: ${ms} ms; note: ${view.note}`);
    assert.equal(view.live, undefined);
    assert.equal(view.plan.status?.phase, 'Running');
    assert.match(view.note ?? '', new RegExp(`^no worker is polling task queue "${run}"`));
    assert.ok(ms < 5000, `status took ${ms} ms without a worker`);

    const down = await runCommand(['status', plan.name]);
    console.log(
      `drainflow status with the worker stopped: exit ${down.code} after ${down.ms} ms (process start included)`,
    );
    assert.equal(down.code, 0, down.err);
    assert.match(down.out, new RegExp(`MaintenancePlan ${plan.name}: Running`), 'the written status');
    assert.match(down.out, /blocked by .*PodDisruptionBudget/, 'with what blocks');
    assert.match(down.out, new RegExp(`note: no worker is polling task queue "${run}"`));
    assert.match(down.out, /shown: the status the plan last wrote/);

    // pause does not wait for an Update no worker takes: it sets the spec flag, says so, exits 0.
    const pause = await runCommand(['pause', plan.name]);
    console.log(`drainflow pause with the worker stopped: exit ${pause.code} after ${pause.ms} ms`);
    assert.equal(pause.code, 0, pause.err);
    assert.match(
      pause.out,
      new RegExp(`spec\\.paused: true written .*no worker is polling task queue "${run}"`),
    );
    assert.equal((await plan.read()).spec.paused, true);

    // Every line the worker wrote is JSON: drainflow's own, the SDK's worker side, its core.
    const lines = jsonLines(readFileSync(worker!.stdout, 'utf8'), 'worker stdout');
    jsonLines(readFileSync(worker!.stderr, 'utf8'), 'worker stderr');
    const components = new Set(lines.map((l) => l.sdkComponent).filter(Boolean));
    assert.ok(components.has('worker'), `SDK worker lines among ${[...components].join(', ')}`);
    assert.ok(components.has('core'), `SDK core lines among ${[...components].join(', ')}`);
    const ofPlan = lines.filter((l) => typeof l.workflowId === 'string' && l.workflowId.includes(plan!.name));
    assert.ok(ofPlan.length > 0, 'SDK lines name the plan workflows');
    for (const l of ofPlan) assert.equal(l.plan, plan.name, JSON.stringify(l));
    console.log(
      `worker: ${lines.length} JSON lines, sdkComponent ${[...components].join('/')}, ${ofPlan.length} naming the plan`,
    );
  });
});
