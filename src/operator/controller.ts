/**
 * The plan controller: an informer on MaintenancePlans feeding a per-plan serial queue, and the
 * reconcile of one plan. Thin by design — the workflow does the drain and
 * writes the status; the controller only
 *
 * - adds the finalizer and starts the plan's workflow once (workflow ID {@link planWorkflowId},
 *   reuse policy REJECT_DUPLICATE, so a finished plan is never re-run),
 * - relays changes of spec.paused / spec.abort / spec.release as signals (a pause or abort to the
 *   plan's running node workflows as well: src/operator/node-stops.ts),
 * - on deletion aborts a running workflow, waits for it to hand the nodes back, and removes the
 *   finalizer; when the workflow is not running (terminated, failed, timed out, cancelled, completed
 *   or unknown to Temporal) it hands back itself what the plan still claims ({@link
 *   PlanController.handBackClaimedNodes}) before removing the finalizer,
 * - marks Failed a plan whose workflow closed (terminated, failed, timed out, cancelled) while the
 *   plan still expected it to run — noticed on first sight, when spec.abort is set, and on a resync
 *   every `--resync-seconds` — and on spec.abort hands such a plan's nodes back itself, with the
 *   same hand-back as a deletion (src/operator/closed-workflow.ts),
 * - writes Pending/AwaitingWorker on a plan whose workflow it started or adopted while the status
 *   has no phase (until a worker runs the workflow nothing else writes it), never over the
 *   workflow's own write ({@link PlanController.markAwaitingWorker}),
 * - records a Warning Event TemporalUnavailable when it cannot describe a plan's workflow (once
 *   per plan per outage; the resync notices it for a running plan) and a Normal TemporalAvailable
 *   when it can again. No status condition: the workflow replaces the whole status on each write
 *   (its own conditions list), so an operator condition would vanish at its next write.
 *
 * Beside it, on every plan the informer reports, status writes included, a {@link
 * NodeConditionProjector} writes the plan's node phases onto its claimed Nodes as the lifecycle
 * conditions MaintenancePlanned / DrainInProgress / Drained (Nodes only, never the plan).
 *
 * It acts only when the plan is new to it, when metadata.generation changed (a spec change), or when
 * deletion started. A status-only update (the workflow's own status writes) leads to no API call and
 * no Temporal call at all — except once for a plan that ended (Failed, Aborted) before its nodes were
 * resolved, whose status.nodesTotal the operator fills in from spec.nodeNames so the Nodes column is
 * not 0. The generation last handled is kept per plan UID in memory, so after a (re)start every plan
 * is reconciled once — idempotently: an existing workflow is never started again, and the flags are
 * re-asserted only when the workflow has not seen the current generation.
 *
 * A reconcile is observe → decide → act: {@link PlanController.observe} gathers the plan, the parsed
 * spec, the memory and (only when needed) the workflow's state; {@link decide} (src/operator/decide.ts,
 * pure, table-tested) returns the actions; {@link PlanController.act} takes them.
 */
import {
  CoreV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
} from '../k8s/client.js';
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
import { createNodeActivities, type NodeActivities } from '../activities/nodes.js';
import {
  FINALIZER,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  UncordonPolicySchema,
  parseSpec,
  type MaintenancePlan,
  type MaintenancePlanSpec,
  type UncordonPolicy,
} from '../api/plan.js';
import { ConditionType, EventReason, PlanPhase, PlanReason } from '../api/reasons.js';
import { CLOSED_WORKFLOW_VERB, closeStatusOfReason, expectsRunningWorkflow } from '../api/closed-workflow.js';
import { apiCode } from '../k8s/errors.js';
import { EventRecorder } from '../k8s/events.js';
import { listClaimedNodes } from '../k8s/node-claim.js';
import { PLANS_PATH, PlanApi, asPlan } from '../k8s/plans.js';
import { CONFLICT, retryOnConflict } from '../k8s/patch.js';
import { createKubernetesPort } from '../k8s/port.js';
import type { RunConfig } from '../shared/settings.js';
import type { DrainflowMetrics } from '../shared/http.js';
import type { DrainPlanInput, DrainPlanResult } from '../workflows/messages.js';
import {
  abortSignal,
  drainTimeoutSignal,
  pauseSignal,
  releaseSignal,
  resumeSignal,
  type ControlArgs,
  type DrainTimeoutArgs,
} from '../contract/plan-messages.js';
import { planWorkflowId, type PlanRef } from '../contract/names.js';
import { taskQueueWorkers } from '../shared/workers.js';
import {
  DELETION_WORKER_GRACE_MS,
  DELETION_WORKER_RECHECK_MS,
  awaitingWorkerStatus,
  decide,
  deletionWaitEvent,
  mayAbortOnForget,
  needsWorkflow,
  temporalReach,
  type Decision,
  type Memory,
  type Observation,
  type PlanView,
  type SignalName,
  type WorkflowState,
} from './decide.js';
import type { ClosedWorkflowReasonName } from '../api/closed-workflow.js';
import { closedWorkflowStatus } from './closed-workflow.js';
import { CANCEL_GRACE_MS, stopPlanChildren } from './stop-children.js';
import { nodeStopWords, stopNodeWorkflows } from './node-stops.js';
import { KeyedQueue, type HandlerResult } from './queue.js';
import { sweepOrphans } from './orphans.js';
import { NodeConditionProjector } from './node-conditions.js';
import { windowAfterDeadline } from '../drain/window-deadline.js';
import { issueWords } from '../api/issue-words.js';
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
  /** Temporal client, namespace set. */
  client: Client;
  config: RunConfig;
  logger: Logger;
  metrics: DrainflowMetrics;
}

/** The latest state of one plan name, as the informer reported it. */
interface Latest {
  obj: MaintenancePlan;
  deleted: boolean;
}

type EventType = 'Normal' | 'Warning';

/** The signal definitions of {@link SignalName}. */
const SIGNALS: Record<SignalName, SignalDefinition<[ControlArgs?]>> = {
  pause: pauseSignal,
  resume: resumeSignal,
  release: releaseSignal,
  abort: abortSignal,
  // Its payload adds spec.drainTimeoutSeconds to the generation (DrainTimeoutArgs).
  drainTimeout: drainTimeoutSignal as SignalDefinition<[ControlArgs?]>,
};

/** Informer + queue + reconcile of MaintenancePlans. Start with {@link start}, stop with {@link stop}. */
export class PlanController {
  private readonly log: Logger;
  private readonly plans: PlanApi;
  private readonly queue: KeyedQueue;
  /** The worker's node activities, called in-process (no Temporal): `releaseNode` for the deletion hand-back without a workflow. */
  private readonly activities: NodeActivities;
  /** The plans' node phases as the Nodes' lifecycle conditions (src/operator/node-conditions.ts). */
  private readonly nodeConditions: NodeConditionProjector;
  /** The plan's Events. */
  private readonly events: EventRecorder;
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
  private resyncTimer: NodeJS.Timeout | undefined;
  /** Plan names queued by the resync: their next run asks Temporal whether the workflow still runs. */
  private readonly resyncDue = new Set<string>();
  /** UIDs of plans whose last describe of their workflow failed: Temporal unreachable ({@link temporalReach}). */
  private readonly temporalDown = new Set<string>();
  private sweepTimer: NodeJS.Timeout | undefined;
  /** The orphan sweep under way, if any ({@link sweep}). */
  private sweeping: Promise<void> | undefined;
  /** Aborted by {@link stop}: a sweep under way ends after its current orphan. */
  private readonly sweepStop = new AbortController();

  constructor(private readonly deps: ControllerDeps) {
    this.log = deps.logger;
    this.plans = new PlanApi(deps.kubeConfig);
    this.queue = new KeyedQueue((key, signal) => this.handle(key, signal), this.log);
    const activityLog = this.log.child({ part: 'activities' });
    const port = createKubernetesPort(deps.kubeConfig, activityLog);
    this.activities = createNodeActivities(port, activityLog);
    this.nodeConditions = new NodeConditionProjector(port, this.log.child({ part: 'node-conditions' }));
    this.events = new EventRecorder(deps.kubeConfig, activityLog);
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
    const every = this.deps.config.resyncSeconds * 1000;
    this.resyncTimer = setInterval(() => this.resync(), every);
    this.resyncTimer.unref();
    // Orphans: once now (as this process starts leading), then every --orphan-sweep-seconds.
    this.sweep();
    this.sweepTimer = setInterval(() => this.sweep(), this.deps.config.orphanSweepSeconds * 1000);
    this.sweepTimer.unref();
  }

  /**
   * Starts one orphan sweep (src/operator/orphans.ts) unless one is under way: the workflows on this
   * task queue and the node claims whose plan no longer exists are ended and their nodes handed
   * back. Errors are logged; the next sweep tries again.
   */
  private sweep(): void {
    if (this.stopped || this.sweeping) return;
    const started = Date.now();
    this.sweeping = sweepOrphans(
      {
        client: this.deps.client,
        core: this.core,
        plans: this.plans,
        activities: this.activities,
        events: this.events,
        taskQueue: this.deps.config.taskQueue,
        workflowType: PLAN_WORKFLOW_TYPE,
        log: this.log.child({ part: 'orphans' }),
      },
      this.sweepStop.signal,
    )
      .then((ended) => {
        if (ended.length > 0) this.deps.metrics.operatorActions.inc({ action: 'orphan' }, ended.length);
        this.log.debug({ ended: ended.length, ms: Date.now() - started }, 'orphan sweep done');
      })
      .catch((err: unknown) =>
        this.log.warn({ err: errorWords(err) }, 'orphan sweep failed; trying again at the next one'),
      )
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  /**
   * Queues every cached plan whose phase still expects a running workflow ({@link
   * expectsRunningWorkflow}) and that this process started or adopted, so its next run asks Temporal
   * whether the workflow closed behind its back ({@link needsWorkflow}); other plans cost nothing.
   */
  private resync(): void {
    if (this.stopped) return;
    for (const [name, entry] of this.latest) {
      const mem = this.memory.get(entry.obj.metadata.uid);
      if (entry.deleted || !mem?.started || mem.closedProjected) continue;
      if (!expectsRunningWorkflow(entry.obj.status?.phase, entry.obj.status?.reason)) continue;
      this.resyncDue.add(name);
      this.queue.add(name);
    }
  }

  /** Stops the informer, aborts long waits, and waits for the running reconciles to return. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepStop.abort();
    await this.sweeping;
    await this.informer?.stop().catch(() => undefined);
    await this.queue.close();
    await this.nodeConditions.close();
    this.log.info('stopped watching MaintenancePlans');
  }

  // ------------------------------------------------------------------ informer plumbing

  private onEvent(obj: MaintenancePlan, deleted: boolean): void {
    if (this.stopped) return;
    const name = obj.metadata?.name;
    if (!name) return;
    this.latest.set(name, { obj, deleted });
    this.nodeConditions.observe(obj, deleted);
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
    const resync = this.resyncDue.delete(name);
    try {
      return await this.reconcile(entry.obj, signal, resync);
    } catch (err) {
      if (resync) this.resyncDue.add(name); // the retry asks again
      throw err;
    }
  }

  /**
   * The plan with this UID is gone. Normally it was cleaned up through the finalizer; if it
   * disappeared without that ({@link mayAbortOnForget}) and its workflow still runs, abort the
   * workflow so the nodes are handed back rather than held forever.
   */
  private async forget(uid: string, name: string): Promise<void> {
    if (mayAbortOnForget(this.memory.get(uid))) {
      const workflowId = planWorkflowId({ name, uid });
      const log = this.log.child({ plan: name, workflowId });
      const desc = await this.describe(workflowId);
      if (desc?.status.name === 'RUNNING') {
        log.warn('plan deleted without the finalizer cleanup; aborting its workflow to hand the nodes back');
        await this.sendSignal(log, { name, uid }, workflowId, abortSignal, 'cleanup', {});
      }
    }
    this.memory.delete(uid);
    this.temporalDown.delete(uid);
  }

  /** One reconcile: observe the plan (and its workflow when needed), {@link decide}, act. */
  private async reconcile(
    plan: MaintenancePlan,
    signal: AbortSignal,
    resync: boolean,
  ): Promise<HandlerResult | void> {
    const obs = await this.observe(plan, resync);
    return this.act(plan, obs, decide(obs), signal);
  }

  /** What {@link decide} reads: the plan, the parsed spec, the memory, and the workflow's state if needed. */
  private async observe(plan: MaintenancePlan, resync: boolean): Promise<Observation> {
    const { name, uid } = plan.metadata;
    const workflowId = planWorkflowId({ name, uid });
    const rawNames = (plan.spec as { nodeNames?: unknown } | undefined)?.nodeNames;
    const view: PlanView = {
      name,
      uid,
      generation: plan.metadata.generation ?? 0,
      deleting: Boolean(plan.metadata.deletionTimestamp),
      hasFinalizer: (plan.metadata.finalizers ?? []).includes(FINALIZER),
      ...(plan.status?.workflow?.workflowId ? { statusWorkflowId: plan.status.workflow.workflowId } : {}),
      ...(plan.status?.workflow?.namespace
        ? { statusWorkflowNamespace: plan.status.workflow.namespace }
        : {}),
      observedGeneration: plan.status?.observedGeneration ?? 0,
      ...(plan.status?.phase ? { phase: plan.status.phase } : {}),
      ...(plan.status?.reason ? { reason: plan.status.reason } : {}),
      nodesTotal: plan.status?.nodesTotal ?? 0,
      statusNodes: plan.status?.nodes?.length ?? 0,
      nodeNames: Array.isArray(rawNames) ? rawNames.length : 0,
    };
    const memory = this.memory.get(uid);
    const obs: Observation = {
      plan: view,
      workflowId,
      temporalNamespace: this.deps.config.temporalNamespace,
      ...(memory ? { memory } : {}),
      ...(resync ? { resync } : {}),
    };
    if (!view.deleting) {
      try {
        obs.spec = parseSpec(plan.spec ?? {});
        const created = Date.parse(plan.metadata.creationTimestamp ?? '');
        const late = windowAfterDeadline(obs.spec, Number.isNaN(created) ? Date.now() : created);
        if (late) obs.startProblem = late;
      } catch (err) {
        obs.invalid = err instanceof ZodError ? issueWords(err, plan.spec ?? {}) : String(err);
      }
    }
    if (needsWorkflow(obs)) obs.workflow = await this.workflowState(plan, workflowId);
    return obs;
  }

  /**
   * The plan's workflow as Temporal describes it. Records a Warning Event TemporalUnavailable when
   * the describe fails for a plan not known unreachable, and a Normal TemporalAvailable when it
   * succeeds again ({@link temporalReach}: one of each per plan per outage; the resync every
   * `--resync-seconds` is what notices both for a running plan).
   * @throws the client's error when Temporal cannot be reached (the queue retries the plan).
   */
  private async workflowState(plan: MaintenancePlan, workflowId: string): Promise<WorkflowState> {
    let desc: WorkflowExecutionDescription | undefined;
    try {
      desc = await this.describe(workflowId);
    } catch (err) {
      await this.noteReach(plan, workflowId, errorWords(err));
      throw err;
    }
    await this.noteReach(plan, workflowId, undefined);
    if (!desc) return { state: 'absent' };
    if (desc.status.name === 'RUNNING') return { state: 'running', taskQueue: desc.taskQueue };
    return { state: 'closed', status: desc.status.name };
  }

  /** Remembers whether Temporal answered for this plan and records the Event {@link temporalReach} asks for. */
  private async noteReach(
    plan: MaintenancePlan,
    workflowId: string,
    error: string | undefined,
  ): Promise<void> {
    const { uid, name } = plan.metadata;
    const address = this.deps.config.temporalAddress;
    const { down, event } = temporalReach(this.temporalDown.has(uid), error, address, workflowId);
    if (down) this.temporalDown.add(uid);
    else this.temporalDown.delete(uid);
    if (!event) return;
    if (event.type === 'Warning')
      this.log.warn({ plan: name, workflowId, address, error }, 'cannot reach Temporal');
    else this.log.info({ plan: name, workflowId, address }, 'reached Temporal again');
    await this.event(plan, event.type, event.reason, event.message);
  }

  /**
   * Carries out a {@link Decision}: remembers `before`, takes the actions in order, then remembers
   * `after`. An action that throws leaves `before` remembered (the queue retries the plan).
   */
  private async act(
    plan: MaintenancePlan,
    obs: Observation,
    decision: Decision,
    signal: AbortSignal,
  ): Promise<HandlerResult | void> {
    const { uid } = plan.metadata;
    const { workflowId } = obs;
    const log = this.log.child({ plan: plan.metadata.name, workflowId });
    if (decision.before) this.memory.set(uid, { ...decision.before });
    const ref = { name: plan.metadata.name, uid };
    const args: ControlArgs = { generation: plan.metadata.generation ?? 0 };
    let signalsStopped = false;
    for (const action of decision.actions) {
      switch (action.type) {
        case 'log':
          log[action.level](action.fields ?? {}, action.msg);
          break;
        case 'cleanup':
          return this.cleanup(plan, workflowId, log, signal, action);
        case 'ensureFinalizer':
          if (!(await this.ensureFinalizer(plan, log)) && action.stopIfGone) return;
          break;
        case 'startWorkflow':
          await this.startWorkflow(plan, obs.spec!, workflowId, log);
          break;
        case 'markAwaitingWorker':
          await this.markAwaitingWorker(
            plan,
            workflowId,
            action.taskQueue ?? this.deps.config.taskQueue,
            log,
          );
          break;
        case 'markInvalid':
          await this.markInvalid(plan, action.message, log);
          break;
        case 'warnEvent':
          await this.event(plan, 'Warning', action.reason, action.message);
          break;
        case 'normalEvent':
          log.info({ reason: action.reason }, action.message);
          await this.event(plan, 'Normal', action.reason, action.message);
          break;
        case 'signal':
          if (signalsStopped) break;
          signalsStopped = !(await this.sendSignal(
            log,
            ref,
            workflowId,
            SIGNALS[action.signal],
            'signal',
            action.signal === 'drainTimeout'
              ? ({ ...args, drainTimeoutSeconds: obs.spec?.drainTimeoutSeconds } as DrainTimeoutArgs)
              : args,
          ));
          break;
        case 'writeNodeCount':
          await this.writeNodeCount(plan, action.nodesTotal, log);
          break;
        case 'closedWorkflow':
          await this.closedWorkflow(plan, workflowId, action, log);
          break;
      }
    }
    if (decision.after) this.memory.set(uid, { ...decision.after });
  }

  /**
   * Writes the Pending/AwaitingWorker status ({@link awaitingWorkerStatus}) on a plan whose status
   * has no phase, so `kubectl get mp` says what the plan waits for until a worker runs its workflow.
   * Never over a status the workflow wrote: the plan is read fresh and the merge patch is guarded by
   * its resourceVersion; a 409 Conflict reads again, and a plan that has a phase by then (the
   * workflow's own write won), is gone, or is another plan of that name is left alone. Best effort:
   * an error is logged, not retried (the workflow writes its own status once a worker runs it).
   */
  private async markAwaitingWorker(
    plan: MaintenancePlan,
    workflowId: string,
    taskQueue: string,
    log: Logger,
  ): Promise<void> {
    const { name, uid } = plan.metadata;
    const status = awaitingWorkerStatus(workflowId, taskQueue, new Date().toISOString());
    try {
      const written = await retryOnConflict(`maintenanceplans/${name} status Pending`, async () => {
        const fresh = await this.plans.get(name);
        if (!fresh || fresh.metadata.uid !== uid || fresh.status?.phase) return false;
        try {
          await this.plans.patchStatusGuarded(fresh, status);
          return true;
        } catch (err) {
          const code = apiCode(err);
          if (code === 409) return CONFLICT;
          if (code === 404) return false;
          throw err;
        }
      });
      if (written) log.info({ taskQueue }, 'plan status Pending: waiting for a worker to run its workflow');
    } catch (err) {
      log.warn(
        { err },
        'writing the Pending status failed; the workflow writes its own once a worker runs it',
      );
    }
  }

  /**
   * Writes status.nodesTotal of a plan that ended before its nodes were resolved ({@link
   * missingNodeCount}), so `kubectl get mp` shows how many nodes it names. Its workflow has ended
   * (the phase is final), so no later status write of the workflow undoes it. A plan that is gone is
   * not an error.
   */
  private async writeNodeCount(plan: MaintenancePlan, nodesTotal: number, log: Logger): Promise<void> {
    try {
      await this.plans.patchStatus(plan.metadata.name, { nodesTotal });
      log.info(
        { nodesTotal, phase: plan.status?.phase },
        'recorded the node count of a plan that ended early',
      );
    } catch (err) {
      if (apiCode(err) === 404) return;
      throw err;
    }
  }

  /**
   * A workflow that closed while the plan expected it to run ({@link closedWorkflowAction}): with
   * `handBack` (spec.abort) hands back what the plan still claims ({@link handBackClaimedNodes}, as
   * on deletion), then writes the status of src/operator/closed-workflow.ts — Failed, or Aborted once
   * handed back — on the plan read fresh, replaced with its resourceVersion (a concurrent writer makes
   * it fail with 409 and the queue retries). Nothing is written when the fresh plan is gone, another
   * plan of that name, or meanwhile in a phase its workflow closes in (its own last status write won).
   * `warn`: one Warning Event WorkflowClosed with the status message.
   */
  private async closedWorkflow(
    plan: MaintenancePlan,
    workflowId: string,
    action: { reason: ClosedWorkflowReasonName; handBack: boolean; warn: boolean },
    log: Logger,
  ): Promise<void> {
    const closeStatus = closeStatusOfReason(action.reason) ?? 'TERMINATED';
    let handedBack: string[] | undefined;
    await this.stopChildren(
      plan,
      workflowId,
      `the plan's workflow ${workflowId} ${CLOSED_WORKFLOW_VERB[closeStatus]}`,
      log,
    );
    if (action.handBack) {
      const why = `spec.abort of a plan whose workflow ${workflowId} ${CLOSED_WORKFLOW_VERB[closeStatus]}`;
      handedBack = await this.handBackClaimedNodes(plan, why, log);
    }
    const fresh = await this.plans.get(plan.metadata.name);
    if (!fresh || fresh.metadata.uid !== plan.metadata.uid) return;
    const phase = fresh.status?.phase;
    const stillOpen =
      expectsRunningWorkflow(phase, fresh.status?.reason) ||
      (phase === 'Failed' && fresh.status?.reason === action.reason);
    if (!stillOpen) {
      log.info({ phase }, 'the plan reached a final phase meanwhile; not marking it');
      return;
    }
    const status = closedWorkflowStatus({
      planName: plan.metadata.name,
      workflowId,
      reason: action.reason,
      status: fresh.status,
      generation: fresh.metadata.generation ?? 0,
      ...(handedBack ? { handedBack } : {}),
      nowIso: new Date().toISOString(),
    });
    // A guarded merge patch, not a PUT: the operator's ServiceAccount may patch a plan's status
    // but not update it (deploy/base/rbac-operator.yaml), and a PUT was refused with 403 there.
    await this.plans.patchStatusGuarded(fresh, status);
    this.deps.metrics.operatorActions.inc({ action: 'closed' });
    log.warn(
      { phase: status.phase, was: phase, reason: action.reason, handedBack },
      'plan status written for its closed workflow',
    );
    if (action.warn)
      await this.event(
        plan,
        'Warning',
        closeStatus === 'NOT_FOUND' ? EventReason.WorkflowNotFound : EventReason.WorkflowClosed,
        status.message ?? action.reason,
      );
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
    const nodes =
      def === pauseSignal || def === abortSignal ? await this.stopNodes(log, workflowId, def, args) : [];
    log.info({ signal: def.name, generation: args.generation, nodeWorkflows: nodes.length }, 'signal sent');
    await this.event(
      plan,
      'Normal',
      EventReason.SignalSent,
      `sent ${def.name}${args.generation !== undefined ? ` (generation ${args.generation})` : ''} to workflow ${workflowId}${nodeStopWords(nodes)}`,
    );
    return true;
  }

  /**
   * Sends a pause or abort just sent to plan workflow `workflowId` to its running node workflows
   * as well (src/operator/node-stops.ts: after a worker restart a node's task may otherwise evict
   * once more before its plan forwards the stop). Best effort: when Temporal refuses, the plan
   * still forwards the stop, so a warning is logged and no node workflow counted.
   * @returns the node workflow IDs signalled.
   */
  private async stopNodes(
    log: Logger,
    workflowId: string,
    def: SignalDefinition<[ControlArgs?]>,
    args: ControlArgs,
  ): Promise<string[]> {
    try {
      return await stopNodeWorkflows(
        this.deps.client,
        workflowId,
        def === pauseSignal ? 'pause' : 'abort',
        args.generation,
      );
    } catch (err) {
      log.warn(
        { err, signal: def.name },
        'sending the stop to the node workflows failed; the plan forwards it',
      );
      return [];
    }
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
        EventReason.WorkflowStarted,
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
   *
   * While it waits, until it has recorded it once for this deletion: after {@link
   * DELETION_WORKER_GRACE_MS} with the workflow still running, and then every {@link
   * DELETION_WORKER_RECHECK_MS}, it asks Temporal whether a worker polls the workflow's task queue,
   * and records a Warning Event AwaitingWorker when none does ({@link noteDeletionWorkers}).
   */
  private async cleanup(
    plan: MaintenancePlan,
    workflowId: string,
    log: Logger,
    signal: AbortSignal,
    how: { running: boolean; sendAbort: boolean; outcome?: string; taskQueue?: string },
  ): Promise<HandlerResult | void> {
    const { name, uid } = plan.metadata;
    const mem = this.memory.get(uid)!; // remembered by act (the decision's `before`)
    const handle =
      this.deps.client.workflow.getHandle<(input: DrainPlanInput) => Promise<DrainPlanResult>>(workflowId);
    let outcome: string;
    if (how.running) {
      if (how.sendAbort) {
        log.info('plan deleted; aborting its workflow to hand the nodes back');
        const sent = await this.sendSignal(log, { name, uid }, workflowId, abortSignal, 'cleanup', {
          generation: plan.metadata.generation ?? 0,
        });
        mem.abortSent = true;
        if (sent)
          await this.event(
            plan,
            'Normal',
            EventReason.CleanupStarted,
            `plan deleted: aborted workflow ${workflowId}; waiting for it to hand the nodes back`,
          );
      }
      // Until this deletion's Warning AwaitingWorker is recorded, the wait is cut into steps: a
      // short grace, then one look per DELETION_WORKER_RECHECK_MS (a worker killed just before
      // still looks live to Temporal for up to 70 s, src/shared/workers.ts).
      const until = Date.now() + CLEANUP_WAIT_MS;
      let step = DELETION_WORKER_GRACE_MS;
      let res: Awaited<ReturnType<PlanController['waitClosed']>>;
      for (;;) {
        const left = Math.max(0, until - Date.now());
        res = await this.waitClosed(handle, mem.deletionWorkerNoted ? left : Math.min(step, left), signal);
        if (res.state !== 'timeout' || Date.now() >= until) break;
        if (!mem.deletionWorkerNoted)
          await this.noteDeletionWorkers(
            plan,
            workflowId,
            how.taskQueue ?? this.deps.config.taskQueue,
            mem,
            log,
          );
        step = DELETION_WORKER_RECHECK_MS;
      }
      if (res.state === 'stopped') return;
      if (res.state !== 'closed') {
        log.warn({ waitedMs: CLEANUP_WAIT_MS }, 'workflow still running after abort; waiting again');
        return { requeueAfterMs: CLEANUP_REQUEUE_MS };
      }
      outcome = res.outcome;
    } else {
      outcome = how.outcome ?? `no workflow ${workflowId}`;
    }
    // A workflow that closed after the abort has handed its nodes back (normally nothing is left);
    // one that was terminated, failed or timed out never will: hand back what is left here, once
    // the node and hook workflows it left running are stopped (else they act on handed-back nodes).
    await this.stopChildren(plan, workflowId, outcome, log);
    const handedBack = await this.handBackClaimedNodes(plan, outcome, log);
    if (handedBack.length > 0) outcome += `; handed back ${handedBack.join(', ')}`;
    await this.event(plan, 'Normal', EventReason.CleanupFinished, `${outcome}; removing the finalizer`);
    await this.plans.removeFinalizer(name, uid);
    mem.cleanedUp = true;
    log.info({ outcome }, 'finalizer removed');
  }

  /**
   * A deletion waits for its workflow: asks Temporal whether a worker polls `taskQueue` (pollers and
   * worker heartbeats, src/shared/workers.ts) and records the Warning Event AwaitingWorker that
   * {@link deletionWaitEvent} asks for, remembering it (`mem.deletionWorkerNoted`) so the retries of
   * the wait do not repeat it. When Temporal does not answer, nothing is recorded (asked again at the
   * next retry).
   */
  private async noteDeletionWorkers(
    plan: MaintenancePlan,
    workflowId: string,
    taskQueue: string,
    mem: Memory,
    log: Logger,
  ): Promise<void> {
    const workers = await taskQueueWorkers(
      this.deps.client,
      this.deps.config.temporalNamespace,
      taskQueue,
    ).catch((err: unknown) => {
      log.debug({ err: errorWords(err), taskQueue }, 'cannot ask Temporal for the workers of the task queue');
      return undefined;
    });
    const ev = deletionWaitEvent(Boolean(mem.deletionWorkerNoted), workers, workflowId, taskQueue);
    if (!ev) return;
    mem.deletionWorkerNoted = true;
    log.warn({ taskQueue }, "plan deleted; no worker polls its workflow's task queue, so the deletion waits");
    await this.event(plan, ev.type, ev.reason, ev.message);
  }

  /**
   * Hands back, without a workflow, the nodes that still carry this plan's claim: one paged list of
   * all Nodes ({@link listClaimedNodes}: held-by = plan name and held-by-uid = plan uid or absent;
   * a claim copied onto a Node created again under the claimed one's name is none), then for each
   * the `releaseNode` activity's own implementation, run in this process, for the listed Node's
   * uid (a Node created again under the name since is left alone): a merge patch
   * guarded by the node's resourceVersion (409 → re-read and retry) that removes the claim
   * annotations and, when `uncordon` is true and was-unschedulable is not `'true'`, removes
   * `spec.unschedulable` — exactly what the workflow's hand-back on abort does.
   *
   * `uncordon` is `spec.uncordon !== 'Never'` ({@link uncordonOnDelete}), as the workflow's abort uses.
   *
   * Relies on: the workflow being closed and the node workflows it left running stopped before
   * ({@link stopChildren}: they are started with ParentClosePolicy ABANDON, so Temporal leaves them
   * running; a `cordonNode` activity still in flight on a worker at that moment could claim a node
   * after this sweep — a window of one API call); annotations not being selectable server-side (hence the full list).
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
        // The Node listed, by uid: one created again under its name since is not this plan's.
        const nodeUid = n.metadata?.uid;
        const { uncordoned, left } = await this.activities.releaseNode({
          plan: ref,
          node,
          uncordon,
          ...(nodeUid ? { nodeUid } : {}),
        });
        if (left === 'replaced' || left === 'gone') continue;
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
        EventReason.NodesHandedBack,
        `${why}: handed back ${done.length} node(s) the plan still claimed: ${done.join(', ')}`,
      );
    }
    if (failed.length > 0) {
      const message = `${why}: could not hand back ${failed.length} node(s), retrying: ${failed.join('; ')}`;
      await this.event(plan, 'Warning', EventReason.NodeHandBackFailed, message);
      throw new Error(message);
    }
    return done;
  }

  /**
   * Stops the node and hook workflows that plan workflow `workflowId` left running
   * (src/operator/stop-children.ts) and records a Normal Event `ChildWorkflowsStopped` naming them
   * when there were any. @param why what became of the plan's workflow (the termination reason).
   * @throws the client's error when Temporal cannot be reached (the queue retries the plan).
   */
  private async stopChildren(
    plan: MaintenancePlan,
    workflowId: string,
    why: string,
    log: Logger,
  ): Promise<void> {
    const { cancelled, terminated } = await stopPlanChildren(
      this.deps.client,
      workflowId,
      `stopped by the drainflow operator: ${why}`,
      log,
    );
    if (cancelled.length + terminated.length === 0) return;
    this.deps.metrics.operatorActions.inc({ action: 'stopChildren' });
    const parts = [
      ...(cancelled.length ? [`cancelled ${cancelled.join(', ')}`] : []),
      ...(terminated.length
        ? [`terminated ${terminated.join(', ')} (not closed ${CANCEL_GRACE_MS / 1000} s after the cancel)`]
        : []),
    ];
    await this.event(
      plan,
      'Normal',
      EventReason.ChildWorkflowsStopped,
      `${why}: stopped ${cancelled.length + terminated.length} workflow(s) it had left running before handing the nodes back: ${parts.join('; ')}`,
    );
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

  /**
   * Status Failed/InvalidSpec (skipped when already written for this generation) and a Warning Event.
   * A plan refused before any workflow drained a node also gets `nodesDrained: 0`, so `kubectl get
   * mp` reads DRAINED 0 beside the NODES count ({@link missingNodeCount}) instead of a blank.
   */
  private async markInvalid(plan: MaintenancePlan, message: string, log: Logger): Promise<void> {
    const generation = plan.metadata.generation ?? 0;
    log.warn({ generation, invalid: message }, 'invalid spec; not starting a workflow');
    const s = plan.status;
    if (
      s?.phase === PlanPhase.Failed &&
      s.reason === PlanReason.InvalidSpec &&
      s.observedGeneration === generation &&
      s.message === message
    )
      return;
    const now = new Date().toISOString();
    await this.plans.patchStatus(plan.metadata.name, {
      phase: PlanPhase.Failed,
      reason: PlanReason.InvalidSpec,
      message,
      observedGeneration: generation,
      ...(s?.nodesDrained === undefined ? { nodesDrained: 0 } : {}),
      conditions: [
        {
          type: ConditionType.Progressing,
          status: 'False',
          observedGeneration: generation,
          lastTransitionTime: now,
          reason: PlanReason.InvalidSpec,
          message,
        },
      ],
    });
    await this.event(plan, 'Warning', EventReason.InvalidSpec, message);
  }

  /** Records an Event on the plan (best effort; EventRecorder.record logs and swallows errors). */
  private async event(
    plan: { metadata: { name: string; uid: string } } | { name: string; uid: string },
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const ref = 'metadata' in plan ? { name: plan.metadata.name, uid: plan.metadata.uid } : plan;
    await this.events.record({ plan: ref, type, reason, message });
  }
}

/**
 * An error's message, with its cause's (the Temporal client's errors wrap the gRPC status in the
 * cause), without the empty `Resolution note:` gRPC appends to a connection refused.
 */
function errorWords(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  const words = cause && !err.message.includes(cause) ? `${err.message}: ${cause}` : err.message;
  return words.replace(/\.? Resolution note: *$/, ''); // gRPC's empty trailer of an UNAVAILABLE
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
