/**
 * The CLI's plan commands: `status`, `pause`, `resume`, `abort`, `release`, `watch`. They read
 * the MaintenancePlan from Kubernetes and talk to its workflow in Temporal with the shared message
 * definitions (src/workflows/messages.ts). Errors name what went wrong: an unknown plan, an
 * unreachable cluster or Temporal, a finished workflow.
 */
import { ApiException, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { GROUP, PLURAL, VERSION, type MaintenancePlan, type MaintenancePlanStatus } from '../api/plan.js';
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

/** Reads the plan. @throws CliError for an unknown plan or an unreachable cluster. */
export async function readPlan(ctx: CliContext, name: string): Promise<MaintenancePlan> {
  const kc = new KubeConfig();
  if (ctx.kubeconfig) kc.loadFromFile(ctx.kubeconfig);
  else kc.loadFromDefault();
  const api = kc.makeApiClient(CustomObjectsApi);
  try {
    return (await api.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name,
    })) as MaintenancePlan;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) {
      throw new CliError(`no MaintenancePlan named "${name}" (kubectl get maintenanceplans lists them)`);
    }
    if (err instanceof ApiException)
      throw new CliError(`Kubernetes API error ${err.code} reading plan "${name}"`);
    throw new CliError(
      `cannot reach the Kubernetes API server (${kc.getCurrentCluster()?.server ?? 'no cluster in kubeconfig'}): ${(err as Error).message}`,
    );
  }
}

async function connect(ctx: CliContext): Promise<Client> {
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

/**
 * Sends pause/resume/abort/release as an Update and returns the new state.
 * @throws CliError when the workflow does not exist or has finished.
 */
export async function control(
  ctx: CliContext,
  name: string,
  action: ControlAction,
): Promise<MaintenancePlanStatus> {
  const { handle, client } = await planHandle(ctx, name);
  try {
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING') {
      throw new CliError(
        `the workflow of plan "${name}" has finished (${desc.status.name}); nothing to ${action}`,
      );
    }
    return await handle.executeUpdate(controlUpdate, { args: [{ action }] });
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
    const live = await handle.query(progressQuery).catch(() => undefined);
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
