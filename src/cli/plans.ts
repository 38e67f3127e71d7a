/**
 * The CLI's plan commands: `status`, `pause`, `resume`, `abort`, `release`, `approve`, `extend`, `watch`. They read
 * the MaintenancePlan from Kubernetes and talk to its workflow in Temporal with the shared message
 * definitions (src/contract/plan-messages.ts). Errors name what went wrong: an unknown plan, an
 * unreachable cluster or Temporal, a finished workflow.
 */
import { ApiException, KubeConfig } from '../k8s/client.js';
import {
  Client,
  NamespaceNotFoundError,
  QueryRejectedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import type { MaintenancePlan, MaintenancePlanStatus } from '../api/plan.js';
import { FINAL_PLAN_PHASES, PlanPhase, PlanReason } from '../api/reasons.js';
import { closeStatusOfReason, closedWorkflowReason, expectsRunningWorkflow } from '../api/closed-workflow.js';
import { PlanApi } from '../k8s/plans.js';
import { reuseConnections } from '../k8s/connection-pool.js';
import { flagHasEffect, phaseWords, type SpecFlagName } from '../api/ended-plan.js';
import {
  approveRemedyUpdate,
  controlUpdate,
  extendDeadlineUpdate,
  progressQuery,
  releaseNodeUpdate,
  type ControlAction,
} from '../contract/plan-messages.js';
import { planWorkflowId } from '../contract/names.js';
import { temporalConnection } from '../shared/temporal-connection.js';
import type { CliConfig } from '../shared/settings.js';
import { renderPlan } from './render.js';
import {
  POLLER_FRESH_MS,
  heartbeatWords,
  liveWorkers,
  noWorkerWords,
  secs,
  taskQueueWorkers,
  type TaskQueueWorkers,
} from '../shared/workers.js';

/**
 * Connection settings of the plan commands: the validated CLI settings of src/shared/settings.ts
 * (kubeconfig; Temporal address, namespace, TLS, API key — the same as `drainflow run`'s). The task
 * queue is only checked there: the commands use the one Temporal records for the plan's workflow.
 */
export type CliContext = Omit<CliConfig, 'taskQueue'>;

/** A user-facing error: printed as is, exit status 1. */
export class CliError extends Error {}

/** One KubeConfig per command (its settings), so that its calls share the API server connection. */
const kubeApis = new WeakMap<CliContext, { kc: KubeConfig; api: PlanApi }>();

/**
 * Loads `kc` from the file `path` (--kubeconfig), else from the default places ($KUBECONFIG,
 * ~/.kube/config, in-cluster).
 * @throws CliError when it cannot be read or names no cluster.
 */
export function loadKubeConfig(path: string | undefined, kc = new KubeConfig()): KubeConfig {
  try {
    if (path) kc.loadFromFile(path);
    else kc.loadFromDefault();
  } catch (err) {
    throw new CliError(
      `cannot read the kubeconfig ${path ?? '(default)'} (--kubeconfig / KUBECONFIG): ${(err as Error).message}`,
    );
  }
  if (!kc.getCurrentCluster())
    throw new CliError('no cluster in the kubeconfig: set --kubeconfig or KUBECONFIG');
  return kc;
}

function kubeApi(ctx: CliContext): { kc: KubeConfig; api: PlanApi } {
  const known = kubeApis.get(ctx);
  if (known) return known;
  const kc = loadKubeConfig(ctx.kubeconfig, reuseConnections(new KubeConfig()));
  const made = { kc, api: new PlanApi(kc) };
  kubeApis.set(ctx, made);
  return made;
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
    // Queries of a closed workflow are rejected by the server (with the workflow's status): no
    // worker replays a finished history to answer, and `status` needs no describe call first.
    return new Client({
      connection,
      namespace: ctx.temporalNamespace,
      workflow: { queryRejectCondition: 'NOT_OPEN' },
    });
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/**
 * The plan, read from Kubernetes, and a connection to Temporal, made at the same time (neither
 * needs the other; the plan names the workflow). When the plan cannot be read, that error is
 * thrown at once, and a connection made meanwhile is closed.
 * @throws CliError for an unknown plan or an unreachable cluster.
 * @returns the plan, and the connection or why Temporal could not be reached.
 */
async function planAndClient(
  ctx: CliContext,
  name: string,
): Promise<{ plan: MaintenancePlan; client: PromiseSettledResult<Client> }> {
  const connecting = connect(ctx);
  connecting.catch(() => undefined); // handled below; no unhandled rejection while the plan is read
  let plan: MaintenancePlan;
  try {
    plan = await readPlan(ctx, name);
  } catch (err) {
    connecting.then((c) => c.connection.close()).catch(() => undefined);
    throw err;
  }
  const [client] = await Promise.allSettled([connecting]);
  return { plan, client: client! };
}

/** The workflow of the plan: the one the operator recorded in its status, else the one its name and UID give. */
function workflowIdOf(plan: MaintenancePlan, name: string): string {
  return plan.status?.workflow?.workflowId ?? planWorkflowId({ name, uid: plan.metadata.uid });
}

async function planHandle(
  ctx: CliContext,
  name: string,
): Promise<{ plan: MaintenancePlan; handle: WorkflowHandle; client: Client }> {
  const { plan, client } = await planAndClient(ctx, name);
  if (client.status === 'rejected') throw client.reason;
  return { plan, handle: client.value.workflow.getHandle(workflowIdOf(plan, name)), client: client.value };
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
 * Update, so the node is uncordoned once drained (at once when it is drained and waits, or blocked
 * by a failed hook; undrained, phase Skipped, after a failed beforeDrain hook).
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
 * Sends one Update to plan `name`'s running workflow with `send` and returns what it returns (the
 * plan's status). `words.verb` and `words.noun` name the control in the errors ("nothing to
 * approve", "refused the approval").
 * @throws CliError when the workflow has ended or does not exist, when it refuses the Update (its
 *   validator's message), or when no worker answers within UPDATE_TIMEOUT_MS.
 */
async function planUpdate(
  ctx: CliContext,
  name: string,
  send: (h: WorkflowHandle) => Promise<MaintenancePlanStatus>,
  words: { verb: string; noun: string },
): Promise<MaintenancePlanStatus> {
  const { plan, handle, client } = await planHandle(ctx, name);
  try {
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING')
      throw new CliError(
        `the workflow of plan "${name}" has ended (plan phase ${plan.status?.phase ?? 'unknown'}); nothing to ${words.verb}`,
      );
    return await withTimeout(
      send(handle),
      UPDATE_TIMEOUT_MS,
      `the workflow of plan "${name}" did not answer within ${UPDATE_TIMEOUT_MS / 1000} s: is a worker polling its task queue?`,
    );
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new CliError(`plan "${name}" has no workflow yet (is the operator running?)`);
    if (err instanceof WorkflowUpdateFailedError)
      throw new CliError(
        `plan "${name}" refused the ${words.noun}: ${(err.cause as Error | undefined)?.message ?? err.message}`,
      );
    throw err;
  } finally {
    await client.connection.close();
  }
}

/**
 * `drainflow approve PLAN --workload NS/NAME` (spec.remedies.rolloutRestart): sends the
 * `approveRemedy` Update, so the plan restarts the Deployment it proposed to restart.
 * @returns the plan's status after the workflow took the approval in.
 * @throws CliError with the workflow's refusal (no such proposal, restarted already), when the
 *   workflow has ended or no worker answers in time.
 */
export async function approveRemedy(
  ctx: CliContext,
  name: string,
  workload: string,
  by: string,
): Promise<MaintenancePlanStatus> {
  return planUpdate(ctx, name, (h) => h.executeUpdate(approveRemedyUpdate, { args: [{ workload, by }] }), {
    verb: 'approve',
    noun: 'approval',
  });
}

/**
 * A duration as `drainflow extend --by` takes it, in seconds: Go's units h, m, s in that order,
 * each at most once (`30m`, `1h30m`, `90s`, `2h`); undefined when it is not one or is zero.
 */
export function durationSeconds(text: string): number | undefined {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text.trim());
  if (!m || text.trim() === '') return undefined;
  const seconds = Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
  return seconds > 0 ? seconds : undefined;
}

/**
 * The hint `drainflow resume` gives for a plan Blocked at its deadline, or undefined for any other
 * (pure): a resume gives no time; `drainflow extend` (or a raised spec.drainTimeoutSeconds) does,
 * and drains the nodes again, still cordoned and claimed.
 */
export function resumeBlockedHint(
  name: string,
  status: MaintenancePlanStatus | undefined,
): string | undefined {
  if (status?.phase !== PlanPhase.Blocked || status.reason !== PlanReason.DeadlineExceeded) return undefined;
  return `plan "${name}" is Blocked at its deadline (DeadlineExceeded): resume gives it no more time. Its nodes stay cordoned and claimed; give it a later deadline and it drains them again from where it stopped: drainflow extend ${name} --by 30m (or --to RFC3339, or raise spec.drainTimeoutSeconds)`;
}

/**
 * `drainflow extend PLAN --by 30m | --to RFC3339`: sends the `extendDeadline` Update, so a Running
 * plan gets a later deadline and one Blocked at its deadline drains again (src/drain/plan-extend.ts).
 * @returns the plan's status after the workflow took the extension in.
 * @throws CliError with the workflow's refusal (not Running nor Blocked at its deadline, a deadline
 *   not later than the current one), when the workflow has ended or no worker answers in time.
 */
export async function extendPlan(
  ctx: CliContext,
  name: string,
  ask: { addSeconds?: number; deadline?: string },
  by: string,
): Promise<MaintenancePlanStatus> {
  return planUpdate(ctx, name, (h) => h.executeUpdate(extendDeadlineUpdate, { args: [{ ...ask, by }] }), {
    verb: 'extend',
    noun: 'extension',
  });
}

/** What {@link control} did: the plan's status, and who took the action in. */
export interface ControlResult {
  status: MaintenancePlanStatus;
  /**
   * `workflow`: the workflow accepted the Update. `operator`: the workflow had closed without
   * handing the nodes back, so abort set spec.abort and the operator hands them back (status read
   * from the plan; phase Aborted once done).
   */
  by: 'workflow' | 'operator' | 'spec';
  /** spec.uncordon of the plan as read (absent: not set, the default OnDelete). */
  uncordon?: string;
  /**
   * With `by: 'spec'`: no worker polls the workflow's task queue, so no Update was sent; the spec
   * flag (`flag`, as written: e.g. `spec.paused: false` for a resume) is set, and the workflow acts on it (the operator's signal)
   * when a worker runs on `taskQueue`. The status is the plan's as read.
   */
  flag?: string;
  taskQueue?: string;
}

/**
 * Whether the plan's workflow closed (`closeStatus`, Temporal's name) without handing the nodes
 * back: the plan still reads a phase that expects a running workflow, or the operator marked it
 * Failed with a Workflow* reason (src/api/closed-workflow.ts). Only the close statuses the operator
 * projects count (TERMINATED, FAILED, TIMED_OUT, CANCELED): a COMPLETED workflow wrote its own status.
 */
export function closedWithoutHandBack(plan: Pick<MaintenancePlan, 'status'>, closeStatus: string): boolean {
  if (!closedWorkflowReason(closeStatus)) return false;
  const phase = plan.status?.phase;
  return (
    expectsRunningWorkflow(phase, plan.status?.reason) ||
    (phase === 'Failed' && Boolean(closeStatusOfReason(plan.status?.reason)))
  );
}

/** `{ uncordon }` of a plan's spec when it is set, for {@link ControlResult}. */
function uncordonOf(plan: MaintenancePlan): { uncordon?: string } {
  const u = (plan.spec as { uncordon?: unknown } | undefined)?.uncordon;
  return typeof u === 'string' ? { uncordon: u } : {};
}

/**
 * Sets the spec flag, then sends pause/resume/abort/release as an Update and returns the new state.
 * An abort of a plan whose workflow closed without handing the nodes back ({@link
 * closedWithoutHandBack}) sets spec.abort and waits up to {@link PHASE_WAIT_MS} for the operator to
 * hand them back (phase Aborted).
 * When no worker polls the workflow's task queue, returns at once with `by: 'spec'`: the spec flag
 * is set and takes effect when a worker runs (no Update is sent: none would be taken).
 * @throws CliError when the workflow does not exist or has finished, when the plan has ended and
 *   the action would change nothing ({@link endedRefusal}, with or without a worker), or when no
 *   worker answers in time.
 */
export async function control(ctx: CliContext, name: string, action: ControlAction): Promise<ControlResult> {
  const { plan, handle, client } = await planHandle(ctx, name);
  try {
    // Temporal lost the workflow and the operator said so: only an abort (the operator's hand-back) is left.
    if (plan.status?.phase === PlanPhase.Failed && plan.status.reason === PlanReason.WorkflowNotFound) {
      const refused = endedRefusal(name, action, plan);
      if (refused) throw new CliError(refused);
      await kubeApi(ctx).api.patchSpec(name, SPEC_FLAG.abort);
      return { status: await operatorAborted(ctx, name), by: 'operator', ...uncordonOf(plan) };
    }
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING') {
      const ended = `the workflow of plan "${name}" has ended (${desc.status.name}; plan phase ${plan.status?.phase ?? 'unknown'}${plan.status?.reason ? `/${plan.status.reason}` : ''})`;
      if (!closedWithoutHandBack(plan, desc.status.name ?? ''))
        throw new CliError(`${ended}; nothing to ${action}`);
      if (action !== 'abort')
        throw new CliError(
          `${ended} without handing the nodes back; nothing to ${action}: drainflow abort ${name} has the operator hand them back (uncordons what the plan cordoned, per spec.uncordon), as deleting the plan does`,
        );
      await kubeApi(ctx).api.patchSpec(name, SPEC_FLAG.abort);
      return { status: await operatorAborted(ctx, name), by: 'operator', ...uncordonOf(plan) };
    }
    const phase = plan.status?.phase;
    const hint = action === 'resume' ? resumeBlockedHint(name, plan.status) : undefined;
    if (hint) throw new CliError(hint);
    if (action === 'pause' && plan.spec?.mode === 'Preflight')
      throw new CliError(
        `plan "${name}" is a Preflight plan: it cordons and evicts nothing, so there is nothing to pause (abort or delete it to stop it)`,
      );
    if (
      (action === 'pause' || action === 'resume') &&
      phase &&
      FINAL_PLAN_PHASES.has(phase) &&
      phase !== PlanPhase.Previewed
    ) {
      throw new CliError(`plan "${name}" is ${phase}: no evictions left to ${action}`);
    }
    // One rule whether or not a worker polls: a plan that has ended takes no flag that changes nothing.
    const refused = endedRefusal(name, action, plan);
    if (refused) throw new CliError(refused);
    // Record the intent in spec first, so kubectl and the CLI agree even when no worker answers
    // (the operator relays the same flag as a signal, which the workflow applies idempotently).
    // The Update carries the spec's generation, as the operator's signals do: the workflows then
    // ignore an older pause or resume that arrives later (a standby operator's start-up relay).
    // An Update waits for a worker and is dropped when none takes it: the task queue's workers are
    // asked meanwhile, so that the answer can say so at once instead.
    const [generation, workers] = await Promise.all([
      kubeApi(ctx).api.patchSpec(name, SPEC_FLAG[action]),
      taskQueueWorkers(client, ctx.temporalNamespace, desc.taskQueue).catch(() => undefined),
    ]);
    const [[key, value]] = Object.entries(SPEC_FLAG[action]) as [[string, boolean]];
    const flag = `spec.${key}: ${value}`;
    if (workers && liveWorkers(workers).length === 0) {
      // Not a failure: the intent is recorded in the spec, and the operator relays it as a signal
      // that Temporal keeps for the workflow until a worker runs it.
      return {
        status: plan.status ?? {},
        by: 'spec',
        flag,
        taskQueue: desc.taskQueue,
        ...uncordonOf(plan),
      };
    }
    const accepted = await withTimeout(
      handle.executeUpdate(controlUpdate, {
        args: [{ action, ...(generation !== undefined ? { generation } : {}) }],
      }),
      UPDATE_TIMEOUT_MS,
      `the workflow of plan "${name}" did not answer within ${UPDATE_TIMEOUT_MS / 1000} s: is a worker polling its task queue? ${flag} is written, so the ${action} takes effect when a worker runs`,
    );
    return { status: await settledPhase(handle, action, accepted), by: 'workflow', ...uncordonOf(plan) };
  } catch (err) {
    const missing = missingWorkflowNote(ctx, plan, handle.workflowId, err);
    if (missing) throw new CliError(`plan "${name}": ${missing}`);
    throw err;
  } finally {
    await client.connection.close();
  }
}

/**
 * Why a control of a plan whose workflow still runs is refused because the plan has ended, or
 * undefined (pure): its flag ({@link SPEC_FLAG}) has no effect in the plan's phase ({@link
 * flagHasEffect}: Completed, Aborted, Failed with its workflow closed, Previewed — except an abort
 * that still hands nodes back). Checked before the spec is written, so a plan that has ended is
 * refused the same way whether or not a worker polls its task queue.
 */
export function endedRefusal(
  name: string,
  action: ControlAction,
  plan: Pick<MaintenancePlan, 'status'> & { spec?: { uncordon?: unknown } },
): string | undefined {
  const flag = Object.keys(SPEC_FLAG[action])[0] as SpecFlagName;
  const view = {
    phase: plan.status?.phase,
    reason: plan.status?.reason,
    uncordon: typeof plan.spec?.uncordon === 'string' ? plan.spec.uncordon : undefined,
  };
  if (flagHasEffect(flag, view)) return undefined;
  return `plan "${name}" has ended (plan phase ${phaseWords(view)}); nothing to ${action}`;
}

/** How long `abort` and `release` wait for the phase they lead to, ms. */
export const PHASE_WAIT_MS = 10_000;

/** Polls the plan up to {@link PHASE_WAIT_MS} for phase Aborted (the operator's hand-back); returns the last status read. */
async function operatorAborted(ctx: CliContext, name: string): Promise<MaintenancePlanStatus> {
  const until = Date.now() + PHASE_WAIT_MS;
  let last: MaintenancePlanStatus = {};
  while (Date.now() < until) {
    last = (await readPlan(ctx, name)).status ?? {};
    if (last.phase === 'Aborted') return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  return last;
}

/**
 * The phase an action leads to once the workflow has acted on it, or undefined when the Update's
 * answer already is final: abort ends Aborted after the nodes are handed back; release of a
 * settled plan (Drained, Blocked) ends Completed. Pause and resume change the phase at once.
 */
export function phaseAfter(action: ControlAction, phase: string | undefined): PlanPhase | undefined {
  if (action === 'abort') return phase === PlanPhase.Aborted ? undefined : PlanPhase.Aborted;
  if (action === 'release' && (phase === PlanPhase.Drained || phase === PlanPhase.Blocked))
    return PlanPhase.Completed;
  return undefined;
}

/**
 * The Update answers once the workflow has recorded the action, before an abort or release has
 * handed the nodes back: waits up to {@link PHASE_WAIT_MS} for the phase that follows (progress
 * query), and returns the last status seen, which may still show the old phase.
 */
async function settledPhase(
  handle: WorkflowHandle,
  action: ControlAction,
  accepted: MaintenancePlanStatus,
): Promise<MaintenancePlanStatus> {
  const target = phaseAfter(action, accepted.phase);
  if (!target) return accepted;
  let last = accepted;
  const until = Date.now() + PHASE_WAIT_MS;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    try {
      last = await handle.query(progressQuery);
    } catch {
      // The workflow ended (Aborted, Completed with uncordon OnRelease/Never): its result is final.
      const desc = await handle.describe().catch(() => undefined);
      if (desc && desc.status.name !== 'RUNNING') return { ...last, phase: target };
      return last;
    }
    if (last.phase === target) return last;
  }
  return last;
}

/** What `status` shows: the workflow's live view when it answered, else the plan's written status and why. */
export interface PlanStatusView {
  plan: MaintenancePlan;
  /** The workflow's progress query answer; undefined when it did not answer in time. */
  live: MaintenancePlanStatus | undefined;
  /** Why the live view is missing, and what to check (no worker polling, …); undefined with `live`. */
  note?: string;
  /** Temporal could not be reached (the note says why): the command fails after showing the status. */
  unreachable?: boolean;
}

/**
 * Why no worker answered, from what Temporal shows of the task queue (pure): no poller, or pollers
 * whose last poll is too old ({@link noWorkerWords}); or a recent poller that did not answer — a
 * live worker that is overloaded or failing, or one that died less than {@link POLLER_FRESH_MS} ago,
 * which Temporal cannot tell apart yet.
 */
export function workersNote(w: TaskQueueWorkers, taskQueue: string): string {
  const live = liveWorkers(w);
  const tq = `task queue "${taskQueue}"`;
  if (live.length === 0) return noWorkerWords(w, taskQueue);
  const p = live[0]!;
  const others = live.length > 1 ? ` (and ${live.length - 1} more)` : '';
  return (
    `the workflow did not answer the progress query within ${QUERY_TIMEOUT_MS / 1000} s, although Temporal lists a poller of ${tq}: ` +
    `${p.identity}${others} began its last poll ${secs(p.ageMs)} ago${heartbeatWords(w.workers?.get(p.identity), true)}. ` +
    `An idle worker renews its poll about every 60 s, so a worker that died less than ${secs(POLLER_FRESH_MS)} ago looks the same; ` +
    `a running one may be overloaded or failing: check that it runs and see its logs`
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
  const workers = await taskQueueWorkers(client, namespace, desc.taskQueue).catch(() => undefined);
  if (!workers) return `${ended}${late}; ${shown}`;
  return `${ended}${workersNote(workers, desc.taskQueue)}; ${shown}`;
}

/**
 * Status of a plan: the workflow's live view (progress query) when a worker answers within
 * {@link QUERY_TIMEOUT_MS}, else the plan's written status with a note saying why — no worker
 * polling the workflow's task queue (DescribeTaskQueue), or workers that poll but do not answer.
 * A query is answered by a worker only; without one Temporal holds it until its own deadline,
 * so the query's gRPC deadline bounds the wait.
 */
export async function status(ctx: CliContext, name: string): Promise<PlanStatusView> {
  const { plan, client: connected } = await planAndClient(ctx, name);
  const shown = 'shown: the status the plan last wrote';
  if (connected.status === 'rejected')
    // The plan's own status still answers: show it, and say Temporal is what could not be reached.
    return {
      plan,
      live: undefined,
      note: `${(connected.reason as Error).message}; ${shown}`,
      unreachable: true,
    };
  const client = connected.value;
  const id = workflowIdOf(plan, name);
  const handle = client.workflow.getHandle(id);
  try {
    try {
      // A closed workflow is not queried: a worker would replay its whole history to answer, and a
      // terminated one answers with its state before the end (Running), not what became of it. The
      // query's reject condition NOT_OPEN has the server answer for a closed workflow with its
      // status, without a worker and without a separate DescribeWorkflowExecution call.
      const live = await client.connection.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () =>
        handle.query(progressQuery),
      );
      return { plan, live };
    } catch (err) {
      if (err instanceof QueryRejectedError)
        return { plan, live: undefined, ...closedNote(plan, closeStatusName(err.status), name) };
      const missing = missingWorkflowNote(ctx, plan, id, err);
      if (missing) return { plan, live: undefined, note: `${missing}; ${shown}` };
      return { plan, live: undefined, note: await noAnswerNote(client, handle, ctx.temporalNamespace, err) };
    }
  } finally {
    await client.connection.close();
  }
}

/**
 * The name of a workflow execution status as the SDK's `describe()` gives it (`TERMINATED`,
 * `CANCELLED`), from the enum value a rejected query carries
 * (`temporal.api.enums.v1.WorkflowExecutionStatus`); `UNKNOWN` for another value. Pure.
 */
export function closeStatusName(status: number | null | undefined): string {
  const names = [
    'UNSPECIFIED',
    'RUNNING',
    'COMPLETED',
    'FAILED',
    'CANCELLED',
    'TERMINATED',
    'CONTINUED_AS_NEW',
    'TIMED_OUT',
    'PAUSED',
  ];
  return names[status ?? -1] ?? 'UNKNOWN';
}

/**
 * The note of `status` for a closed workflow (pure): none when the plan shows what became of it (a
 * phase its workflow closes in, the operator's Workflow* reason included); otherwise that the workflow
 * closed though the plan still reads a phase that expects it to run, and what to do.
 */
export function closedNote(
  plan: Pick<MaintenancePlan, 'status'>,
  closeStatus: string,
  name: string,
): { note?: string } {
  const phase = plan.status?.phase;
  if (!expectsRunningWorkflow(phase, plan.status?.reason)) return {};
  const ended = `the workflow has ended (${closeStatus}) but the plan still reads ${phase ?? 'no phase'}`;
  if (!closedWorkflowReason(closeStatus))
    return {
      note: `${ended}: the workflow's last status write has not arrived yet; ask again (if it stays so, see the worker's logs); shown: the status the plan last wrote`,
    };
  return {
    note: `${ended}: the operator marks such a plan Failed at its next resync (--resync-seconds); if that does not happen, is the operator running?; drainflow abort ${name} has the operator hand back its nodes; shown: the status the plan last wrote`,
  };
}

/**
 * Why Temporal has no such workflow, or undefined when `err` says something else: the namespace
 * does not exist on this server, or the workflow the operator recorded in the plan's status is not
 * there (a different Temporal server or namespace than the operator's), or the operator refused the
 * plan (Failed/InvalidSpec, the condition's message quoted), or the plan has no workflow yet (the
 * operator has not started one).
 */
export function missingWorkflowNote(
  ctx: Pick<CliContext, 'temporalAddress' | 'temporalNamespace'>,
  plan: Pick<MaintenancePlan, 'status'>,
  workflowId: string,
  err: unknown,
): string | undefined {
  const server = `the Temporal server at ${ctx.temporalAddress}`;
  const settings = '--temporal-address / TEMPORAL_ADDRESS, --temporal-namespace / TEMPORAL_NAMESPACE';
  const recorded = plan.status?.workflow;
  if (err instanceof NamespaceNotFoundError || /namespace not found/i.test((err as Error)?.message ?? ''))
    return `${server} has no namespace "${ctx.temporalNamespace}"${
      recorded ? ` (the operator started this plan's workflow in namespace "${recorded.namespace}")` : ''
    }: is this the Temporal the operator uses? (${settings})`;
  if (!(err instanceof WorkflowNotFoundError)) return undefined;
  if (recorded)
    return `workflow ${workflowId}, which the operator recorded in the plan's status (namespace "${recorded.namespace}"), was not found on ${ctx.temporalAddress}/${ctx.temporalNamespace}: this CLI may point at another Temporal than the operator's (${settings}), or Temporal has deleted the workflow's history after its retention period`;
  const s = plan.status;
  if (s?.phase === 'Failed' && s.reason === 'InvalidSpec') {
    const refused = s.conditions?.find(
      (c) => c.type === 'Progressing' && c.reason === 'InvalidSpec',
    )?.message;
    return `the operator refused this plan and started no workflow for it (Failed/InvalidSpec): "${refused ?? s.message ?? 'invalid spec'}"; correct what it names (a field that cannot change after creation needs a new plan: delete this one and create a corrected one)`;
  }
  return `the plan has no workflow yet (none recorded in its status, and ${server} has none named ${workflowId}): is the operator running?`;
}

/** Final phases in which `watch` stops. */
const DONE: ReadonlySet<string> = FINAL_PLAN_PHASES;

/**
 * Shows the plan live until it reaches a final phase (or forever with `follow`). Redraws in place
 * on a terminal; otherwise prints one block per change of the plan's status (a countdown that
 * ticks is not a change).
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
    // Off a terminal a block is printed only when the status changed: the countdowns in the text
    // change every second, so the comparison renders at a fixed time.
    const fixed = renderPlan(plan, 0);
    if (out.isTTY) {
      out.write(`\x1b[H\x1b[2J${text}\n`);
    } else if (fixed !== last) {
      out.write(`${text}\n\n`);
    }
    last = fixed;
    const done = opts.until ? status && opts.until(status) : status?.phase && DONE.has(status.phase);
    if (done && !opts.follow) return status;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 1000));
  }
}
