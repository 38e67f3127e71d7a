/**
 * The CLI's plan commands: `status`, `pause`, `resume`, `abort`, `release`, `watch`. They read
 * the MaintenancePlan from Kubernetes and talk to its workflow in Temporal with the shared message
 * definitions (src/workflows/messages.ts). Errors name what went wrong: an unknown plan, an
 * unreachable cluster or Temporal, a finished workflow.
 */
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { MaintenancePlan, MaintenancePlanStatus } from '../api/plan.js';
import { PlanApi } from '../k8s/plans.js';
import { controlUpdate, planWorkflowId, progressQuery, type ControlAction } from '../workflows/messages.js';
import { renderPlan } from './render.js';

/** Connection settings of the plan commands (from flags and environment). */
export interface CliContext {
  kubeconfig?: string;
  temporalAddress: string;
  temporalNamespace: string;
}

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

async function connect(ctx: CliContext): Promise<Client> {
  if (!/^[^\s:]+:\d+$/.test(ctx.temporalAddress)) {
    throw new CliError(
      `invalid --temporal-address / TEMPORAL_ADDRESS "${ctx.temporalAddress}": must be host:port, e.g. 127.0.0.1:7233`,
    );
  }
  try {
    const connection = await Connection.connect({ address: ctx.temporalAddress, connectTimeout: '5s' });
    return new Client({ connection, namespace: ctx.temporalNamespace });
  } catch (err) {
    throw new CliError(`cannot reach Temporal at ${ctx.temporalAddress}: ${(err as Error).message}`);
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
const QUERY_TIMEOUT_MS = 5_000;

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
 * Sets the spec flag, then sends pause/resume/abort/release as an Update and returns the new state.
 * @throws CliError when the workflow does not exist, has finished, or no worker answers in time.
 * @throws CliError when the workflow does not exist or has finished.
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
    return await withTimeout(
      handle.executeUpdate(controlUpdate, { args: [{ action }] }),
      UPDATE_TIMEOUT_MS,
      `the workflow of plan "${name}" did not answer within ${UPDATE_TIMEOUT_MS / 1000} s: is a worker polling its task queue? spec.${Object.keys(SPEC_FLAG[action])[0]} is set, so the ${action} takes effect when a worker runs`,
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new CliError(`plan "${name}" has no workflow yet (is the operator running?)`);
    throw err;
  } finally {
    await client.connection.close();
  }
}

/** Status of a plan: the workflow's live view when it runs, else the plan's status. */
export async function status(
  ctx: CliContext,
  name: string,
): Promise<{ plan: MaintenancePlan; live: MaintenancePlanStatus | undefined }> {
  const { plan, handle, client } = await planHandle(ctx, name);
  try {
    // A query needs a worker; without one, fall back to the written status after a bound.
    const live = await withTimeout(handle.query(progressQuery), QUERY_TIMEOUT_MS, 'no worker answered').catch(
      () => undefined,
    );
    return { plan, live };
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
