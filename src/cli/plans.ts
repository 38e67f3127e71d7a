/**
 * The CLI's plan commands: `status`, `pause`, `resume`, `abort`, `release`, `watch`. They read
 * the MaintenancePlan from Kubernetes and talk to its workflow in Temporal with the shared message
 * definitions (src/workflows/messages.ts). Errors name what went wrong: an unknown plan, an
 * unreachable cluster or Temporal, a finished workflow.
 */
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { Client, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { MaintenancePlan, MaintenancePlanStatus } from '../api/plan.js';
import { PlanApi } from '../k8s/plans.js';
import {
  controlUpdate,
  planWorkflowId,
  progressQuery,
  releaseNodeUpdate,
  type ControlAction,
} from '../workflows/messages.js';
import { temporalConnection, type CliConfig } from '../shared/config.js';
import { renderPlan } from './render.js';

/**
 * Connection settings of the plan commands: the validated CLI settings of src/shared/config.ts
 * (kubeconfig; Temporal address, namespace, TLS, API key — the same as `drainflow run`'s).
 */
export type CliContext = CliConfig;

/** A user-facing error: printed as is, exit status 1. */
export class CliError extends Error {}

function kubeApi(ctx: CliContext): { kc: KubeConfig; api: PlanApi } {
  const kc = new KubeConfig();
  try {
    if (ctx.kubeconfig) kc.loadFromFile(ctx.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new CliError(
      `cannot read the kubeconfig ${ctx.kubeconfig ?? '(default)'} (--kubeconfig / KUBECONFIG): ${(err as Error).message}`,
    );
  }
  if (!kc.getCurrentCluster())
    throw new CliError('no cluster in the kubeconfig: set --kubeconfig or KUBECONFIG');
  return { kc, api: new PlanApi(kc) };
}

/** The spec flag each action sets, so the plan's spec keeps telling the truth (kubectl and CLI agree). */
const SPEC_FLAG: Record<ControlAction, Partial<Record<'paused' | 'abort' | 'release', boolean>>> = {
  pause: { paused: true },
  resume: { paused: false },
  abort: { abort: true },
  release: { release: true },
};

/** Reads the plan. @throws CliError for an unknown plan or an unreachable cluster. */
export async function readPlan(ctx: CliContext, name: string): Promise<MaintenancePlan> {
  const { kc, api } = kubeApi(ctx);
  let plan: MaintenancePlan | undefined;
  try {
    plan = await api.get(name);
  } catch (err) {
    if (err instanceof ApiException)
      throw new CliError(`Kubernetes API error ${err.code} reading plan "${name}"`);
    throw new CliError(
      `cannot reach the Kubernetes API server (${kc.getCurrentCluster()?.server ?? 'no cluster in kubeconfig'}): ${(err as Error).message}`,
    );
  }
  if (plan === undefined) {
    throw new CliError(`no MaintenancePlan named "${name}" (kubectl get maintenanceplans lists them)`);
  }
  return plan;
}

/** How long the CLI tries to reach Temporal. */
const CONNECT_TIMEOUT = '5s';

async function connect(ctx: CliContext): Promise<Client> {
  try {
    const connection = await temporalConnection(ctx, CONNECT_TIMEOUT);
    return new Client({ connection, namespace: ctx.temporalNamespace });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

async function planHandle(
  ctx: CliContext,
  name: string,
): Promise<{ plan: MaintenancePlan; handle: WorkflowHandle; client: Client }> {
  const plan = await readPlan(ctx, name);
  const client = await connect(ctx);
  const id = plan.status?.workflow?.workflowId ?? planWorkflowId({ name, uid: plan.metadata.uid });
  return { plan, handle: client.workflow.getHandle(id), client };
}

/** How long the CLI waits for the workflow to answer an Update, ms. */
const UPDATE_TIMEOUT_MS = 20_000;
/** How long `status` waits for the live query before showing the written status, ms. */
export const QUERY_TIMEOUT_MS = 2_000;

/** `p`, or a CliError with `message` after `ms`. */
async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CliError(message)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `drainflow release PLAN --node NODE` (spec.uncordon AfterEachNode): sends the `releaseNode`
 * Update, so the node is uncordoned once drained (at once when it is drained and waits).
 * @returns the plan's status after the workflow took the release in.
 * @throws CliError when the plan's uncordon is not AfterEachNode, the node is not in the plan, the
 *   workflow has ended or no worker answers in time.
 */
export async function releaseNode(
  ctx: CliContext,
  name: string,
  node: string,
): Promise<MaintenancePlanStatus> {
  const { plan, handle, client } = await planHandle(ctx, name);
  try {
    if (plan.spec.uncordon !== 'AfterEachNode')
      throw new CliError(
        `plan "${name}" has spec.uncordon ${plan.spec.uncordon}: a per-node release (--node) needs uncordon AfterEachNode; release the whole plan without --node`,
      );
    const names = plan.status?.nodes?.map((n) => n.name) ?? plan.spec.nodeNames ?? [];
    if (!names.includes(node))
      throw new CliError(
        `node "${node}" is not a node of plan "${name}" (its nodes: ${names.join(', ') || 'none yet'})`,
      );
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING')
      throw new CliError(
        `the workflow of plan "${name}" has ended (plan phase ${plan.status?.phase ?? 'unknown'}); nothing to release`,
      );
    return await withTimeout(
      handle.executeUpdate(releaseNodeUpdate, { args: [{ node }] }),
      UPDATE_TIMEOUT_MS,
      `the workflow of plan "${name}" did not answer within ${UPDATE_TIMEOUT_MS / 1000} s: is a worker polling its task queue? (the node annotation drainflow.dev/release=true releases the node too)`,
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new CliError(`plan "${name}" has no workflow yet (is the operator running?)`);
    throw err;
  } finally {
    await client.connection.close();
  }
}

/**
 * Sets the spec flag, then sends pause/resume/abort/release as an Update and returns the new state.
 * @throws CliError when the workflow does not exist or has finished, when no worker polls its task
 *   queue (at once; the spec flag is set and takes effect when a worker runs), or when no worker
 *   answers in time.
 */
export async function control(
  ctx: CliContext,
  name: string,
  action: ControlAction,
): Promise<MaintenancePlanStatus> {
  const { plan, handle, client } = await planHandle(ctx, name);
  try {
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING') {
      throw new CliError(
        `the workflow of plan "${name}" has ended (plan phase ${plan.status?.phase ?? 'unknown'}); nothing to ${action}`,
      );
    }
    const phase = plan.status?.phase;
    if (
      (action === 'pause' || action === 'resume') &&
      phase &&
      ['Drained', 'Completed', 'Blocked', 'Failed', 'Aborted'].includes(phase)
    ) {
      throw new CliError(`plan "${name}" is ${phase}: no evictions left to ${action}`);
    }
    // Record the intent in spec first, so kubectl and the CLI agree even when no worker answers
    // (the operator relays the same flag as a signal, which the workflow applies idempotently).
    await kubeApi(ctx).api.patchSpec(name, SPEC_FLAG[action]);
    const flag = `spec.${Object.keys(SPEC_FLAG[action])[0]}`;
    // An Update waits for a worker and is dropped when none takes it; say so at once instead.
    const workers = await taskQueueWorkers(client, ctx.temporalNamespace, desc.taskQueue).catch(
      () => undefined,
    );
    if (workers && liveWorkers(workers).length === 0) {
      throw new CliError(
        `no worker is polling task queue "${desc.taskQueue}" of plan "${name}": ${flag} is set, so the ${action} takes effect when a worker runs (drainflow run --worker)`,
      );
    }
    return await withTimeout(
      handle.executeUpdate(controlUpdate, { args: [{ action }] }),
      UPDATE_TIMEOUT_MS,
      `the workflow of plan "${name}" did not answer within ${UPDATE_TIMEOUT_MS / 1000} s: is a worker polling its task queue? ${flag} is set, so the ${action} takes effect when a worker runs`,
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new CliError(`plan "${name}" has no workflow yet (is the operator running?)`);
    throw err;
  } finally {
    await client.connection.close();
  }
}

/** What `status` shows: the workflow's live view when it answered, else the plan's written status and why. */
export interface PlanStatusView {
  plan: MaintenancePlan;
  /** The workflow's progress query answer; undefined when it did not answer in time. */
  live: MaintenancePlanStatus | undefined;
  /** Why the live view is missing, and what to check (no worker polling, …); undefined with `live`. */
  note?: string;
}

/**
 * A poller seen by Temporal within this long may be a running worker. Idle workers hold long
 * polls that the server ends after about 60 s and the SDK renews at once, so a live worker's last
 * poll is never older than that; a stopped worker stays listed with an ever older last poll.
 */
export const POLLER_FRESH_MS = 70_000;

/** What Temporal knows of the workers of one task queue. */
export interface TaskQueueWorkers {
  /** Pollers of the workflow task queue (DescribeTaskQueue), newest first, with the age of their last poll. */
  pollers: { identity: string; ageMs: number }[];
  /**
   * Worker heartbeats (ListWorkers: the SDK reports its status every 60 s and when it stops),
   * by identity; undefined when the server does not offer ListWorkers.
   */
  status?: Map<string, string>;
}

/** Pollers and worker statuses of `taskQueue` (two cheap calls, 3 s each at most). */
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
    .map((p) => {
      const t = p.lastAccessTime;
      const ms = t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
      return { identity: p.identity ?? '?', ageMs: Math.max(0, now - ms) };
    })
    .sort((a, b) => a.ageMs - b.ageMs);
  const listed = await bounded(() =>
    client.workflowService.listWorkers({ namespace, query: `TaskQueue="${taskQueue}"` }),
  ).catch(() => undefined);
  if (!listed) return { pollers };
  const status = new Map<string, string>();
  for (const w of listed.workers ?? []) {
    if (w.taskQueue !== taskQueue || !w.workerIdentity) continue;
    status.set(w.workerIdentity, WorkerStatus[w.status ?? 0] ?? String(w.status));
  }
  return { pollers, status };
}

/**
 * The workers that may be serving the task queue: a recent poll, and (when the server lists
 * worker heartbeats) not reported as shutting down or stopped.
 */
export function liveWorkers(w: TaskQueueWorkers): { identity: string; ageMs: number }[] {
  return w.pollers.filter(
    (p) =>
      p.ageMs <= POLLER_FRESH_MS &&
      (w.status === undefined ||
        !w.status.has(p.identity) ||
        w.status.get(p.identity) === 'WORKER_STATUS_RUNNING'),
  );
}

/** Why the workflow did not answer the query, from its description and its task queue's workers. */
async function noAnswerNote(
  client: Client,
  handle: WorkflowHandle,
  namespace: string,
  err: unknown,
): Promise<string> {
  const shown = 'shown: the status the plan last wrote';
  const late = `the workflow did not answer the progress query within ${QUERY_TIMEOUT_MS / 1000} s`;
  const desc = await client.connection
    .withDeadline(Date.now() + 3000, () => handle.describe())
    .catch(() => undefined);
  if (!desc) return `${late} (${(err as Error).message}); ${shown}`;
  const ended = desc.status.name !== 'RUNNING' ? `the workflow has ended (${desc.status.name}); ` : '';
  const tq = desc.taskQueue;
  const workers = await taskQueueWorkers(client, namespace, tq).catch(() => undefined);
  if (!workers) return `${ended}${late}; ${shown}`;
  const live = liveWorkers(workers);
  if (live.length === 0) {
    const last = workers.pollers[0];
    const was = last
      ? `; the last poll was by ${last.identity} ${Math.round(last.ageMs / 1000)} s ago${
          workers.status?.get(last.identity)
            ? ` (${workers.status.get(last.identity)!.replace('WORKER_STATUS_', '').toLowerCase()})`
            : ''
        }`
      : '';
    return `${ended}no worker is polling task queue "${tq}"${was}: start one (drainflow run --worker) or find out why the workers stopped; ${shown}`;
  }
  return `${ended}${late} although ${live.length} worker(s) poll task queue "${tq}" (${live[0]!.identity}, last poll ${Math.round(live[0]!.ageMs / 1000)} s ago): they may be overloaded, failing or just stopped, see their logs; ${shown}`;
}

/**
 * Status of a plan: the workflow's live view (progress query) when a worker answers within
 * {@link QUERY_TIMEOUT_MS}, else the plan's written status with a note saying why — no worker
 * polling the workflow's task queue (DescribeTaskQueue), or workers that poll but do not answer.
 * A query is answered by a worker only; without one Temporal holds it until its own deadline,
 * so the query's gRPC deadline bounds the wait.
 */
export async function status(ctx: CliContext, name: string): Promise<PlanStatusView> {
  const { plan, handle, client } = await planHandle(ctx, name);
  try {
    try {
      const live = await client.connection.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
        handle.query(progressQuery),
      );
      return { plan, live };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        return {
          plan,
          live: undefined,
          note: 'the plan has no workflow (yet): is the operator running? shown: the status the plan last wrote',
        };
      return { plan, live: undefined, note: await noAnswerNote(client, handle, ctx.temporalNamespace, err) };
    }
  } finally {
    await client.connection.close();
  }
}

/** Final phases in which `watch` stops. */
const DONE = new Set(['Drained', 'Completed', 'Aborted', 'Failed', 'Blocked']);

/**
 * Shows the plan live until it reaches a final phase (or forever with `follow`). Redraws in place
 * on a terminal; prints one block per change otherwise.
 * @returns the last status seen.
 */
export async function watch(
  ctx: CliContext,
  name: string,
  opts: {
    intervalMs?: number;
    follow?: boolean;
    out?: NodeJS.WriteStream;
    until?: (s: MaintenancePlanStatus) => boolean;
  } = {},
): Promise<MaintenancePlanStatus | undefined> {
  const out = opts.out ?? process.stdout;
  let last = '';
  let status: MaintenancePlanStatus | undefined;
  for (;;) {
    const plan = await readPlan(ctx, name);
    status = plan.status;
    const text = renderPlan(plan, Date.now());
    if (out.isTTY) {
      out.write(`\x1b[H\x1b[2J${text}\n`);
    } else if (text !== last) {
      out.write(`${text}\n\n`);
    }
    last = text;
    const done = opts.until ? status && opts.until(status) : status?.phase && DONE.has(status.phase);
    if (done && !opts.follow) return status;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000));
  }
}
