/**
 * Whether a drainflow worker polls a Temporal task queue, from what Temporal shows of it: the
 * pollers of its workflow task queue (DescribeTaskQueue) and, when the server offers them, the
 * workers' own heartbeats (ListWorkers, DescribeWorker). One home for the check: the CLI's status
 * note and controls (src/cli/plans.ts), the demo (src/cli/demo.ts) and the operator's deletion wait
 * (src/operator) read it here. Everything but {@link taskQueueWorkers} is pure.
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

/**
 * A poller seen by Temporal within this long may be a running worker. Idle workers hold long
 * polls that the server ends after about 60 s and the SDK renews at once; Temporal's
 * DescribeTaskQueue gives each poller's last access time, the start of its last poll. So a live
 * worker's last poll is never older than this, and a worker that died (kill -9, crash) keeps
 * looking like a live one for up to this long; a stopped worker stays listed with an ever older
 * last poll.
 */
export const POLLER_FRESH_MS = 70_000;

/** Heartbeat interval assumed when the worker does not report its own (the SDK's default, 60 s). */
export const HEARTBEAT_INTERVAL_MS = 60_000;
/** A heartbeat later than its interval by more than this means the worker stopped reporting. */
export const HEARTBEAT_SLACK_MS = 15_000;

/** What a worker last reported of itself (Temporal's worker heartbeats: ListWorkers, DescribeWorker). */
export interface WorkerReport {
  /** `WORKER_STATUS_RUNNING`, `WORKER_STATUS_SHUTTING_DOWN`, `WORKER_STATUS_SHUTDOWN`, … */
  status: string;
  /** Age of the last heartbeat, ms; undefined when the server did not say. */
  heartbeatAgeMs?: number;
  /** Time between the worker's last two heartbeats, ms (its interval); undefined when unknown. */
  heartbeatIntervalMs?: number;
}

/** What Temporal knows of the workers of one task queue. */
export interface TaskQueueWorkers {
  /** Pollers of the workflow task queue (DescribeTaskQueue), newest first, with the age of their last poll's start. */
  pollers: { identity: string; ageMs: number }[];
  /**
   * Worker heartbeats by identity (the SDK reports its status every 60 s and when it stops);
   * undefined when the server does not offer ListWorkers.
   */
  workers?: Map<string, WorkerReport>;
}

const tsMs = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined =>
  t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : undefined;

/** Pollers and worker heartbeats of `taskQueue` (a few cheap calls, 3 s each at most). */
export async function taskQueueWorkers(
  client: Client,
  namespace: string,
  taskQueue: string,
): Promise<TaskQueueWorkers> {
  const { TaskQueueKind, TaskQueueType, WorkerStatus } = proto.temporal.api.enums.v1;
  const bounded = <T>(fn: () => Promise<T>) => client.connection.withDeadline(Date.now() + 3000, fn);
  const res = await bounded(() =>
    client.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    }),
  );
  const now = Date.now();
  const pollers = (res.pollers ?? [])
    .map((p) => ({ identity: p.identity ?? '?', ageMs: Math.max(0, now - (tsMs(p.lastAccessTime) ?? 0)) }))
    .sort((a, b) => a.ageMs - b.ageMs);
  const listed = await bounded(() =>
    client.workflowService.listWorkers({ namespace, query: `TaskQueue="${taskQueue}"` }),
  ).catch(() => undefined);
  if (!listed) return { pollers };
  const workers = new Map<string, WorkerReport>();
  const mine = (listed.workers ?? [])
    .filter((w) => w.taskQueue === taskQueue && w.workerIdentity)
    .slice(0, 10);
  await Promise.all(
    mine.map(async (w) => {
      const report: WorkerReport = { status: WorkerStatus[w.status ?? 0] ?? String(w.status) };
      // The heartbeat's own time is in the full record only (DescribeWorker).
      const hb = w.workerInstanceKey
        ? await bounded(() =>
            client.workflowService.describeWorker({ namespace, workerInstanceKey: w.workerInstanceKey! }),
          )
            .then((d) => d.workerInfo?.workerHeartbeat ?? undefined)
            .catch(() => undefined)
        : undefined;
      const at = tsMs(hb?.heartbeatTime);
      if (at !== undefined) report.heartbeatAgeMs = Math.max(0, now - at);
      const every = tsMs(hb?.elapsedSinceLastHeartbeat);
      if (every) report.heartbeatIntervalMs = every;
      workers.set(w.workerIdentity!, report);
    }),
  );
  return { pollers, workers };
}

/** Whether a worker's heartbeats stopped: the last is later than its interval plus {@link HEARTBEAT_SLACK_MS}. */
export function heartbeatStale(r: WorkerReport): boolean {
  return (
    r.heartbeatAgeMs !== undefined &&
    r.heartbeatAgeMs > (r.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS) + HEARTBEAT_SLACK_MS
  );
}

/**
 * The workers that may be serving the task queue: a recent poll, and (when the server lists
 * worker heartbeats) neither reported as shutting down or stopped nor silent past its heartbeat
 * interval.
 */
export function liveWorkers(w: TaskQueueWorkers): { identity: string; ageMs: number }[] {
  return w.pollers.filter((p) => {
    if (p.ageMs > POLLER_FRESH_MS) return false;
    const r = w.workers?.get(p.identity);
    return r === undefined || (r.status === 'WORKER_STATUS_RUNNING' && !heartbeatStale(r));
  });
}

/** `ms` as whole seconds, for a note: `95 s`. */
export const secs = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * What a worker's heartbeat says, for a note: `; its last heartbeat, 80 s ago, …` (empty without a
 * report). `polling`: whether the worker polls recently (a silent running worker may be stuck).
 */
export function heartbeatWords(r: WorkerReport | undefined, polling: boolean): string {
  if (!r) return '';
  const status = r.status.replace('WORKER_STATUS_', '').toLowerCase().replace('_', ' ');
  const ago = r.heartbeatAgeMs !== undefined ? `, ${secs(r.heartbeatAgeMs)} ago` : '';
  const every = secs(r.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS);
  const last = `; its last heartbeat${ago}`;
  if (r.status !== 'WORKER_STATUS_RUNNING') return `${last}${ago ? ',' : ''} said ${status}`;
  if (heartbeatStale(r))
    return `${last} (one is due every ${every}), still said running, so it stopped without shutting down (killed, crashed or cut off)`;
  return polling
    ? `${last}${ago ? ',' : ''} said running (one every ${every})`
    : `${last}${ago ? ',' : ''} says it runs, yet it has not polled since: it may be stuck`;
}

/**
 * The words for a task queue no live worker polls ({@link liveWorkers} is empty), pure: what
 * Temporal last saw of a poller (when it lists one: its last poll's age and identity, what its last
 * heartbeat said) and what to do — start a worker on the queue (`drainflow run --worker
 * --task-queue Q`) or find out why the workers stopped.
 * E.g. `no worker is polling task queue "q"; the last poll began 95 s ago, by w1: start one (drainflow run --worker --task-queue q) or find out why the workers stopped`.
 */
export function noWorkerWords(w: TaskQueueWorkers, taskQueue: string): string {
  const last = w.pollers[0];
  const was = last
    ? `; the last poll began ${secs(last.ageMs)} ago, by ${last.identity}${heartbeatWords(w.workers?.get(last.identity), false)}`
    : '';
  return `no worker is polling task queue "${taskQueue}"${was}: start one (drainflow run --worker --task-queue ${taskQueue}) or find out why the workers stopped`;
}
