/**
 * Requests of the tool under test, from the API server's own audit log.
 *
 * `apiserver_request_total` has no client label, and on the local stack every component (controllers,
 * scheduler, kwok, the bench, tests) uses the same admin certificate. So the bench runs the tool under
 * test with a client certificate of its own (`stack.sh` makes them: user `bench-drainflow` for the
 * drainflow process, `bench-kubectl` for the `kubectl drain`/`kubectl cordon` processes), and the API
 * server logs the requests of these two users, and only those, at Metadata level
 * (scripts/stack/audit-policy.yaml). A run counts the events of its tool's user whose
 * `requestReceivedTimestamp` falls in the run's window, each `auditID` once (a watch logs
 * ResponseStarted and, when it ends, ResponseComplete).
 */
import { execFile } from 'node:child_process';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { kubectlPath } from '../../test/helpers/binaries.js';
import { sleep } from './util.js';

const run = promisify(execFile);

export const AUDIT_USERS = { drainflow: 'bench-drainflow', kubectl: 'bench-kubectl' } as const;

/** Where the audit log and the tool's kubeconfigs are (`stack.sh env`). */
export interface AuditSetup {
  logFile: string;
  kubeconfig: { drainflow: string; kubectl: string };
}

/** Requests of one client during one run. */
export interface ClientRequests {
  /** The audit user counted. */
  user: string;
  /** Every request (all verbs, resource and non-resource). */
  total: number;
  /** By category (see {@link category}). */
  byCategory: Record<string, number>;
  /** By `verb resource[/subresource]` (non-resource: `verb /path`), most frequent first. */
  byVerbResource: Record<string, number>;
  /** By answer code (watches still open: the code of ResponseStarted). */
  byCode: Record<string, number>;
}

/** The categories of the report, in order. */
export const CATEGORIES = [
  'evictions',
  'list',
  'watch',
  'get',
  'patch',
  'status writes',
  'events',
  'other',
] as const;

/**
 * The category of a request: evictions (create pods/eviction), status writes (update/patch of any
 * `…/status` subresource), events (any verb on events, core or events.k8s.io), other for
 * non-resource requests (discovery: `get /api`, `/apis`, …), else the verb when it is list, watch, get
 * or patch, else other (create, update, delete).
 */
export function category(verb: string, resource?: string, subresource?: string): string {
  if (!resource) return 'other';
  if (resource === 'pods' && subresource === 'eviction') return 'evictions';
  if (subresource === 'status' && (verb === 'update' || verb === 'patch')) return 'status writes';
  if (resource === 'events') return 'events';
  if (verb === 'list' || verb === 'watch' || verb === 'get' || verb === 'patch') return verb;
  return 'other';
}

/** `stack.sh env` gives the paths; undefined when the stack is older than the audit log. */
export function auditSetup(): AuditSetup | undefined {
  const logFile = process.env.DRAINFLOW_AUDIT_LOG;
  const df = process.env.DRAINFLOW_BENCH_KUBECONFIG_DRAINFLOW;
  const kc = process.env.DRAINFLOW_BENCH_KUBECONFIG_KUBECTL;
  if (!logFile || !df || !kc || !existsSync(df) || !existsSync(kc)) return undefined;
  return { logFile, kubeconfig: { drainflow: df, kubectl: kc } };
}

interface AuditEvent {
  auditID?: string;
  stage?: string;
  verb?: string;
  requestURI?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
}

/** The audit files of the log, oldest first (lumberjack renames `audit.log` to `audit-<time>.log`). */
function auditFiles(logFile: string): string[] {
  const dir = dirname(logFile);
  if (!existsSync(dir)) return [];
  const base = basename(logFile).replace(/\.log$/, '');
  const rotated = readdirSync(dir)
    .filter((f) => f.startsWith(`${base}-`) && f.endsWith('.log'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
  return [...rotated, ...(existsSync(logFile) ? [logFile] : [])];
}

/** A position in the audit log, taken before a run, so only what was written after it is read. */
export interface AuditMark {
  ino: number;
  size: number;
  atMs: number;
}

export function auditMark(setup: AuditSetup): AuditMark {
  const st = existsSync(setup.logFile) ? statSync(setup.logFile) : undefined;
  return { ino: st?.ino ?? -1, size: st?.size ?? 0, atMs: Date.now() };
}

async function readEvents(file: string, start: number, onEvent: (e: AuditEvent) => void): Promise<void> {
  const rl = createInterface({ input: createReadStream(file, { start }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.includes('"bench-')) continue;
    try {
      onEvent(JSON.parse(line) as AuditEvent);
    } catch {
      // a line cut by rotation
    }
  }
}

/**
 * The requests of `user` received in [fromMs, toMs], read from the log since `mark` (when the log
 * rotated since, the rotated files written after the mark are read whole).
 */
export async function clientRequests(
  setup: AuditSetup,
  mark: AuditMark,
  user: string,
  fromMs: number,
  toMs: number,
): Promise<ClientRequests> {
  // The log backend writes each event before the answer is sent; a short pause covers the last ones.
  await sleep(500);
  const seen = new Map<string, AuditEvent>();
  const onEvent = (e: AuditEvent) => {
    if (e.user?.username !== user || !e.auditID || !e.requestReceivedTimestamp) return;
    const t = Date.parse(e.requestReceivedTimestamp);
    if (t < fromMs || t > toMs) return;
    const prev = seen.get(e.auditID);
    if (!prev || e.stage === 'ResponseComplete') seen.set(e.auditID, e);
  };
  for (const f of auditFiles(setup.logFile)) {
    const st = statSync(f);
    if (st.ino === mark.ino) await readEvents(f, Math.min(mark.size, st.size), onEvent);
    else if (st.mtimeMs >= mark.atMs) await readEvents(f, 0, onEvent);
  }
  const out: ClientRequests = { user, total: 0, byCategory: {}, byVerbResource: {}, byCode: {} };
  for (const c of CATEGORIES) out.byCategory[c] = 0;
  for (const e of seen.values()) {
    const verb = e.verb ?? '?';
    const res = e.objectRef?.resource;
    const sub = e.objectRef?.subresource;
    const key = res
      ? `${verb} ${res}${sub ? `/${sub}` : ''}`
      : `${verb} ${(e.requestURI ?? '?').split('?')[0]}`;
    out.total++;
    const cat = category(verb, res, sub);
    out.byCategory[cat] = (out.byCategory[cat] ?? 0) + 1;
    out.byVerbResource[key] = (out.byVerbResource[key] ?? 0) + 1;
    const code = String(e.responseStatus?.code ?? '?');
    out.byCode[code] = (out.byCode[code] ?? 0) + 1;
  }
  out.byVerbResource = Object.fromEntries(Object.entries(out.byVerbResource).sort((a, b) => b[1] - a[1]));
  return out;
}

/**
 * Whether the API server logs the bench users: one request as `bench-kubectl` (GET /version), then it
 * must appear in the log within 3 s. False on a stack whose kube-apiserver was started without the
 * audit flags (restart the stack to get them).
 */
export async function auditWorks(setup: AuditSetup): Promise<boolean> {
  const mark = auditMark(setup);
  const from = Date.now() - 1000;
  try {
    await run(kubectlPath(), ['--kubeconfig', setup.kubeconfig.kubectl, 'get', '--raw', '/version'], {
      env: process.env,
    });
  } catch {
    return false;
  }
  for (let i = 0; i < 6; i++) {
    const r = await clientRequests(setup, mark, AUDIT_USERS.kubectl, from, Date.now() + 1000);
    if (r.total > 0) return true;
  }
  return false;
}
