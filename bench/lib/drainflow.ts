/**
 * The drainflow side of a run: a fresh `drainflow run` child process (compiled dist or through tsx,
 * see {@link DrainflowRuntime}; own task queue and ports, no leader election; `BENCH_DRAINFLOW_NODE_OPTIONS`
 * becomes its NODE_OPTIONS, `BENCH_DRAINFLOW_NODE_ARGS` goes on node's command line before the
 * script, see {@link nodeArgsOf}), one MaintenancePlan through it, and what it cost: peak RSS and CPU
 * seconds from /proc, Temporal history events of every run of the plan workflow and of its children.
 */
import { hopFigures, type HopFigures } from './hops.js';
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
 * Node command-line flags from `BENCH_DRAINFLOW_NODE_ARGS` (split at whitespace), placed before the
 * script as a container's `command` would place them: node refuses some V8 flags in NODE_OPTIONS
 * (`--optimize-for-size`, `--lite-mode`: "not allowed in NODE_OPTIONS"). Empty when unset.
 */
export function nodeArgsOf(value: string | undefined): string[] {
  return (value ?? '').split(/\s+/).filter((a) => a !== '');
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

/** Every drainflow child the bench started and has not seen exit (see {@link stopChildrenWithBench}). */
const liveChildren = new Set<ChildProcess>();
let childGuardInstalled = false;

/**
 * Makes the bench's drainflow processes end with the bench: on SIGINT, SIGTERM or SIGHUP to the bench
 * (Ctrl-C, `kill`, `pkill -f bench/run.ts`) each child gets SIGTERM (a graceful worker shutdown), up
 * to 5 s to stop, and the bench exits with 128 + the signal's number; at any exit the children still
 * running get SIGKILL.
 * Without it a killed bench left its operator and worker running, and a leftover operator (its plan
 * selector matches every bench plan) ran a later bench's plan. Installed once.
 */
function stopChildrenWithBench(): void {
  if (childGuardInstalled) return;
  childGuardInstalled = true;
  process.once('exit', () => {
    for (const child of liveChildren) child.kill('SIGKILL');
  });
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    process.once(signal, () => {
      for (const child of liveChildren) child.kill('SIGTERM');
      // Up to 5 s for them to stop; then the exit handler kills what is left.
      const deadline = Date.now() + 5000;
      const poll = setInterval(() => {
        if (liveChildren.size > 0 && Date.now() < deadline) return;
        clearInterval(poll);
        process.exit(code);
      }, 100);
    });
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
    /** Kubeconfig of the processes (the bench's own user `bench-drainflow`); default $KUBECONFIG. */
    kubeconfig?: string,
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
          ...nodeArgsOf(process.env.BENCH_DRAINFLOW_NODE_ARGS),
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
            ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
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
        liveChildren.add(child);
        stopChildrenWithBench();
        child.once('exit', () => {
          part.exited = true;
          liveChildren.delete(child);
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
  /** Called with each plan read (every 100 ms), e.g. to note its status at a moment of the drain. */
  onRead: (plan: MaintenancePlan) => void = () => undefined,
): Promise<{ plan: MaintenancePlan; doneAtMs: number }> {
  const deadline = Date.now() + timeoutMs;
  let lastPhase: string | undefined;
  for (;;) {
    const plan = await readPlan(c, name).catch(() => undefined);
    if (plan) onRead(plan);
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

/** History figures of a plan: every run of the plan workflow and of every node workflow it started. */
export interface HistoryFigures {
  /** Workflow IDs (plan + node workflows). */
  workflows: number;
  /** Runs over all those IDs (a chain of continue-as-new runs counts each run); absent in old results. */
  runs?: number;
  /** Runs of the plan workflow. */
  planRuns?: number;
  /** Events of every run of every workflow. */
  events: number;
  /** Events of every run of the plan workflow. */
  planEvents: number;
  /** Events by type over all the runs, most frequent first. */
  byType: Record<string, number>;
  /** Task queue the plan workflow ran on (must be the bench's own). */
  taskQueue?: string;
  /** Where a PDB round's time goes (./hops.ts); absent in old results. */
  hops?: HopFigures;
  /** Runs found only by the visibility query or only by following the chains (should both be 0). */
  onlyInVisibility?: number;
  onlyInChains?: number;
}

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/**
 * Every run of `workflowId`, newest first, by following the chain back: a run started by
 * continue-as-new names its predecessor in WorkflowExecutionStarted (`continuedExecutionRunId`).
 */
async function chainRuns(client: Client, workflowId: string): Promise<Map<string, HistoryEvent[]>> {
  const out = new Map<string, HistoryEvent[]>();
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId && !out.has(runId)) {
    const h: proto.temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: HistoryEvent[] = h.events ?? [];
    out.set(runId, events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return out;
}

/**
 * Every run of the plan's workflows, as (workflow ID, run ID), from the visibility store (closed runs
 * included): the plan workflow and the node workflows (ID `<plan workflow>-node-<node>`).
 */
async function visibilityRuns(client: Client, workflowId: string): Promise<Set<string> | undefined> {
  const q = `WorkflowId = '${workflowId}' OR WorkflowId STARTS_WITH '${workflowId}-node-'`;
  const out = new Set<string>();
  try {
    for await (const w of client.workflow.list({ query: q })) out.add(`${w.workflowId}\u0000${w.runId}`);
  } catch {
    return undefined;
  }
  return out;
}

/**
 * Fetches the history of every run of the plan workflow `workflowId` (it continues as new) and of every
 * run of every child workflow any of its runs started (they continue as new too), and counts their
 * events. Runs are found by following each chain back from its newest run, and by a visibility query
 * over the workflow IDs; both sets are merged (and compared: `onlyInVisibility`, `onlyInChains`).
 */
export async function historyFigures(client: Client, workflowId: string): Promise<HistoryFigures> {
  const byType: Record<string, number> = {};
  const count = (events: HistoryEvent[]) => {
    for (const ev of events) {
      const name = proto.temporal.api.enums.v1.EventType[ev.eventType ?? 0] ?? String(ev.eventType);
      const key = name.replace(/^EVENT_TYPE_/, '');
      byType[key] = (byType[key] ?? 0) + 1;
    }
  };
  const runs = new Map<string, HistoryEvent[]>(); // "<workflowId>\0<runId>" -> events
  const planChain = await chainRuns(client, workflowId);
  const children = new Set<string>();
  for (const [runId, events] of planChain) {
    runs.set(`${workflowId}\u0000${runId}`, events);
    for (const ev of events) {
      const id = ev.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
      if (id) children.add(id);
    }
  }
  // The oldest run is the one the operator started.
  const first = [...planChain.values()].at(-1) ?? [];
  const taskQueue = first[0]?.workflowExecutionStartedEventAttributes?.taskQueue?.name ?? undefined;
  for (const id of children) {
    for (const [runId, events] of await chainRuns(client, id)) runs.set(`${id}\u0000${runId}`, events);
  }
  const fromChains = new Set(runs.keys());
  const visible = await visibilityRuns(client, workflowId);
  let onlyInVisibility = 0;
  for (const key of visible ?? []) {
    if (runs.has(key)) continue;
    onlyInVisibility++;
    const [id, runId] = key.split('\u0000') as [string, string];
    runs.set(key, (await client.workflow.getHandle(id, runId).fetchHistory()).events ?? []);
  }
  const onlyInChains = visible ? [...fromChains].filter((k) => !visible.has(k)).length : 0;
  let events = 0;
  let planEvents = 0;
  let planRuns = 0;
  const ids = new Set<string>();
  for (const [key, evs] of runs) {
    const id = key.split('\u0000')[0]!;
    ids.add(id);
    events += evs.length;
    if (id === workflowId) {
      planEvents += evs.length;
      planRuns++;
    }
    count(evs);
  }
  const sorted = Object.fromEntries(Object.entries(byType).sort((a, b) => b[1] - a[1]));
  const byId = new Map<string, HistoryEvent[][]>();
  for (const [key, evs] of runs) {
    const id = key.split('\u0000')[0]!;
    byId.set(id, [...(byId.get(id) ?? []), evs]);
  }
  return {
    workflows: ids.size,
    runs: runs.size,
    planRuns,
    events,
    planEvents,
    byType: sorted,
    hops: hopFigures(workflowId, byId),
    ...(taskQueue ? { taskQueue } : {}),
    ...(visible ? { onlyInVisibility, onlyInChains } : {}),
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
