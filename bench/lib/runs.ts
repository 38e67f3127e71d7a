/**
 * One measured run: build the workload, drain the targets with one tool, collect the figures, clean up.
 * See bench/README.md for what each figure means.
 */
import type { Client } from '@temporalio/client';
import { uniqueName, type Clients } from '../../test/helpers/k8s.js';
import { podsOnTargets, type Scenario } from '../scenarios.js';
import { apiFigures, scrapeRequestCounters, type ApiFigures } from './apiserver.js';
import { sampleStack, stackFigures, type StackFigures } from './stack-side.js';
import {
  AUDIT_USERS,
  auditMark,
  clientRequests,
  type AuditMark,
  type AuditSetup,
  type ClientRequests,
} from './audit.js';
import {
  DrainflowProcesses,
  type DrainflowRuntime,
  createPlan,
  deletePlan,
  historyFigures,
  terminateIfRunning,
  waitPlanDone,
  type HistoryFigures,
  type ProcFigures,
} from './drainflow.js';
import { kubectlDrain, type KubectlNodeResult } from './kubectl.js';
import { log, round, sleep } from './util.js';
import { buildWorkload, podsLeftOnTargets, teardown, type Workload } from './workload.js';

export type Tool = 'drainflow' | 'kubectl';

/** Resource figures of the drain process(es): peak RSS (MiB) and CPU seconds during the drain. */
export interface ProcessFigures {
  /** Per process: drainflow `operator+worker` (or `operator` and `worker`), or kubectl's max/sum over its processes. */
  parts: Record<string, { peakRssMb: number; cpuSeconds: number; peakRssStartupMb?: number }>;
  /** Largest peak RSS of any one process during the drain. */
  peakRssMb: number;
  /** CPU seconds of all the tool's processes during the drain. */
  cpuSeconds: number;
  /** Whether the peak was reset after start-up (drainflow): false means it includes start-up. */
  peakReset?: boolean;
}

export interface RunResult {
  tool: Tool;
  rep: number;
  maxConcurrentPerNode?: number;
  /** How drainflow ran (compiled dist or tsx); absent in runs made before the option existed (tsx). */
  runtime?: DrainflowRuntime;
  /**
   * Memory settings drainflow ran with, when set: BENCH_DRAINFLOW_NODE_OPTIONS, MALLOC_ARENA_MAX and
   * the node command-line flags of BENCH_DRAINFLOW_NODE_ARGS.
   */
  memorySettings?: { nodeOptions?: string; mallocArenaMax?: string; nodeArgs?: string };
  /** When the targets were cordoned (drainflow spec.cordon; kubectl: `kubectl cordon` first). */
  cordon?: 'PerNode' | 'AllAtStart';
  ok: boolean;
  error?: string;
  /** The run measured something else than intended (another operator ran the plan): repeated by the bench. */
  invalid?: boolean;
  startedAt: string;
  podsOnTargets: number;
  /** The deadline: plan drainTimeoutSeconds, kubectl drain --timeout (absent in old runs). */
  timeoutSeconds?: number;
  podsPerTarget?: { min: number; max: number };
  setupSeconds?: number;
  /** Start (plan created / first kubectl spawned) to done (plan phase Drained seen / last kubectl exited). */
  wallSeconds?: number;
  /** Start to the last pod bound to a target disappearing (pod watch of the bench). */
  podsGoneSeconds?: number;
  /** Pods deleted from the targets during the run (pod watch). */
  evictedPods?: number;
  api?: ApiFigures;
  evictionsPerPod?: number;
  c429PerPod?: number;
  history?: HistoryFigures;
  historyEventsPerPod?: number;
  /**
   * Requests the tool sent (its own user in the API server's audit log), all verbs, from the scrape
   * before the start to the scrape after the end. Absent when the stack has no audit log, and in runs
   * made before the figure existed.
   */
  requests?: ClientRequests;
  /** requests.total / evictedPods. */
  requestsPerPod?: number;
  /** Minutes from the start to the end (wallSeconds / 60): the denominator of the per-minute figures. */
  minutes?: number;
  /** requests.total / minutes. */
  requestsPerMinute?: number;
  /** history.events / minutes (drainflow). */
  historyEventsPerMinute?: number;
  /** Eviction calls the tool sent (audit log) per minute; without the audit log, the API server's count. */
  evictionsPerMinute?: number;
  /** Status writes of the plan (one plan per run). */
  statusWrites?: number;
  /**
   * drainflow: the plan's status.estimatedCompletion as read when half the pods had left the
   * targets (the bench's pod watch), against the real end (plan Drained seen). Seconds from the
   * start; `errorPercent` = |estimate − end| / (end − half-way) × 100; absent figures: the status
   * had no estimate then.
   */
  eta?: {
    halfAtSeconds: number;
    estimatedEndSeconds?: number;
    endSeconds: number;
    errorPercent?: number;
  };
  /** What the run cost the stack: Temporal frontend requests, CPU seconds per stack process. */
  stack?: StackFigures;
  /** stack.temporalRequests.total / evictedPods. */
  temporalRequestsPerPod?: number;
  /** Activity heartbeats the Temporal frontend received (RecordActivityTaskHeartbeat) per evicted pod. */
  heartbeatsPerPod?: number;
  process?: ProcessFigures;
  /** The tool's own count: drainflow status.evictionProgress, kubectl output lines. */
  toolCounts?: { attempts: number; tooManyRequests: number };
  planPhase?: string;
  kubectlNodes?: KubectlNodeResult[];
  warnings: string[];
}

export interface RunOptions {
  logDir: string;
  split: boolean;
  maxConcurrentPerNode?: number;
  /** How drainflow runs [dist]. */
  runtime?: DrainflowRuntime;
  /** Overrides the scenario's cordon policy. */
  cordon?: 'PerNode' | 'AllAtStart';
  /** The API server's audit log and the tools' own kubeconfigs; without it no per-client requests. */
  audit?: AuditSetup;
}

function derive(r: RunResult, blocked: boolean): void {
  const pods = r.evictedPods;
  if (r.api && pods) {
    r.evictionsPerPod = round(r.api.evictions.total / pods, 3);
    r.c429PerPod = round(r.api.evictions.c429 / pods, 3);
  }
  if (r.history && pods) r.historyEventsPerPod = round(r.history.events / pods, 1);
  if (r.requests && pods) r.requestsPerPod = round(r.requests.total / pods, 3);
  const tr = r.stack?.temporalRequests;
  if (tr && pods && r.tool === 'drainflow') {
    r.temporalRequestsPerPod = round(tr.total / pods, 2);
    r.heartbeatsPerPod = round((tr.byOperation.RecordActivityTaskHeartbeat ?? 0) / pods, 3);
  }
  if (blocked && r.wallSeconds) {
    const minutes = r.wallSeconds / 60;
    r.minutes = round(minutes, 2);
    if (r.requests) r.requestsPerMinute = round(r.requests.total / minutes, 1);
    if (r.history) r.historyEventsPerMinute = round(r.history.events / minutes, 1);
    const ev = r.requests ? r.requests.byCategory.evictions : r.api?.evictions.total;
    if (ev !== undefined) r.evictionsPerMinute = round(ev / minutes, 1);
  }
  if (r.requests && r.api && r.api.evictions.total !== r.requests.byCategory.evictions) {
    r.warnings.push(
      `API server counted ${r.api.evictions.total} eviction calls, ${r.requests.byCategory.evictions} of them by ${r.requests.user} (audit log): the others came from other clients`,
    );
  }
  // In `blocked`, kubectl prints "evicting pod" before each attempt and its timeout cuts the last
  // attempt of every pod off before it reaches the API server: its count is one per pod too high.
  const toolCountComparable = !(blocked && r.tool === 'kubectl');
  if (toolCountComparable && r.api && r.toolCounts && r.api.evictions.total !== r.toolCounts.attempts) {
    r.warnings.push(
      `API server counted ${r.api.evictions.total} eviction calls, the tool reports ${r.toolCounts.attempts}: another client may have evicted pods during the run`,
    );
  }
  if (r.evictedPods !== undefined && r.evictedPods !== (blocked ? 0 : r.podsOnTargets)) {
    r.warnings.push(
      `${r.evictedPods} pods left the targets, ${r.podsOnTargets} were there at the start (pods landed on not-yet-cordoned targets?)`,
    );
  }
}

/**
 * {@link runOnce}, repeated (up to `attempts` times in all) while the result is invalid because another
 * drainflow operator on the same cluster took the plan; the discarded attempts are counted in the result.
 */
export async function runValid(
  c: Clients,
  client: Client,
  s: Scenario,
  tool: Tool,
  rep: number,
  opts: RunOptions,
  attempts = 3,
): Promise<RunResult> {
  let r = await runOnce(c, client, s, tool, rep, opts);
  for (let i = 1; i < attempts && r.invalid; i++) {
    log(`${s.name} #${rep} ${tool}: another operator ran the plan; repeating the run`);
    const again = await runOnce(c, client, s, tool, rep, opts);
    again.warnings.unshift(
      `${i} earlier attempt(s) discarded: another drainflow operator on the cluster ran the plan`,
    );
    r = again;
  }
  return r;
}

/**
 * The estimate figures of a run ({@link RunResult.eta}): `half` when half the pods were gone and
 * the status.estimatedCompletion read then, `t0` the start, `endMs` the end (ms since epoch).
 */
export function etaFigures(
  t0: number,
  half: { atMs: number; estimate?: string },
  endMs: number,
): NonNullable<RunResult['eta']> {
  const est = half.estimate !== undefined ? Date.parse(half.estimate) : undefined;
  const left = endMs - half.atMs;
  return {
    halfAtSeconds: round((half.atMs - t0) / 1000, 2)!,
    endSeconds: round((endMs - t0) / 1000, 2)!,
    ...(est !== undefined && !Number.isNaN(est)
      ? {
          estimatedEndSeconds: round((est - t0) / 1000, 2)!,
          ...(left > 0 ? { errorPercent: round((Math.abs(est - endMs) / left) * 100, 1)! } : {}),
        }
      : {}),
  };
}

/** Runs one drain of `s` with `tool`. Never throws: failures are recorded in the result. */
export async function runOnce(
  c: Clients,
  client: Client,
  s: Scenario,
  tool: Tool,
  rep: number,
  opts: RunOptions,
): Promise<RunResult> {
  const cordon = opts.cordon ?? s.cordon ?? 'PerNode';
  const r: RunResult = {
    tool,
    rep,
    ...(tool === 'drainflow' ? { maxConcurrentPerNode: opts.maxConcurrentPerNode ?? 4 } : {}),
    cordon,
    ok: false,
    startedAt: new Date().toISOString(),
    podsOnTargets: podsOnTargets(s),
    timeoutSeconds: s.timeoutSeconds,
    warnings: [],
  };
  let w: Workload | undefined;
  let procs: DrainflowProcesses | undefined;
  let planName: string | undefined;
  let workflowId: string | undefined;
  const audit = opts.audit;
  let mark: AuditMark | undefined;
  let fromMs = 0;
  /** The tool's requests in [fromMs, toMs] (audit log), when the stack has one. */
  const requestsOf = async (user: string, toMs: number) =>
    audit && mark ? clientRequests(audit, mark, user, fromMs, toMs) : undefined;
  try {
    log(`${s.name} #${rep} ${tool}: building the workload`);
    w = await buildWorkload(c, s);
    r.podsPerTarget = w.podsPerTarget;
    r.setupSeconds = round(w.setupSeconds, 1);
    log(
      `${s.name} #${rep} ${tool}: workload ready in ${r.setupSeconds} s (${r.podsOnTargets} pods on ${s.targets} target(s), ${w.podsPerTarget.min}-${w.podsPerTarget.max} per target)`,
    );

    if (tool === 'drainflow') {
      procs = await DrainflowProcesses.start(
        opts.logDir,
        opts.split,
        opts.runtime ?? 'dist',
        audit?.kubeconfig.drainflow,
      );
      r.runtime = opts.runtime ?? 'dist';
      const {
        BENCH_DRAINFLOW_NODE_OPTIONS: nodeOptions,
        MALLOC_ARENA_MAX: mallocArenaMax,
        BENCH_DRAINFLOW_NODE_ARGS: nodeArgs,
      } = process.env;
      if (nodeOptions || mallocArenaMax)
        r.memorySettings = {
          ...(nodeOptions ? { nodeOptions } : {}),
          ...(mallocArenaMax ? { mallocArenaMax } : {}),
          ...(nodeArgs?.trim() ? { nodeArgs: nodeArgs.trim() } : {}),
        };
      else
        // Peak RSS without them is V8's and glibc's default behaviour, not the deployed worker's
        // (bench/notes.md: fleet 593-708 MiB without, about 300 with).
        r.warnings.push(
          'drainflow ran without the memory settings of deploy/base/worker.yaml: set BENCH_DRAINFLOW_NODE_OPTIONS and MALLOC_ARENA_MAX to compare peak RSS',
        );
      await sleep(2000);
      const startup = procs.proc();
      const reset = procs.resetPeaks();
      const base = procs.proc();
      if (audit) mark = auditMark(audit);
      fromMs = Date.now();
      const before = await scrapeRequestCounters();
      const stackBefore = await sampleStack();
      w.observer.record(w.targets);
      planName = uniqueName(`bench-${s.name}`);
      const spec: Record<string, unknown> = {
        nodeNames: w.targets,
        maxUnavailableNodes: s.maxUnavailableNodes,
        drainTimeoutSeconds: s.timeoutSeconds,
        podSelection: { ignoreDaemonSets: true, deleteEmptyDirData: true },
        cordon,
        ...(opts.maxConcurrentPerNode !== undefined
          ? { eviction: { maxConcurrentPerNode: opts.maxConcurrentPerNode } }
          : {}),
      };
      log(`${s.name} #${rep} drainflow: plan ${planName} (task queue ${procs.taskQueue})`);
      const t0 = Date.now();
      await createPlan(c, planName, spec);
      // The estimate at half-way: the status read once half the pods have left the targets.
      const halfPods = Math.ceil(r.podsOnTargets / 2);
      let half: { atMs: number; estimate?: string } | undefined;
      const { plan, doneAtMs } = await waitPlanDone(
        c,
        planName,
        (s.timeoutSeconds + 120) * 1000,
        procs,
        (p) => {
          if (half || s.blocked || w!.observer.recorded().deleted < halfPods) return;
          const estimate = p.status?.estimatedCompletion;
          half = { atMs: Date.now(), ...(estimate ? { estimate } : {}) };
        },
      );
      r.wallSeconds = round((doneAtMs - t0) / 1000, 2);
      if (half) r.eta = etaFigures(t0, half, doneAtMs);
      if (half && !half.estimate)
        r.warnings.push('the plan had no status.estimatedCompletion when half the pods were gone');
      r.planPhase = plan.status?.phase;
      workflowId = plan.status?.workflow?.workflowId;
      await sleep(2000);
      const after = await scrapeRequestCounters();
      r.stack = stackFigures(stackBefore, await sampleStack());
      const toMs = Date.now();
      const end = procs.proc();
      r.api = apiFigures(before, after);
      const req = await requestsOf(AUDIT_USERS.drainflow, toMs);
      if (req) r.requests = req;
      r.statusWrites = r.api.statusWrites.total;
      const rec = w.observer.recorded();
      r.evictedPods = rec.deleted;
      if (rec.lastDeletedAtMs) r.podsGoneSeconds = round((rec.lastDeletedAtMs - t0) / 1000, 2);
      const ep = plan.status?.evictionProgress;
      if (ep) r.toolCounts = { attempts: ep.attempts, tooManyRequests: ep.tooManyRequests };
      const parts: ProcessFigures['parts'] = {};
      for (const [role, f] of Object.entries(end)) {
        const b = base[role] as ProcFigures;
        parts[role] = {
          peakRssMb: round(f.peakRssMb, 1)!,
          cpuSeconds: round(f.cpuSeconds - b.cpuSeconds, 2)!,
          peakRssStartupMb: round(startup[role]?.peakRssMb, 1)!,
        };
      }
      r.process = {
        parts,
        peakRssMb: Math.max(...Object.values(parts).map((p) => p.peakRssMb)),
        cpuSeconds: round(
          Object.values(parts).reduce((a, p) => a + p.cpuSeconds, 0),
          2,
        )!,
        peakReset: reset,
      };
      if (workflowId) {
        r.history = await historyFigures(client, workflowId);
        if (r.history.taskQueue && r.history.taskQueue !== procs.taskQueue) {
          r.invalid = true;
          r.warnings.push(
            `the plan workflow ran on task queue ${r.history.taskQueue}, not the bench's ${procs.taskQueue}: another operator picked the plan up`,
          );
        }
      } else {
        r.warnings.push('plan status has no workflow reference: history not counted');
      }
      r.ok =
        (s.blocked
          ? r.planPhase === 'Blocked' && plan.status?.reason === 'DeadlineExceeded'
          : r.planPhase === 'Drained') && !r.invalid;
      if (r.invalid) r.error = 'another drainflow operator on the cluster ran the plan';
      else if (!r.ok)
        r.error =
          `plan ended ${r.planPhase}: ${plan.status?.reason ?? ''} ${plan.status?.message ?? ''}`.trim();
    } else {
      await sleep(2000);
      if (audit) mark = auditMark(audit);
      fromMs = Date.now();
      const before = await scrapeRequestCounters();
      const stackBefore = await sampleStack();
      w.observer.record(w.targets);
      const res = await kubectlDrain(
        w.targets,
        s.maxUnavailableNodes,
        s.timeoutSeconds,
        opts.logDir,
        cordon === 'AllAtStart',
        audit?.kubeconfig.kubectl,
      );
      r.wallSeconds = round((res.endMs - res.startMs) / 1000, 2);
      await sleep(2000);
      const after = await scrapeRequestCounters();
      r.stack = stackFigures(stackBefore, await sampleStack());
      r.api = apiFigures(before, after);
      const req = await requestsOf(AUDIT_USERS.kubectl, Date.now());
      if (req) r.requests = req;
      r.statusWrites = r.api.statusWrites.total;
      const rec = w.observer.recorded();
      r.evictedPods = rec.deleted;
      if (rec.lastDeletedAtMs) r.podsGoneSeconds = round((rec.lastDeletedAtMs - res.startMs) / 1000, 2);
      r.toolCounts = {
        attempts: res.nodes.reduce((a, n) => a + n.attempts, 0),
        tooManyRequests: res.nodes.reduce((a, n) => a + n.tooManyRequests, 0),
      };
      const rss = res.nodes.map((n) => n.peakRssMb ?? 0);
      const cpu = res.nodes.reduce((a, n) => a + (n.cpuSeconds ?? 0), 0);
      r.process = {
        parts: { kubectl: { peakRssMb: round(Math.max(...rss), 1)!, cpuSeconds: round(cpu, 2)! } },
        peakRssMb: round(Math.max(...rss), 1)!,
        cpuSeconds: round(cpu, 2)!,
      };
      r.kubectlNodes = res.nodes.filter((n) => n.exitCode !== 0);
      if (s.blocked) {
        // Every drain must give up at its --timeout (non-zero exit), none may succeed.
        r.ok = res.nodes.every((n) => n.exitCode !== 0 && n.exitCode !== null);
        if (!r.ok) r.error = 'a kubectl drain ended without hitting its timeout';
      } else {
        r.ok = res.ok;
        if (!r.ok) r.error = `kubectl drain failed on ${r.kubectlNodes.map((n) => n.node).join(', ')}`;
      }
    }
    const left = podsLeftOnTargets(w);
    if (s.blocked) {
      if (left !== r.podsOnTargets || (r.evictedPods ?? 0) > 0) {
        r.ok = false;
        r.error = `${r.error ? `${r.error}; ` : ''}${r.evictedPods ?? '?'} pod(s) left the targets, ${left} of ${r.podsOnTargets} still there (the PDBs allow no disruption)`;
      }
    } else if (left > 0) {
      r.ok = false;
      r.error = `${r.error ? `${r.error}; ` : ''}${left} pod(s) still on the targets`;
    }
    derive(r, Boolean(s.blocked));
    log(
      `${s.name} #${rep} ${tool}: ${r.ok ? 'ok' : `FAILED (${r.error})`} wall ${r.wallSeconds} s, evictions ${r.api?.evictions.total} ` +
        `(201: ${r.api?.evictions.c201}, 429: ${r.api?.evictions.c429}, other: ${r.api?.evictions.other}), pods ${r.evictedPods}` +
        (r.history ? `, history ${r.history.events} events in ${r.history.runs} runs` : '') +
        (r.requests
          ? `, ${r.requests.total} requests by ${r.requests.user} (${JSON.stringify(r.requests.byCategory)})`
          : '') +
        (r.process ? `, peak RSS ${r.process.peakRssMb} MiB, CPU ${r.process.cpuSeconds} s` : ''),
    );
    if (r.history?.hops && Object.keys(r.history.hops).length > 0)
      log(
        `  hops (median/p90 ms): ` +
          Object.entries(r.history.hops)
            .map(([k, f]) => `${k} ${f.medianMs}/${f.p90Ms} (${f.n})`)
            .join(', '),
      );
    for (const warning of r.warnings) log(`  warning: ${warning}`);
  } catch (err) {
    r.ok = false;
    r.error = err instanceof Error ? err.message : String(err);
    log(`${s.name} #${rep} ${tool}: FAILED: ${r.error}`);
  } finally {
    if (planName) {
      const byOperator = await deletePlan(c, planName).catch(() => false);
      if (!byOperator)
        r.warnings.push(
          'the operator did not remove the deleted plan within 60 s: finalizer stripped by the bench',
        );
    }
    if (workflowId) await terminateIfRunning(client, workflowId);
    if (procs) await procs.stop();
    if (w) await teardown(c, w).catch((err: unknown) => log(`teardown failed: ${String(err)}`));
  }
  return r;
}
