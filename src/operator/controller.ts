/**
 * The plan controller: an informer on MaintenancePlans feeding a per-plan serial queue, and the
 * reconcile of one plan (DESIGN §2 "operator"). Thin by design — the workflow does the drain and
 * writes the status; the controller only
 *
 * - adds the finalizer and starts the plan's workflow once (workflow ID {@link planWorkflowId},
 *   reuse policy REJECT_DUPLICATE, so a finished plan is never re-run),
 * - relays changes of spec.paused / spec.abort / spec.release as signals,
 * - on deletion aborts a running workflow, waits for it to hand the nodes back, and removes the
 *   finalizer; when the workflow is not running (terminated, failed, timed out, cancelled, completed
 *   or unknown to Temporal) it hands back itself what the plan still claims ({@link
 *   PlanController.handBackClaimedNodes}) before removing the finalizer.
 *
 * It acts only when the plan is new to it, when metadata.generation changed (a spec change), or when
 * deletion started. A status-only update (the workflow's own status writes) leads to no API call and
 * no Temporal call at all: the generation last handled is kept per plan UID in memory, so after a
 * (re)start every plan is reconciled once — idempotently: an existing workflow is never started
 * again, and the flags are re-asserted only when the workflow has not seen the current generation.
 */
import {
  CoreV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import type { Logger } from 'pino';
import { ZodError } from 'zod';
import { createActivities } from '../activities/index.js';
import type { PlanRef } from '../activities/types.js';
import {
  FINALIZER,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  UncordonPolicySchema,
  parseSpec,
  type MaintenancePlan,
  type MaintenancePlanSpec,
  type PlanPhase,
  type UncordonPolicy,
} from '../api/plan.js';
import { listClaimedNodes } from '../k8s/node-claim.js';
import type { RunConfig } from '../shared/config.js';
import type { DrainflowMetrics } from '../shared/http.js';
import {
  abortSignal,
  pauseSignal,
  planWorkflowId,
  releaseSignal,
  resumeSignal,
  type ControlArgs,
  type DrainPlanInput,
  type DrainPlanResult,
} from '../workflows/messages.js';
import { PLANS_PATH, PlanApi, asPlan } from './plans.js';
import { KeyedQueue, type HandlerResult } from './queue.js';
import type { SignalDefinition } from '@temporalio/common';

/** Workflow type the operator starts (by name: the operator does not import workflow code). */
export const PLAN_WORKFLOW_TYPE = 'drainPlanWorkflow';

/** How long one reconcile waits for an aborted workflow to close on deletion before re-queueing. */
export const CLEANUP_WAIT_MS = 5 * 60_000;

/** Re-queue delay after the cleanup wait timed out. */
const CLEANUP_REQUEUE_MS = 5_000;

/** Backoff of informer restarts after errors: 1 s doubling to 30 s. */
const INFORMER_BASE_BACKOFF_MS = 1000;
const INFORMER_MAX_BACKOFF_MS = 30_000;

/** Dependencies of {@link PlanController}. */
export interface ControllerDeps {
  kubeConfig: KubeConfig;
  client: Client;
  config: RunConfig;
  logger: Logger;
  metrics: DrainflowMetrics;
}

/** The spec flags the operator relays as signals. */
interface Flags {
  paused: boolean;
  abort: boolean;
  release: boolean;
}

/** What the operator remembers of one plan (by UID), in memory only. */
interface Memory {
  name: string;
  /** metadata.generation last handled successfully. */
  generation: number;
  /** Whether the plan's workflow exists (started by us or found). */
  started: boolean;
  /** The flags the workflow has been told (its input, then signals). */
  relayed?: Flags;
  /** Abort sent for the deletion. */
  abortSent?: boolean;
  /** Finalizer removed: nothing left to do for this UID. */
  cleanedUp?: boolean;
}

/** The latest state of one plan name, as the informer reported it. */
interface Latest {
  obj: MaintenancePlan;
  deleted: boolean;
}

type EventType = 'Normal' | 'Warning';

/** Informer + queue + reconcile of MaintenancePlans. Start with {@link start}, stop with {@link stop}. */
export class PlanController {
  private readonly log: Logger;
  private readonly plans: PlanApi;
  private readonly queue: KeyedQueue;
  /**
   * The worker's activity implementations, called in-process (no Temporal): `recordEvent` for the
   * plan's Events and `releaseNode` for the deletion hand-back without a workflow.
   */
  private readonly activities: ReturnType<typeof createActivities>;
  /** Node list of the hand-back without a workflow ({@link listClaimedNodes}). */
  private readonly core: CoreV1Api;
  private informer: (Informer<KubernetesObject> & ObjectCache<KubernetesObject>) | undefined;
  private readonly latest = new Map<string, Latest>();
  private readonly memory = new Map<string, Memory>();
  private synced = false;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartDelayMs = 0;
  private gaugeScheduled = false;

  constructor(private readonly deps: ControllerDeps) {
    this.log = deps.logger;
    this.plans = new PlanApi(deps.kubeConfig);
    this.queue = new KeyedQueue((key, signal) => this.handle(key, signal), this.log);
    this.activities = createActivities({
      kubeConfig: deps.kubeConfig,
      logger: this.log.child({ part: 'activities' }),
    });
    this.core = deps.kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Whether the first list of plans has completed (the cache is synced). */
  ready(): boolean {
    return this.synced && !this.stopped;
  }

  /** Starts the informer (list, then watch from the list's resourceVersion). */
  async start(): Promise<void> {
    const selector = this.deps.config.planSelector;
    const informer = makeInformer<KubernetesObject>(
      this.deps.kubeConfig,
      PLANS_PATH,
      async () => {
        const list = await this.plans.list(selector);
        if (!this.synced) this.log.info({ plans: list.items.length }, 'plans listed; cache synced');
        else this.log.info({ plans: list.items.length }, 'plans re-listed');
        this.synced = true;
        this.restartDelayMs = 0;
        return list;
      },
      selector,
    );
    informer.on('add', (obj) => this.onEvent(asPlan(obj), false));
    informer.on('update', (obj) => this.onEvent(asPlan(obj), false));
    informer.on('delete', (obj) => this.onEvent(asPlan(obj), true));
    informer.on('error', (err) => this.onInformerError(err));
    this.informer = informer;
    this.log.info({ path: PLANS_PATH }, 'watching MaintenancePlans');
    await informer.start();
  }

  /** Stops the informer, aborts long waits, and waits for the running reconciles to return. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.informer?.stop().catch(() => undefined);
    await this.queue.close();
    this.log.info('stopped watching MaintenancePlans');
  }

  // ------------------------------------------------------------------ informer plumbing

  private onEvent(obj: MaintenancePlan, deleted: boolean): void {
    if (this.stopped) return;
    const name = obj.metadata?.name;
    if (!name) return;
    this.latest.set(name, { obj, deleted });
    this.restartDelayMs = 0;
    this.scheduleGauge();
    this.queue.add(name);
  }

  private onInformerError(err: unknown): void {
    if (this.stopped) return;
    this.restartDelayMs = Math.min(
      INFORMER_MAX_BACKOFF_MS,
      this.restartDelayMs ? this.restartDelayMs * 2 : INFORMER_BASE_BACKOFF_MS,
    );
    this.log.warn(
      { err, retryInMs: this.restartDelayMs },
      'watching MaintenancePlans failed; restarting the informer',
    );
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopped || !this.informer) return;
      this.informer.start().catch((e: unknown) => this.onInformerError(e));
    }, this.restartDelayMs);
  }

  /** UIDs of plans whose drain duration this process has recorded. */
  private readonly durationObserved = new Set<string>();

  /** drainflow_plans{phase}: recounted from the cache (no API call), at most once per tick. */
  private scheduleGauge(): void {
    if (this.gaugeScheduled) return;
    this.gaugeScheduled = true;
    setImmediate(() => {
      this.gaugeScheduled = false;
      if (!this.informer) return;
      const counts = new Map<string, number>();
      this.deps.metrics.planDeadline.reset();
      for (const p of this.informer.list()) {
        const plan = asPlan(p);
        const phase = plan.status?.phase ?? 'Pending';
        counts.set(phase, (counts.get(phase) ?? 0) + 1);
        // drainflow_plan_deadline_timestamp_seconds: started plans without a final phase.
        const deadlineMs = Date.parse(plan.status?.deadline ?? '');
        if (!plan.status?.completedAt && Number.isFinite(deadlineMs))
          this.deps.metrics.planDeadline.set({ plan: plan.metadata.name }, deadlineMs / 1000);
        // drainflow_drain_duration_seconds: once per plan (this process), when it has ended.
        const { startedAt, completedAt } = plan.status ?? {};
        if (startedAt && completedAt && !this.durationObserved.has(plan.metadata.uid)) {
          this.durationObserved.add(plan.metadata.uid);
          this.deps.metrics.drainDuration.observe(
            { phase },
            (Date.parse(completedAt) - Date.parse(startedAt)) / 1000,
          );
        }
      }
      this.deps.metrics.plansByPhase.reset();
      for (const [phase, n] of counts) this.deps.metrics.plansByPhase.set({ phase }, n);
    });
  }

  // ------------------------------------------------------------------ reconcile

  /** One queue run for a plan name: the latest object the informer reported. */
  private async handle(name: string, signal: AbortSignal): Promise<HandlerResult | void> {
    const entry = this.latest.get(name);
    if (!entry) return;
    if (entry.deleted) {
      await this.forget(entry.obj.metadata.uid, name); // throws → retried with the tombstone still there
      if (this.latest.get(name) === entry) this.latest.delete(name);
      return;
    }
    // A plan deleted and re-created under the same name between two runs: finish the old UID first.
    for (const [uid, mem] of this.memory) {
      if (mem.name === name && uid !== entry.obj.metadata.uid) await this.forget(uid, name);
    }
    return this.reconcile(entry.obj, signal);
  }

  /**
   * The plan with this UID is gone. Normally it was cleaned up through the finalizer; if it
   * disappeared without that (finalizer removed by hand) and its workflow still runs, abort the
   * workflow so the nodes are handed back rather than held forever.
   */
  private async forget(uid: string, name: string): Promise<void> {
    const mem = this.memory.get(uid);
    if (mem?.started && !mem.cleanedUp && !mem.abortSent) {
      const workflowId = planWorkflowId({ name, uid });
      const log = this.log.child({ plan: name, workflowId });
      const desc = await this.describe(workflowId);
      if (desc?.status.name === 'RUNNING') {
        log.warn('plan deleted without the finalizer cleanup; aborting its workflow to hand the nodes back');
        await this.sendSignal(log, { name, uid }, workflowId, abortSignal, 'cleanup', {});
      }
    }
    this.memory.delete(uid);
  }

  private async reconcile(plan: MaintenancePlan, signal: AbortSignal): Promise<HandlerResult | void> {
    const { name, uid } = plan.metadata;
    const generation = plan.metadata.generation ?? 0;
    const workflowId = planWorkflowId({ name, uid });
    const log = this.log.child({ plan: name, workflowId });
    let mem = this.memory.get(uid);

    if (plan.metadata.deletionTimestamp) {
      if (!(plan.metadata.finalizers ?? []).includes(FINALIZER) || mem?.cleanedUp) return;
      return this.cleanup(plan, workflowId, log, signal);
    }
    if (mem && mem.generation === generation) {
      log.debug({ generation }, 'no spec change; nothing to do');
      return;
    }

    let spec: MaintenancePlanSpec | undefined;
    let invalid: string | undefined;
    try {
      spec = parseSpec(plan.spec ?? {});
    } catch (err) {
      invalid =
        err instanceof ZodError
          ? err.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ')
          : String(err);
    }

    // First sight of this UID since the operator started: does the workflow exist already?
    if (!mem) {
      const desc = await this.describe(workflowId);
      if (desc) {
        // generation -1 until this run succeeds, so a failed relay is retried (asserting every flag).
        mem = { name, generation: -1, started: true };
        this.memory.set(uid, mem);
        log.info({ status: desc.status.name, generation }, 'workflow exists already; not starting it again');
        await this.ensureFinalizer(plan, log);
        if (desc.status.name === 'RUNNING' && spec && (plan.status?.observedGeneration ?? 0) < generation) {
          // The workflow has not seen this generation (a relay may have been lost with the previous
          // operator): assert every flag; the workflow treats repeats as no-ops.
          await this.relay(log, plan, workflowId, undefined, spec);
        }
        mem.relayed = spec ? flagsOf(spec) : undefined;
        mem.generation = generation;
        return;
      }
      mem = { name, generation: -1, started: false };
      this.memory.set(uid, mem);
    }

    if (!mem.started) {
      if (!spec) {
        await this.markInvalid(plan, invalid ?? 'invalid spec', log);
        mem.generation = generation;
        return;
      }
      if (!(await this.ensureFinalizer(plan, log))) return; // gone or being deleted: the next event says which
      if (plan.status?.workflow?.workflowId === workflowId) {
        // It ran before and Temporal no longer knows it (history past retention): never re-run a plan.
        log.warn('the plan records a workflow Temporal no longer knows; not starting it again');
        mem.started = true;
        mem.relayed = flagsOf(spec);
        mem.generation = generation;
        return;
      }
      await this.startWorkflow(plan, spec, workflowId, log);
      mem.started = true;
      mem.relayed = flagsOf(spec);
      mem.generation = generation;
      return;
    }

    // Spec change of a plan whose workflow exists: relay the flags that changed.
    if (!spec) {
      log.warn({ generation, invalid }, 'spec changed to an invalid one; not relayed');
      await this.event(
        plan,
        'Warning',
        'InvalidSpec',
        `spec of generation ${generation} not relayed to the running workflow: ${invalid}`,
      );
      mem.generation = generation;
      return;
    }
    await this.relay(log, plan, workflowId, mem.relayed, spec);
    mem.relayed = flagsOf(spec);
    mem.generation = generation;
  }

  /**
   * Sends the signals that bring the workflow from `before` (undefined: unknown, assert all) to
   * the flags of `spec`, each with the plan's generation.
   */
  private async relay(
    log: Logger,
    plan: MaintenancePlan,
    workflowId: string,
    before: Flags | undefined,
    spec: MaintenancePlanSpec,
  ): Promise<void> {
    const ref = { name: plan.metadata.name, uid: plan.metadata.uid };
    const args: ControlArgs = { generation: plan.metadata.generation ?? 0 };
    if (before === undefined || before.paused !== spec.paused) {
      if (
        !(await this.sendSignal(
          log,
          ref,
          workflowId,
          spec.paused ? pauseSignal : resumeSignal,
          'signal',
          args,
        ))
      )
        return;
    }
    if (spec.release && (before === undefined || !before.release)) {
      if (!(await this.sendSignal(log, ref, workflowId, releaseSignal, 'signal', args))) return;
    }
    if (spec.abort && (before === undefined || !before.abort)) {
      await this.sendSignal(log, ref, workflowId, abortSignal, 'signal', args);
    }
    if (before && before.abort && !spec.abort)
      log.warn('spec.abort was reset to false; an abort cannot be undone');
    if (
      before &&
      before.paused === spec.paused &&
      before.release === spec.release &&
      before.abort === spec.abort
    ) {
      // No flag changed (e.g. toggled and back): restate the pause state (a no-op for the
      // workflow) so it records the generation and status.observedGeneration catches up.
      await this.sendSignal(log, ref, workflowId, spec.paused ? pauseSignal : resumeSignal, 'signal', args);
    }
  }

  /** Signals the workflow. @returns false when the workflow is closed or unknown (not an error). */
  private async sendSignal(
    log: Logger,
    plan: { name: string; uid: string },
    workflowId: string,
    def: SignalDefinition<[ControlArgs?]>,
    action: 'signal' | 'cleanup',
    args: ControlArgs,
  ): Promise<boolean> {
    try {
      await this.deps.client.workflow.getHandle(workflowId).signal(def, args);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        log.info({ signal: def.name }, 'workflow closed; signal not sent');
        return false;
      }
      throw err;
    }
    this.deps.metrics.operatorActions.inc({ action });
    log.info({ signal: def.name, generation: args.generation }, 'signal sent');
    await this.event(
      plan,
      'Normal',
      'SignalSent',
      `sent ${def.name}${args.generation !== undefined ? ` (generation ${args.generation})` : ''} to workflow ${workflowId}`,
    );
    return true;
  }

  private async startWorkflow(
    plan: MaintenancePlan,
    spec: MaintenancePlanSpec,
    workflowId: string,
    log: Logger,
  ): Promise<void> {
    const { config, client, metrics } = this.deps;
    const input: DrainPlanInput = {
      plan: { name: plan.metadata.name, uid: plan.metadata.uid, generation: plan.metadata.generation ?? 0 },
      spec,
      ...(config.temporalUiUrl ? { temporalUiUrl: config.temporalUiUrl } : {}),
    };
    try {
      const handle = await client.workflow.start(PLAN_WORKFLOW_TYPE, {
        taskQueue: config.taskQueue,
        workflowId,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: `MaintenancePlan ${plan.metadata.name}`,
      });
      metrics.operatorActions.inc({ action: 'start' });
      log.info({ runId: handle.firstExecutionRunId, taskQueue: config.taskQueue }, 'workflow started');
      await this.event(
        plan,
        'Normal',
        'WorkflowStarted',
        `started Temporal workflow ${workflowId} (run ${handle.firstExecutionRunId}) on task queue ${config.taskQueue}`,
      );
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        log.info('workflow already started; not starting it again');
        return;
      }
      throw err;
    }
  }

  /**
   * Deletion: abort a running workflow and wait (bounded) for it to hand the nodes back; then (and
   * right away when the workflow is not RUNNING: TERMINATED, FAILED, TIMED_OUT, CANCELED,
   * COMPLETED, CONTINUED_AS_NEW or unknown to Temporal) hand back whatever the plan still claims
   * ({@link handBackClaimedNodes}), and remove the finalizer. A hand-back error throws: the queue
   * retries with backoff and the finalizer stays.
   */
  private async cleanup(
    plan: MaintenancePlan,
    workflowId: string,
    log: Logger,
    signal: AbortSignal,
  ): Promise<HandlerResult | void> {
    const { name, uid } = plan.metadata;
    let mem = this.memory.get(uid);
    if (!mem) {
      mem = { name, generation: plan.metadata.generation ?? 0, started: false };
      this.memory.set(uid, mem);
    }
    const handle =
      this.deps.client.workflow.getHandle<(input: DrainPlanInput) => Promise<DrainPlanResult>>(workflowId);
    const desc = await this.describe(workflowId);
    let outcome: string;
    if (desc?.status.name === 'RUNNING') {
      mem.started = true;
      if (!mem.abortSent) {
        log.info('plan deleted; aborting its workflow to hand the nodes back');
        const sent = await this.sendSignal(log, { name, uid }, workflowId, abortSignal, 'cleanup', {
          generation: plan.metadata.generation ?? 0,
        });
        mem.abortSent = true;
        if (sent)
          await this.event(
            plan,
            'Normal',
            'CleanupStarted',
            `plan deleted: aborted workflow ${workflowId}; waiting for it to hand the nodes back`,
          );
      }
      const res = await this.waitClosed(handle, CLEANUP_WAIT_MS, signal);
      if (res.state === 'stopped') return;
      if (res.state !== 'closed') {
        log.warn({ waitedMs: CLEANUP_WAIT_MS }, 'workflow still running after abort; waiting again');
        return { requeueAfterMs: CLEANUP_REQUEUE_MS };
      }
      outcome = res.outcome;
    } else {
      outcome = desc
        ? `workflow ${workflowId} already closed (${desc.status.name})`
        : `no workflow ${workflowId}`;
    }
    // A workflow that closed after the abort has handed its nodes back (normally nothing is left);
    // one that was terminated, failed or timed out never will: hand back what is left here.
    const handedBack = await this.handBackClaimedNodes(plan, outcome, log);
    if (handedBack.length > 0) outcome += `; handed back ${handedBack.join(', ')}`;
    await this.event(plan, 'Normal', 'CleanupFinished', `${outcome}; removing the finalizer`);
    await this.plans.removeFinalizer(name, uid);
    mem.cleanedUp = true;
    log.info({ outcome }, 'finalizer removed');
  }

  /**
   * Hands back, without a workflow, the nodes that still carry this plan's claim: one paged list of
   * all Nodes ({@link listClaimedNodes}: held-by = plan name and held-by-uid = plan uid or absent),
   * then for each the `releaseNode` activity's own implementation, run in this process: a merge patch
   * guarded by the node's resourceVersion (409 → re-read and retry) that removes the three claim
   * annotations and, when `uncordon` is true and was-unschedulable is not `'true'`, removes
   * `spec.unschedulable` — exactly what the workflow's hand-back on abort does.
   *
   * `uncordon` is `spec.uncordon !== 'Never'` ({@link uncordonOnDelete}), as the workflow's abort uses.
   *
   * Relies on: the workflow being closed (no workflow writes the claims concurrently; Temporal
   * terminates or cancels the per-node child workflows with their parent, and a `cordonNode`
   * activity still in flight on a worker at that moment could claim a node after this sweep — a
   * window of one API call); annotations not being selectable server-side (hence the full list).
   *
   * Records a Normal Event `NodesHandedBack` naming the nodes when it handed any back, and a Warning
   * `NodeHandBackFailed` when some failed.
   *
   * @param why what became of the workflow (for the Event and the log).
   * @returns the nodes handed back, each as `name (uncordoned)` or `name (claim removed, ...)`; empty
   *   when the plan claimed none.
   * @throws Error when a node could not be handed back (the others are handed back first).
   */
  private async handBackClaimedNodes(plan: MaintenancePlan, why: string, log: Logger): Promise<string[]> {
    const ref: PlanRef = { name: plan.metadata.name, uid: plan.metadata.uid };
    const nodes = await listClaimedNodes(this.core, ref);
    if (nodes.length === 0) return [];
    const uncordon = uncordonOnDelete(plan);
    const done: string[] = [];
    const failed: string[] = [];
    for (const n of nodes) {
      const node = n.metadata?.name ?? '';
      try {
        const { uncordoned } = await this.activities.releaseNode({ plan: ref, node, uncordon });
        let how = 'uncordoned';
        if (!uncordoned) {
          how = !uncordon
            ? 'claim removed, left cordoned: uncordon Never'
            : n.metadata?.annotations?.[NODE_WAS_UNSCHEDULABLE_ANNOTATION] === 'true'
              ? 'claim removed, left cordoned: unschedulable before the plan'
              : 'claim removed';
        }
        done.push(`${node} (${how})`);
      } catch (err) {
        log.warn({ node, err }, 'hand-back without a workflow failed; retrying');
        failed.push(`${node}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (done.length > 0) {
      log.info(
        { nodes: done, workflow: why },
        'workflow not running: handed back the nodes the plan still claimed',
      );
      this.deps.metrics.operatorActions.inc({ action: 'cleanup' });
      await this.event(
        plan,
        'Normal',
        'NodesHandedBack',
        `${why}: handed back ${done.length} node(s) the plan still claimed: ${done.join(', ')}`,
      );
    }
    if (failed.length > 0) {
      const message = `${why}: could not hand back ${failed.length} node(s), retrying: ${failed.join('; ')}`;
      await this.event(plan, 'Warning', 'NodeHandBackFailed', message);
      throw new Error(message);
    }
    return done;
  }

  /** Waits for the workflow to close, at most `ms`, or until the controller stops. */
  private async waitClosed(
    handle: WorkflowHandle<(input: DrainPlanInput) => Promise<DrainPlanResult>>,
    ms: number,
    stop: AbortSignal,
  ): Promise<{ state: 'closed'; outcome: string } | { state: 'timeout' | 'stopped' }> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), ms);
    const onStop = () => ac.abort();
    stop.addEventListener('abort', onStop, { once: true });
    try {
      const r = await this.deps.client.withAbortSignal(ac.signal, () => handle.result());
      return { state: 'closed', outcome: `workflow ${handle.workflowId} ended ${r.phase} (${r.reason})` };
    } catch (err) {
      if (stop.aborted) return { state: 'stopped' };
      if (ac.signal.aborted) return { state: 'timeout' };
      if (err instanceof WorkflowFailedError)
        return {
          state: 'closed',
          outcome: `workflow ${handle.workflowId} failed: ${err.cause?.message ?? err.message}`,
        };
      if (err instanceof WorkflowNotFoundError)
        return { state: 'closed', outcome: `no workflow ${handle.workflowId}` };
      throw err;
    } finally {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    }
  }

  /** The workflow's description, or `undefined` when Temporal does not know the ID. */
  private async describe(workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
    try {
      return await this.deps.client.workflow.getHandle(workflowId).describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  }

  /** Adds the finalizer unless the cached object has it. @returns false when the plan is gone or being deleted. */
  private async ensureFinalizer(plan: MaintenancePlan, log: Logger): Promise<boolean> {
    if ((plan.metadata.finalizers ?? []).includes(FINALIZER)) return true;
    const ok = await this.plans.ensureFinalizer(plan.metadata.name, plan.metadata.uid);
    if (ok) log.info({ finalizer: FINALIZER }, 'finalizer added');
    return ok;
  }

  /** Status Failed/InvalidSpec (skipped when already written for this generation) and a Warning Event. */
  private async markInvalid(plan: MaintenancePlan, message: string, log: Logger): Promise<void> {
    const generation = plan.metadata.generation ?? 0;
    log.warn({ generation, invalid: message }, 'invalid spec; not starting a workflow');
    const s = plan.status;
    if (
      s?.phase === 'Failed' &&
      s.reason === 'InvalidSpec' &&
      s.observedGeneration === generation &&
      s.message === message
    )
      return;
    const now = new Date().toISOString();
    await this.plans.patchStatus(plan.metadata.name, {
      phase: 'Failed' satisfies PlanPhase,
      reason: 'InvalidSpec',
      message,
      observedGeneration: generation,
      conditions: [
        {
          type: 'Progressing',
          status: 'False',
          observedGeneration: generation,
          lastTransitionTime: now,
          reason: 'InvalidSpec',
          message,
        },
      ],
    });
    await this.event(plan, 'Warning', 'InvalidSpec', message);
  }

  /** Records an Event on the plan (best effort; recordEvent logs and swallows errors). */
  private async event(
    plan: { metadata: { name: string; uid: string } } | { name: string; uid: string },
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const ref = 'metadata' in plan ? { name: plan.metadata.name, uid: plan.metadata.uid } : plan;
    await this.activities.recordEvent({ plan: ref, type, reason, message });
  }
}

/**
 * Whether a deletion hands the plan's nodes back uncordoned: `spec.uncordon` is OnDelete or OnRelease
 * (not Never), as the workflow's abort does. A spec that does not parse as a whole still has its
 * `uncordon` read on its own; absent or unreadable means the default, OnDelete.
 */
export function uncordonOnDelete(plan: MaintenancePlan): boolean {
  let policy: UncordonPolicy;
  try {
    policy = parseSpec(plan.spec ?? {}).uncordon;
  } catch {
    const raw = UncordonPolicySchema.safeParse((plan.spec as { uncordon?: unknown } | undefined)?.uncordon);
    policy = raw.success ? raw.data : 'OnDelete';
  }
  return policy !== 'Never';
}

function flagsOf(spec: MaintenancePlanSpec): Flags {
  return { paused: spec.paused, abort: spec.abort, release: spec.release };
}
