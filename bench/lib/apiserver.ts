/**
 * The API server's own request counters: `apiserver_request_total` from GET /metrics (admin
 * kubeconfig, through the stack's kubectl), and deltas of the figures the bench reports.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { kubectlPath } from '../../test/helpers/binaries.js';

const run = promisify(execFile);

/** One sample of apiserver_request_total: label set → value. */
export type RequestCounters = { labels: Record<string, string>; value: number }[];

/** Scrapes /metrics and keeps the apiserver_request_total and apiserver_request_duration_seconds sum/count series. */
export async function scrapeRequestCounters(): Promise<RequestCounters> {
  const { stdout } = await run(kubectlPath(), ['get', '--raw', '/metrics'], {
    env: process.env,
    maxBuffer: 256 * 1024 * 1024,
  });
  const out: RequestCounters = [];
  for (const line of stdout.split('\n')) {
    const m =
      /^(apiserver_request_total|apiserver_request_duration_seconds_sum|apiserver_request_duration_seconds_count)\{(.*)\} (\S+)$/.exec(
        line,
      );
    if (!m) continue;
    const labels: Record<string, string> = { __name__: m[1]! };
    for (const l of m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

function sum(c: RequestCounters, pred: (l: Record<string, string>) => boolean): number {
  return c.filter((s) => pred(s.labels)).reduce((a, s) => a + s.value, 0);
}

/** Figures over one run, from two samples. */
export interface ApiFigures {
  /** POST pods/eviction by answer. */
  evictions: { total: number; c201: number; c429: number; other: number };
  /** Writes (PUT, PATCH, APPLY) to maintenanceplans/status: all answers, and 409 conflicts among them. */
  statusWrites: { total: number; conflicts: number };
  /** Every request the API server answered during the run, all clients (context only). */
  requestsAll: number;
  /** Mean time the API server took to answer an eviction call during the run, ms. */
  evictionLatencyMs?: number;
}

const TOTAL = 'apiserver_request_total';
const isEviction = (l: Record<string, string>) =>
  l.__name__ === TOTAL &&
  l.resource === 'pods' &&
  l.subresource === 'eviction' &&
  ['POST', 'CREATE'].includes((l.verb ?? '').toUpperCase());
const isStatusWrite = (l: Record<string, string>) =>
  l.__name__ === TOTAL &&
  l.resource === 'maintenanceplans' &&
  l.subresource === 'status' &&
  ['PUT', 'PATCH', 'APPLY', 'UPDATE'].includes((l.verb ?? '').toUpperCase());

/** Deltas between `before` and `after`. */
export function apiFigures(before: RequestCounters, after: RequestCounters): ApiFigures {
  const d = (pred: (l: Record<string, string>) => boolean) => sum(after, pred) - sum(before, pred);
  const total = d(isEviction);
  const c201 = d((l) => isEviction(l) && l.code === '201');
  const c429 = d((l) => isEviction(l) && l.code === '429');
  const evictionSeries = (name: string) => (l: Record<string, string>) =>
    l.__name__ === name && l.resource === 'pods' && l.subresource === 'eviction';
  const durSum = d(evictionSeries('apiserver_request_duration_seconds_sum'));
  const durCount = d(evictionSeries('apiserver_request_duration_seconds_count'));
  return {
    evictions: { total, c201, c429, other: total - c201 - c429 },
    statusWrites: { total: d(isStatusWrite), conflicts: d((l) => isStatusWrite(l) && l.code === '409') },
    requestsAll: d((l) => l.__name__ === TOTAL),
    ...(durCount > 0 ? { evictionLatencyMs: Math.round((durSum / durCount) * 1000) } : {}),
  };
}
