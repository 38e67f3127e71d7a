// test-lane: serial (stops and restarts the stack's Temporal dev server)
/**
 * What a plan shows when something it needs is missing, on the real stack: the operator and the
 * worker run as real `drainflow run` processes against kube-apiserver + kwok and the Temporal dev
 * server.
 *
 * - No worker: with only the operator running, `kubectl get mp` shows Pending/AwaitingWorker with a
 *   message naming the task queue (the operator writes it; nothing else writes the status until a
 *   worker runs the workflow), and `drainflow pause` sets spec.paused and exits 0. Then a worker
 *   starts and the plan drains.
 * - Temporal down: the stack's Temporal dev server is stopped mid-drain (its pid file, as
 *   `stack.sh up` started it) and started again with `stack.sh up` (its SQLite file keeps the
 *   workflows): one Warning Event TemporalUnavailable per outage (the operator's resync every
 *   `--resync-seconds 2` notices it), one Normal TemporalAvailable after, and the plan drains.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`. Only
 * this file's two tainted kwok nodes are cordoned; its plans, pods, nodes and Events are deleted at
 * the end. The operator takes its Lease in a namespace of its own.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { V1PodSpec } from '@kubernetes/client-node';
import type { MaintenancePlan } from '../../src/api/plan.js';
import { planWorkflowId } from '../../src/contract/names.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  setUnschedulable,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { OperatorHarness, createTaintedNode, drainflowEnv, kubectl } from '../helpers/operator-harness.js';
import { freePort, startDrainflow, startWorkerProcess, type DrainflowProcess } from '../helpers/processes.js';
import { root, runCommand } from './cli-fixtures.js';

const POOL_LABEL = 'drainflow.dev/pool';
const TAINT_KEY = 'drainflow.dev/e2e-operator-status';
/** The operator's resync period in this file, seconds (`--resync-seconds`; the default is 60). */
const RESYNC_SECONDS = 2;

/** The stack's state directory (scripts/stack/stack.sh: $DRAINFLOW_STATE, else <cache>/stack). */
const STATE =
  process.env.DRAINFLOW_STATE ??
  join(process.env.DRAINFLOW_CACHE ?? join(homedir(), '.cache', 'drainflow'), 'stack');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops the stack's Temporal dev server (started by `stack.sh up` in a session of its own). */
async function stopTemporal(): Promise<void> {
  const pid = Number(readFileSync(join(STATE, 'run', 'temporal.pid'), 'utf8').trim());
  assert.ok(alive(pid), `the stack's Temporal (pid ${pid}) runs`);
  process.kill(-pid, 'SIGTERM');
  await waitFor(() => !alive(pid), 30_000, { what: `Temporal pid ${pid} exited` });
}

/** Starts what of the stack is not running (here: Temporal) and waits until it is healthy. */
function startTemporal(): void {
  execFileSync('bash', [join(root, 'scripts', 'stack', 'stack.sh'), 'up'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 180_000,
  });
}

describe('operator: what a plan shows without a worker, and without Temporal', () => {
  const pool = uniqueName('op-status');
  const h = new OperatorHarness({
    taskQueue: uniqueName('op-status-e2e'),
    run: pool,
    lease: { create: 'df-op-status' },
  });
  let c: Clients;
  let ns: string;
  let nodes: [string, string];
  let operator: DrainflowProcess | undefined;
  let worker: DrainflowProcess | undefined;
  let temporalStopped = false;

  /** `drainflow run --operator` of this file, resyncing every {@link RESYNC_SECONDS}; leading and synced. */
  async function startOperator(): Promise<DrainflowProcess> {
    const p = await startDrainflow({
      args: [...h.operatorArgs(await freePort()), '--resync-seconds', String(RESYNC_SECONDS)],
      env: drainflowEnv(),
    });
    await waitFor(() => p.logs().includes('cache synced'), 45_000, {
      what: 'operator leads and lists the plans',
      intervalMs: 200,
    });
    return p;
  }

  /**
   * `replicas` pods of Deployment `app` on node `a` (the other node cordoned while they are placed),
   * tolerating this file's taint; with `slow`, replacements Ready after 3 s behind a PDB
   * (maxUnavailable 1), so a drain of `a` takes tens of seconds.
   */
  async function podsOn(a: string, app: string, replicas: number, slow: boolean): Promise<void> {
    const others = nodes.filter((n) => n !== a);
    for (const n of others) await setUnschedulable(c, n, true);
    const d = makeDeployment(ns, app, replicas, slow ? { readyDelay: '3s' } : {});
    const spec = d.spec!.template.spec as V1PodSpec;
    spec.tolerations = [{ key: TAINT_KEY, operator: 'Equal', value: pool, effect: 'NoSchedule' }];
    spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: POOL_LABEL, operator: 'In', values: [pool] }] }],
        },
      },
    };
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    await waitPodsReady(c, ns, { app }, replicas, 90_000);
    for (const n of others) await setUnschedulable(c, n, false);
    if (slow) {
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: makePdb(ns, app, { app }, { maxUnavailable: 1 }),
      });
      await waitPdb(c, ns, app, (p) => (p.status?.disruptionsAllowed ?? 0) >= 1);
    }
  }

  const events = async (p: MaintenancePlan, reason: string) =>
    (await h.planEvents(p.metadata.name, p.metadata.uid)).filter((e) => e.reason === reason);

  before(async () => {
    await h.connect();
    c = h.c;
    h.leaseNs = await createNamespace(c, 'df-op-status');
    const made: string[] = [];
    for (let i = 0; i < 2; i++)
      made.push(
        await createTaintedNode(c, 'df-ops-node', {
          labels: { [POOL_LABEL]: pool },
          taint: { key: TAINT_KEY, value: pool },
        }),
      );
    nodes = made as [string, string];
    ns = await createNamespace(c, 'df-op-status');
  });

  afterEach(async () => {
    if (temporalStopped) {
      startTemporal();
      temporalStopped = false;
    }
    worker ??= await startWorkerProcess(h.opts.taskQueue, drainflowEnv()).catch(() => undefined);
    h.operator = operator;
    await h.removePlans(60_000);
    await c.apps.deleteCollectionNamespacedDeployment({ namespace: ns }).catch(() => undefined);
    await c.policy.deleteCollectionNamespacedPodDisruptionBudget({ namespace: ns }).catch(() => undefined);
    await waitFor(
      async () => (await c.core.listNamespacedPod({ namespace: ns })).items.length === 0,
      60_000,
      { what: `pods of ${ns} gone` },
    ).catch(() => undefined);
    for (const n of nodes) await setUnschedulable(c, n, false).catch(() => undefined);
  });

  after(async () => {
    h.operator = operator;
    h.worker = worker;
    await h.stop();
    if (ns) await deleteNamespace(c, ns);
    if (h.leaseNs) await deleteNamespace(c, h.leaseNs);
    for (const n of nodes ?? []) await deleteNode(c, n).catch(() => undefined);
  });

  it('without a worker: Pending/AwaitingWorker naming the task queue, pause exits 0; a worker then drains it', async () => {
    const [a] = nodes;
    await podsOn(a, 'web', 2, false);
    operator = await startOperator();

    const name = uniqueName('op-noworker');
    h.applyPlan(name, { nodeNames: [a] });
    const pending = await h.waitPlan(name, (p) => p.status?.phase !== undefined, 30_000, 'a phase');
    const wf = planWorkflowId({ name, uid: pending.metadata.uid });
    const st = pending.status!;
    assert.equal(st.phase, 'Pending');
    assert.equal(st.reason, 'AwaitingWorker');
    assert.match(
      st.message ?? '',
      new RegExp(
        `^workflow ${wf} is started; waiting for a drainflow worker on task queue "${h.opts.taskQueue}" to run it`,
      ),
    );
    const progressing = st.conditions?.find((x) => x.type === 'Progressing');
    assert.equal(progressing?.status, 'True');
    assert.equal(progressing?.reason, 'AwaitingWorker');
    assert.match(kubectl(['get', 'mp', name]), new RegExp(`${name}\\s+Pending\\s+AwaitingWorker\\s`));

    // pause with no worker: spec.paused set, an honest message, exit 0.
    const pause = await runCommand(['pause', name]);
    assert.equal(pause.code, 0, `${pause.out}\n${pause.err}`);
    assert.match(pause.out, /^pause: spec\.paused: true written to plan /);
    assert.match(pause.out, new RegExp(`no worker is polling task queue "${h.opts.taskQueue}"`));
    assert.equal((await h.getPlan(name))?.spec.paused, true);

    // A worker: the workflow takes over the status and applies the pause; resumed, it drains.
    worker = await startWorkerProcess(h.opts.taskQueue, drainflowEnv());
    await h.waitPlan(name, (p) => p.status?.phase === 'Paused', 60_000, 'Paused by the workflow');
    const resume = await runCommand(['resume', name]);
    assert.equal(resume.code, 0, `${resume.out}\n${resume.err}`);
    assert.match(resume.out, /accepted by the workflow/);
    const done = await h.waitPlan(
      name,
      (p) => ['Drained', 'Blocked', 'Failed'].includes(p.status?.phase ?? ''),
      90_000,
      'final phase',
    );
    assert.equal(done.status?.phase, 'Drained', `${done.status?.reason}: ${done.status?.message}`);
    assert.equal(done.status?.workflow?.workflowId, wf);
  });

  it('deleted without a worker: one Warning AwaitingWorker naming the task queue; a worker then lets the deletion finish', async () => {
    const [, b] = nodes;
    const q = h.opts.taskQueue;
    operator ??= await startOperator();
    // No worker: one a test before left running is stopped (Temporal may list it as a poller for a while).
    await worker?.stop();
    worker = undefined;

    const name = uniqueName('op-delwait');
    h.applyPlan(name, { nodeNames: [b] });
    const pending = await h.waitPlan(
      name,
      (p) => p.status?.reason === 'AwaitingWorker',
      30_000,
      'Pending/AwaitingWorker',
    );
    const wf = planWorkflowId({ name, uid: pending.metadata.uid });
    kubectl(['delete', 'mp', name, '--wait=false']);
    const t0 = Date.now();
    const [warning] = await waitFor(
      async () => {
        const e = await events(pending, 'AwaitingWorker');
        return e.length > 0 ? e : undefined;
      },
      120_000,
      { what: 'Warning Event AwaitingWorker' },
    );
    console.log(`AwaitingWorker after ${Date.now() - t0} ms: ${warning!.message}`);
    assert.equal(warning!.type, 'Warning');
    assert.match(
      warning!.message ?? '',
      new RegExp(
        `^plan deleted: its finalizer stays until workflow ${wf} has run the abort and handed the nodes back, and no worker is polling task queue "${q}".*: start one \\(drainflow run --worker --task-queue ${q}\\)`,
      ),
    );
    assert.match(kubectl(['describe', 'mp', name]), /Warning\s+AwaitingWorker/);
    assert.ok((await h.getPlan(name))?.metadata.deletionTimestamp, 'the plan waits for its workflow');

    // A worker runs the abort: the workflow hands the node back and the operator removes the finalizer.
    worker = await startWorkerProcess(q, drainflowEnv());
    await h.waitPlanGone(name, 90_000);
    const all = await events(pending, 'AwaitingWorker');
    assert.equal(all.length, 1);
    assert.equal(all[0]!.count ?? 1, 1, 'one Event per deletion, not one per look');
  });

  it('a plan that has ended: a control with no worker is refused; a spec flag patched on it gives one Normal SpecChangeIgnored', async () => {
    const [, b] = nodes;
    const q = h.opts.taskQueue;
    operator ??= await startOperator();
    worker ??= await startWorkerProcess(q, drainflowEnv());

    // Drained (no pods on the node), then released: Completed. With uncordon OnDelete (the default)
    // its workflow still runs, waiting for the deletion to hand the node back.
    const name = uniqueName('op-ended');
    h.applyPlan(name, { nodeNames: [b] });
    await h.waitPlan(name, (p) => p.status?.phase === 'Drained', 90_000, 'Drained');
    const release = await runCommand(['release', name]);
    assert.equal(release.code, 0, `${release.out}\n${release.err}`);
    const done = await h.waitPlan(name, (p) => p.status?.phase === 'Completed', 30_000, 'Completed');
    await worker.stop();
    worker = undefined;
    await waitFor(
      async () => {
        const st = await runCommand(['status', name]);
        return /no worker is polling task queue/.test(`${st.out}${st.err}`);
      },
      120_000,
      { what: 'drainflow status says no worker polls', intervalMs: 3000 },
    );

    // No worker: refused as with one, exit 1, nothing written.
    const generation = (await h.getPlan(name))!.metadata.generation;
    for (const action of ['release', 'resume']) {
      const r = await runCommand([action, name]);
      assert.equal(r.code, 1, `${action}: ${r.out}\n${r.err}`);
      assert.doesNotMatch(r.out, /written to plan/);
    }
    const refused = await runCommand(['release', name]);
    assert.match(
      refused.err,
      new RegExp(
        `^drainflow: plan "${name}" has ended \\(plan phase Completed/Released\\); nothing to release`,
      ),
    );
    assert.equal((await h.getPlan(name))!.metadata.generation, generation, 'the spec is not written');

    // kubectl can still set a flag (the CRD cannot tell): the operator says it has no effect, once.
    kubectl(['patch', 'mp', name, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
    const [note] = await waitFor(
      async () => {
        const e = await events(done, 'SpecChangeIgnored');
        return e.length > 0 ? e : undefined;
      },
      30_000,
      { what: 'Normal Event SpecChangeIgnored' },
    );
    assert.equal(note!.type, 'Normal');
    assert.equal(note!.message, `plan ${name} has ended (Completed/Released): spec.paused has no effect`);
    // Several resyncs later, still one.
    await new Promise((r) => setTimeout(r, 3 * RESYNC_SECONDS * 1000));
    const later = await events(done, 'SpecChangeIgnored');
    assert.equal(later.length, 1);
    assert.equal(later[0]!.count ?? 1, 1, 'one Event per spec change, not one per resync');
  });

  it('Temporal down mid-drain: one Warning TemporalUnavailable, one Normal TemporalAvailable, then Drained', async () => {
    const [a] = nodes;
    await podsOn(a, 'slow', 8, true);
    operator ??= await startOperator();
    worker ??= await startWorkerProcess(h.opts.taskQueue, drainflowEnv());

    const name = uniqueName('op-outage');
    h.applyPlan(name, { nodeNames: [a] });
    const running = await h.waitPlan(
      name,
      (p) => p.status?.phase === 'Running' && (p.status.evictionProgress?.evicted ?? 0) >= 1,
      60_000,
      'Running, a pod evicted',
    );

    await stopTemporal();
    temporalStopped = true;
    const t0 = Date.now();
    const [warning] = await waitFor(
      async () => {
        const e = await events(running, 'TemporalUnavailable');
        return e.length > 0 ? e : undefined;
      },
      60_000,
      { what: 'Warning Event TemporalUnavailable' },
    );
    console.log(`TemporalUnavailable after ${Date.now() - t0} ms: ${warning!.message}`);
    assert.equal(warning!.type, 'Warning');
    assert.match(
      warning!.message ?? '',
      new RegExp(`^cannot reach Temporal at ${process.env.TEMPORAL_ADDRESS}`),
    );
    assert.match(kubectl(['describe', 'mp', name]), /Warning\s+TemporalUnavailable/);
    // Several resyncs fail during the outage; the Event is recorded once.
    await new Promise((r) => setTimeout(r, 4 * RESYNC_SECONDS * 1000));
    const during = await events(running, 'TemporalUnavailable');
    assert.equal(during.length, 1);
    assert.equal(during[0]!.count ?? 1, 1, 'one Event per outage, not one per resync');

    startTemporal();
    temporalStopped = false;
    const [normal] = await waitFor(
      async () => {
        const e = await events(running, 'TemporalAvailable');
        return e.length > 0 ? e : undefined;
      },
      90_000,
      { what: 'Normal Event TemporalAvailable' },
    );
    assert.equal(normal!.type, 'Normal');
    assert.match(normal!.message ?? '', /^reached Temporal at .* again/);

    const done = await h.waitPlan(
      name,
      (p) => ['Drained', 'Blocked', 'Failed'].includes(p.status?.phase ?? ''),
      180_000,
      'final phase',
    );
    assert.equal(done.status?.phase, 'Drained', `${done.status?.reason}: ${done.status?.message}`);
    const after = await events(running, 'TemporalUnavailable');
    assert.equal(after.length, 1);
    assert.equal(after[0]!.count ?? 1, 1);
  });
});
