/**
 * The local stack's side of a run, as deltas between two samples: the Temporal dev server's own
 * request counters (`service_requests` of its frontend, by operation, from its Prometheus endpoint)
 * and the CPU time of each stack process (utime + stime from /proc of the pids the stack recorded
 * in its state directory). The host has two cores shared by the stack and the tool, so a tool's
 * wall time also depends on how much CPU it makes the stack spend.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** One sample: Temporal frontend requests by operation (absent when the endpoint did not answer), CPU seconds by stack process. */
export interface StackSample {
  temporalRequests?: Record<string, number>;
  cpuSeconds: Record<string, number>;
}

/** What a run cost the stack (deltas of two {@link StackSample}s). */
export interface StackFigures {
  /** Requests the Temporal frontend served in the bench's namespace, in all and by operation. */
  temporalRequests?: { total: number; byOperation: Record<string, number> };
  /** CPU seconds of each stack process (kube-apiserver, temporal, etcd, …) over the run. */
  cpuSeconds: Record<string, number>;
}

const STATE =
  process.env.DRAINFLOW_STATE ??
  join(process.env.DRAINFLOW_CACHE ?? join(homedir(), '.cache', 'drainflow'), 'stack');
const METRICS_PORT = process.env.DRAINFLOW_TEMPORAL_METRICS_PORT ?? '7253';
const NAMESPACE = process.env.TEMPORAL_NAMESPACE ?? 'default';

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime of `pid` in seconds, or undefined when it is gone. */
function cpuOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

async function temporalRequests(): Promise<Record<string, number> | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`)).text();
    const out: Record<string, number> = {};
    for (const line of text.split('\n')) {
      const m = /^service_requests\{(.*)\} (\S+)$/.exec(line);
      if (!m) continue;
      const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
      if (labels.service_name !== 'frontend' || labels.namespace !== NAMESPACE || !labels.operation) continue;
      out[labels.operation] = (out[labels.operation] ?? 0) + Number(m[2]);
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Samples the stack now. Never throws: what cannot be read is left out. */
export async function sampleStack(): Promise<StackSample> {
  const cpuSeconds: Record<string, number> = {};
  try {
    const run = join(STATE, 'run');
    for (const f of readdirSync(run)) {
      if (!f.endsWith('.pid')) continue;
      const cpu = cpuOf(readFileSync(join(run, f), 'utf8').trim());
      if (cpu !== undefined) cpuSeconds[f.slice(0, -4)] = cpu;
    }
  } catch {
    // no state directory: no CPU figures
  }
  const reqs = await temporalRequests();
  return { ...(reqs ? { temporalRequests: reqs } : {}), cpuSeconds };
}

/** Deltas from `before` to `after` (a process or operation missing from either is left out, or counted from 0). */
export function stackFigures(before: StackSample, after: StackSample): StackFigures {
  const cpuSeconds: Record<string, number> = {};
  for (const [name, s] of Object.entries(after.cpuSeconds)) {
    const b = before.cpuSeconds[name];
    if (b !== undefined && s >= b) cpuSeconds[name] = Math.round((s - b) * 100) / 100;
  }
  const out: StackFigures = { cpuSeconds };
  if (before.temporalRequests && after.temporalRequests) {
    const byOperation: Record<string, number> = {};
    let total = 0;
    for (const [op, n] of Object.entries(after.temporalRequests)) {
      const d = n - (before.temporalRequests[op] ?? 0);
      if (d > 0) {
        byOperation[op] = d;
        total += d;
      }
    }
    out.temporalRequests = { total, byOperation };
  }
  return out;
}
