/**
 * The drainflow side of a run: a fresh `drainflow run` child process (compiled dist or through tsx,
 * see {@link DrainflowRuntime}; own task queue and ports, no leader election; `BENCH_DRAINFLOW_NODE_OPTIONS`
 * becomes its NODE_OPTIONS), one MaintenancePlan through it, and what it cost: peak RSS and CPU
 * seconds from /proc, Temporal history events of the plan workflow and its children.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, type MaintenancePlan } from '../../src/api/plan.js';
import { errorCode, uniqueName, type Clients } from '../../test/helpers/k8s.js';
import { freePort, log, sleep, until } from './util.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const CLK_TCK = 100; // sysconf(_SC_CLK_TCK) on Linux

/** /proc figures of one process. */
export interface ProcFigures {
  /** VmHWM in MiB: peak resident set since start or since the last reset. */
  peakRssMb: number;
  /** utime + stime in seconds since start. */
  cpuSeconds: number;
}

export function readProc(pid: number): ProcFigures {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  // Fields after the command name "(...)": state is field 3, utime 14, stime 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  return { peakRssMb: hwm / 1024, cpuSeconds: (utime + stime) / CLK_TCK };
}

/** Resets VmHWM to the current RSS (Linux clear_refs "5"); false when not permitted. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * How drainflow runs: `dist` is the compiled JavaScript under plain node, as the container image runs
 * it (`npm run build` first; the bench does it); `tsx` is `bin/drainflow.js`, which compiles the
 * TypeScript sources at start-up (as `npx drainflow` from a checkout) and costs memory of its own.
 */
export type DrainflowRuntime = 'dist' | 'tsx';

/** One drainflow process: both parts, or only the operator / only the worker. */
interface Part {
  role: 'operator+worker' | 'operator' | 'worker';
  child: ChildProcess;
  readyPorts: number[];
  exited: boolean;
}

/** `drainflow run` as child process(es) of the bench. */
export class DrainflowProcesses {
  readonly parts: Part[] = [];
  readonly taskQueue = uniqueName('bench');

  private constructor(readonly logFile: string) {}

  /**
   * Starts `node bin/drainflow.js run` (split: one `--operator` and one `--worker` process) and waits
   * until /readyz answers 200 on every port.
   */
  static async start(
    logDir: string,
    split: boolean,
    runtime: DrainflowRuntime = 'dist',
  ): Promise<DrainflowProcesses> {
    const p = new DrainflowProcesses(join(logDir, `drainflow-${Date.now()}.log`));
    const fd = openSync(p.logFile, 'a');
    const common = [
      '--task-queue',
      p.taskQueue,
      '--no-leader-election',
      // Act only on the bench's own plans (they carry this label), never on other users' plans.
      '--plan-selector',
      'drainflow.dev/bench=true',
      '--log-level',
      process.env.BENCH_DRAINFLOW_LOG_LEVEL ?? 'warn',
    ];
    const roles: Part['role'][] = split ? ['operator', 'worker'] : ['operator+worker'];
    try {
      for (const role of roles) {
        const opPort = await freePort();
        const wkPort = await freePort();
        const args = [
          runtime === 'dist'
            ? join(repoRoot, 'dist', 'cli', 'main.js')
            : join(repoRoot, 'bin', 'drainflow.js'),
          'run',
          ...common,
          '--operator-port',
          String(opPort),
          '--worker-port',
          String(wkPort),
        ];
        if (role === 'operator') args.push('--operator');
        if (role === 'worker') args.push('--worker');
        const child = spawn(process.execPath, args, {
          cwd: repoRoot,
          env: {
            ...process.env,
            ...(process.env.BENCH_DRAINFLOW_NODE_OPTIONS
              ? { NODE_OPTIONS: process.env.BENCH_DRAINFLOW_NODE_OPTIONS }
              : {}),
          },
          stdio: ['ignore', fd, fd],
        });
        const part: Part = {
          role,
          child,
          readyPorts: role === 'operator' ? [opPort] : role === 'worker' ? [wkPort] : [opPort, wkPort],
          exited: false,
        };
        child.once('exit', () => {
          part.exited = true;
        });
        p.parts.push(part);
      }
    } finally {
      closeSync(fd);
    }
    for (const part of p.parts) {
      for (const port of part.readyPorts) {
        await until(
          async () => {
            if (part.exited)
              throw new Error(`drainflow ${part.role} exited during start-up; see ${p.logFile}`);
            const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
            return res?.status === 200;
          },
          180_000,
          `drainflow ${part.role} ready on port ${port} (log ${p.logFile})`,
          250,
        ).catch((err: unknown) => {
          if (part.exited) throw new Error(`drainflow ${part.role} exited during start-up; see ${p.logFile}`);
          throw err;
        });
      }
    }
    return p;
  }

  /** Whether every process still runs. */
  alive(): boolean {
    return this.parts.every((x) => !x.exited);
  }

  /** /proc figures per part. */
  proc(): Record<string, ProcFigures> {
    const out: Record<string, ProcFigures> = {};
    for (const part of this.parts)
      if (part.child.pid && !part.exited) out[part.role] = readProc(part.child.pid);
    return out;
  }

  /** Resets every part's peak RSS; returns false when not permitted. */
  resetPeaks(): boolean {
    return this.parts.every((x) => (x.child.pid ? resetPeak(x.child.pid) : false));
  }

  /** SIGTERM, then SIGKILL after 30 s. */
  async stop(): Promise<void> {
    for (const part of this.parts) if (!part.exited) part.child.kill('SIGTERM');
    const deadline = Date.now() + 30_000;
    while (this.parts.some((x) => !x.exited) && Date.now() < deadline) await sleep(100);
    for (const part of this.parts) if (!part.exited) part.child.kill('SIGKILL');
  }
}

/** Final phases of a plan, as far as the bench is concerned (Drained is the success). */
const DONE_PHASES = new Set(['Drained', 'Blocked', 'Failed', 'Aborted', 'Completed']);

const planPath = { group: GROUP, version: VERSION, plural: PLURAL };

async function readPlan(c: Clients, name: string): Promise<MaintenancePlan | undefined> {
  try {
    return (await c.custom.getClusterCustomObject({ ...planPath, name })) as MaintenancePlan;
  } catch (err) {
    if (errorCode(err) === 404) return undefined;
    throw err;
  }
}

/** Creates the plan. @returns its name. */
export async function createPlan(c: Clients, name: string, spec: Record<string, unknown>): Promise<void> {
  await c.custom.createClusterCustomObject({
    ...planPath,
    body: {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name, labels: { 'drainflow.dev/bench': 'true' } },
      spec,
    },
  });
}

/**
 * Polls the plan every 100 ms until its phase is final (or `timeoutMs`, or the processes die).
 * @returns the plan as last read and the time the final phase was first seen.
 */
export async function waitPlanDone(
  c: Clients,
  name: string,
  timeoutMs: number,
  procs: DrainflowProcesses,
): Promise<{ plan: MaintenancePlan; doneAtMs: number }> {
  const deadline = Date.now() + timeoutMs;
  let lastPhase: string | undefined;
  for (;;) {
    const plan = await readPlan(c, name).catch(() => undefined);
    const phase = plan?.status?.phase;
    if (plan && phase && DONE_PHASES.has(phase)) return { plan, doneAtMs: Date.now() };
    if (phase !== lastPhase) {
      lastPhase = phase;
      log(`  plan ${name}: ${phase ?? '(no status yet)'}`);
    }
    if (!procs.alive()) throw new Error(`drainflow process exited during the drain; see ${procs.logFile}`);
    if (Date.now() > deadline)
      throw new Error(
        `plan ${name} not final after ${Math.round(timeoutMs / 1000)} s (phase ${phase ?? 'none'})`,
      );
    await sleep(100);
  }
}

/**
 * Deletes the plan and waits until it is gone (the operator aborts the workflow, which hands the nodes
 * back, and removes the finalizer). After `graceMs` the finalizers are stripped so the run can end.
 * @returns whether the operator removed it by itself.
 */
export async function deletePlan(c: Clients, name: string, graceMs = 60_000): Promise<boolean> {
  await c.custom.deleteClusterCustomObject({ ...planPath, name }).catch(() => undefined);
  try {
    await until(async () => (await readPlan(c, name)) === undefined, graceMs, `plan ${name} deleted`, 250);
    return true;
  } catch {
    await c.custom
      .patchClusterCustomObject({ ...planPath, name, body: [{ op: 'remove', path: '/metadata/finalizers' }] })
      .catch(() => undefined);
    return false;
  }
}

/** History figures of a plan workflow and its child workflows. */
export interface HistoryFigures {
  workflows: number;
  events: number;
  planEvents: number;
  /** Events by type over all the workflows, most frequent first. */
  byType: Record<string, number>;
  /** Task queue the plan workflow ran on (must be the bench's own). */
  taskQueue?: string;
}

/** Fetches the histories of `workflowId` and every child workflow it started. */
export async function historyFigures(client: Client, workflowId: string): Promise<HistoryFigures> {
  const byType: Record<string, number> = {};
  const count = (events: proto.temporal.api.history.v1.IHistoryEvent[]) => {
    for (const ev of events) {
      const name = proto.temporal.api.enums.v1.EventType[ev.eventType ?? 0] ?? String(ev.eventType);
      const key = name.replace(/^EVENT_TYPE_/, '');
      byType[key] = (byType[key] ?? 0) + 1;
    }
  };
  const planHistory = await client.workflow.getHandle(workflowId).fetchHistory();
  const planEvents = planHistory.events ?? [];
  count(planEvents);
  const children = new Set<string>();
  let taskQueue: string | undefined;
  for (const ev of planEvents) {
    const id = ev.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
    if (id) children.add(id);
    taskQueue ??= ev.workflowExecutionStartedEventAttributes?.taskQueue?.name ?? undefined;
  }
  let events = planEvents.length;
  for (const id of children) {
    const h = await client.workflow.getHandle(id).fetchHistory();
    events += h.events?.length ?? 0;
    count(h.events ?? []);
  }
  const sorted = Object.fromEntries(Object.entries(byType).sort((a, b) => b[1] - a[1]));
  return {
    workflows: 1 + children.size,
    events,
    planEvents: planEvents.length,
    byType: sorted,
    ...(taskQueue ? { taskQueue } : {}),
  };
}

/** Terminates the plan workflow if it still runs (clean-up only). */
export async function terminateIfRunning(client: Client, workflowId: string): Promise<void> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    if (d.status.name === 'RUNNING')
      await client.workflow.getHandle(workflowId).terminate('benchmark clean-up');
  } catch {
    // gone or never started
  }
}
