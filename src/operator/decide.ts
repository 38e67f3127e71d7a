/**
 * The operator's reconcile decision, pure: from what was observed of one plan (the informer's object,
 * the operator's memory of it, and — only when the decision needs it — its workflow's state in
 * Temporal) to the actions to take, in order, and what to remember afterwards. No I/O here; the
 * controller observes, calls {@link decide}, and acts (src/operator/controller.ts).
 *
 * The rules (what the controller did before the split, unchanged):
 *
 * - A plan being deleted is cleaned up once, when it still carries the finalizer: abort a running
 *   workflow (once), wait for it to close, hand back what the plan still claims, remove the finalizer.
 * - Nothing is done for an object whose metadata.generation was handled already (the workflow's own
 *   status writes), except filling in the node count of a plan that failed before resolving its nodes.
 * - First sight of a plan whose workflow exists (the operator restarted): adopt it — add the finalizer,
 *   and when the workflow runs and has not seen this generation, assert every flag.
 * - A plan without a workflow: an invalid spec, or one that must not start (`startProblem`: its first
 *   maintenance window opens after its deadline), is marked Failed/InvalidSpec; a valid one gets the
 *   finalizer, then its workflow — unless the status records that workflow (it ran, and Temporal no
 *   longer knows it): a plan is never re-run; such a plan is marked Failed/WorkflowNotFound
 *   ({@link lostWorkflow}), on first sight or at a resync.
 * - A plan whose workflow the operator started or adopted running, and whose status has no phase
 *   yet, is marked Pending/AwaitingWorker ({@link awaitingWorkerStatus}): until a worker runs the
 *   workflow, nothing else writes its status.
 * - A spec change of a plan with a workflow relays the flags that changed ({@link planSignals}); an
 *   invalid change is reported by a Warning Event and not relayed; a flag that can change nothing
 *   because the plan has ended is noted by a Normal Event ({@link specChangeIgnored}).
 * - A workflow found closed (TERMINATED, FAILED, TIMED_OUT, CANCELED) while the plan's phase still
 *   expects it to run ({@link expectsRunningWorkflow}) — seen on first sight, on a periodic resync,
 *   or when spec.abort is newly set — is projected once: phase Failed with the reason of the close
 *   status and a Warning Event ({@link closedWorkflowAction}). spec.abort on such a plan (at once, or
 *   later on the Failed plan) hands its nodes back without a workflow, as a deletion does, and the
 *   plan ends Aborted with that reason. No signal is sent to a workflow known to be closed. A
 *   workflow Temporal lost ({@link lostWorkflow}) is projected the same way (WorkflowNotFound); one
 *   lost before any worker ran it ({@link neverRanLost}) is started again.
 * - Orphans (plans gone without the finalizer cleanup, found by the controller's periodic sweep,
 *   not by a plan's reconcile): {@link orphanVerdict}.
 */
import type { MaintenancePlanSpec, MaintenancePlanStatus } from '../api/plan.js';
import { ConditionType, EventReason, PlanPhase, PlanReason } from '../api/reasons.js';
import {
  ClosedWorkflowReason,
  closeStatusOfReason,
  closedWorkflowReason,
  expectsRunningWorkflow,
  type ClosedWorkflowReasonName,
} from '../api/closed-workflow.js';
import { liveWorkers, noWorkerWords, type TaskQueueWorkers } from '../shared/workers.js';
import { flagHasEffect, phaseWords, type SpecFlagName } from '../api/ended-plan.js';

/** Final phases a plan can reach before its nodes are resolved (see {@link missingNodeCount}). */
const FINAL_PHASES_FOR_NODE_COUNT: ReadonlySet<PlanPhase> = new Set<PlanPhase>([
  PlanPhase.Failed,
  PlanPhase.Aborted,
]);

/** The spec flags the operator relays as signals, and spec.drainTimeoutSeconds (relayed when raised). */
export interface Flags {
  paused: boolean;
  abort: boolean;
  release: boolean;
  /** spec.drainTimeoutSeconds, s (absent: not relayed). */
  drainTimeoutSeconds?: number;
}

/** The flags of a spec. */
export function flagsOf(spec: MaintenancePlanSpec): Flags {
  return {
    paused: spec.paused,
    abort: spec.abort,
    release: spec.release,
    drainTimeoutSeconds: spec.drainTimeoutSeconds,
  };
}

/** What the operator remembers of one plan (by UID), in memory only. */
export interface Memory {
  name: string;
  /** metadata.generation last handled successfully; -1 until the first reconcile of the UID succeeds. */
  generation: number;
  /** Whether the plan's workflow exists (started by us or found). */
  started: boolean;
  /** The flags the workflow has been told (its input, then signals). */
  relayed?: Flags;
  /** Abort sent for the deletion. */
  abortSent?: boolean;
  /** The deletion's Warning AwaitingWorker was recorded ({@link deletionWaitEvent}): not again for this UID. */
  deletionWorkerNoted?: boolean;
  /** Finalizer removed: nothing left to do for this UID. */
  cleanedUp?: boolean;
  /** The reason written when the workflow was found closed ({@link closedWorkflowAction}): not projected again. */
  closedProjected?: ClosedWorkflowReasonName;
}

/**
 * The plan's workflow as Temporal describes it: absent, running (with the task queue it was started
 * on, when known), or closed (with its status name).
 */
export type WorkflowState =
  { state: 'absent' } | { state: 'running'; taskQueue?: string } | { state: 'closed'; status: string };

/** What {@link decide} reads of the plan object. */
export interface PlanView {
  name: string;
  uid: string;
  generation: number;
  deleting: boolean;
  hasFinalizer: boolean;
  /** status.workflow.workflowId, when the status records one. */
  statusWorkflowId?: string;
  /** status.workflow.namespace, when the status records one: the Temporal namespace that ran it. */
  statusWorkflowNamespace?: string;
  /** status.observedGeneration (0 when absent). */
  observedGeneration: number;
  phase?: PlanPhase;
  reason?: string;
  /** status.nodesTotal (0 when absent). */
  nodesTotal: number;
  /** Length of status.nodes. */
  statusNodes: number;
  /** Length of spec.nodeNames as written (a list even in an invalid spec; 0 when absent). */
  nodeNames: number;
}

/** Everything one decision reads. */
export interface Observation {
  plan: PlanView;
  /** The plan's workflow ID (planWorkflowId). */
  workflowId: string;
  /** The parsed spec, or undefined with `invalid` saying why it does not parse. */
  spec?: MaintenancePlanSpec;
  invalid?: string;
  /**
   * Why a valid spec must not start (its first maintenance window opens after its deadline,
   * src/drain/window-deadline.ts): marked Failed/InvalidSpec like an invalid spec, before a
   * workflow starts. Ignored once a workflow exists.
   */
  startProblem?: string;
  memory?: Memory;
  /** Set when {@link needsWorkflow} said so; otherwise not asked. */
  workflow?: WorkflowState;
  /** A periodic resync (no informer event): look whether the workflow closed behind the plan's back. */
  resync?: boolean;
  /** The operator's Temporal namespace (`--temporal-namespace`); see {@link lostWorkflow}. */
  temporalNamespace?: string;
}

/**
 * A signal the operator sends to the plan's workflow; `drainTimeout` carries the spec's raised
 * drainTimeoutSeconds (the workflow extends the deadline, src/workflows/plan/deadline.ts).
 */
export type SignalName = 'pause' | 'resume' | 'release' | 'abort' | 'drainTimeout';

/** One step the controller takes, in order. */
export type Action =
  | { type: 'log'; level: 'debug' | 'info' | 'warn'; msg: string; fields?: Record<string, unknown> }
  /**
   * Deletion: abort the running workflow first when `sendAbort`, wait for it when `running`, hand
   * back, remove the finalizer. `taskQueue`: the running workflow's (its worker check while waiting,
   * {@link deletionWaitEvent}); absent when Temporal did not say, the operator's own.
   */
  | { type: 'cleanup'; running: boolean; sendAbort: boolean; outcome?: string; taskQueue?: string }
  /**
   * Add the finalizer. With `stopIfGone`, a plan that turns out gone or being deleted ends the run
   * here (nothing new remembered; the next event says which).
   */
  | { type: 'ensureFinalizer'; stopIfGone: boolean }
  | { type: 'startWorkflow' }
  /**
   * Write the Pending/AwaitingWorker status ({@link awaitingWorkerStatus}) on the plan read fresh,
   * only while its status has no phase, guarded by its resourceVersion (the workflow's own first
   * write wins). `taskQueue`: the running workflow's (adopted); absent, the operator's own.
   */
  | { type: 'markAwaitingWorker'; taskQueue?: string }
  | { type: 'markInvalid'; message: string }
  /** A Warning Event InvalidSpec on the plan. */
  | { type: 'warnEvent'; reason: string; message: string }
  /** A Normal Event on the plan ({@link specChangeIgnored}). */
  | { type: 'normalEvent'; reason: string; message: string }
  /** Signal the workflow; when it is closed or unknown, skip the remaining signals. */
  | { type: 'signal'; signal: SignalName }
  /** Merge-patch status.nodesTotal. */
  | { type: 'writeNodeCount'; nodesTotal: number }
  /**
   * The workflow closed while the plan expected it to run: with `handBack` first hand back what the
   * plan still claims (as on deletion); then write the status (src/operator/closed-workflow.ts:
   * Failed, or Aborted once handed back) with `reason`, and when `warn` record the Warning Event.
   */
  | { type: 'closedWorkflow'; reason: ClosedWorkflowReasonName; handBack: boolean; warn: boolean };

/** The outcome of {@link decide}. */
export interface Decision {
  /** Remember this before acting (so a failed action is retried from it). */
  before?: Memory;
  actions: Action[];
  /** Remember this when every action succeeded (and none stopped the run). */
  after?: Memory;
}

/**
 * Whether {@link decide} needs the workflow's state for this plan (one Temporal describe call): on
 * deletion (to abort a running workflow), on first sight of a UID whose generation is to be handled,
 * and — for a started workflow not yet found closed whose plan still expects it to run — on a
 * periodic resync and when spec.abort is newly set (so an abort of a workflow that closed behind
 * the plan's back hands the nodes back rather than signalling nobody).
 */
export function needsWorkflow(obs: Omit<Observation, 'workflow'>): boolean {
  const { plan, memory } = obs;
  if (plan.deleting) return plan.hasFinalizer && !memory?.cleanedUp;
  if (memory === undefined) return true;
  if (!memory.started || memory.closedProjected || !expectsRunningWorkflow(plan.phase, plan.reason))
    return false;
  if (obs.resync) return true;
  return memory.generation !== plan.generation && Boolean(obs.spec?.abort) && !memory.relayed?.abort;
}

/**
 * Whether Temporal lost the plan's workflow: the describe answered NotFound (`absent`) for the very
 * workflow the plan's status records (status.workflow.workflowId is this plan's workflow ID, so a
 * worker ran it and wrote its status), in the namespace the status names (or none named). Then
 * Temporal's data is gone (a dev server restarted without its database, a namespace deleted and
 * re-created), not merely not started yet: a workflow that never ran records no status.workflow.
 *
 * Not taken as lost: a workflow recorded in another namespace than the operator's (an operator
 * pointed at another installation's Temporal namespace must not fail its plans); a plan whose
 * status names no workflow (its workflow never ran; the operator starts it).
 */
export function lostWorkflow(obs: Observation): boolean {
  const { plan } = obs;
  if (obs.workflow?.state !== 'absent' || plan.statusWorkflowId !== obs.workflowId) return false;
  return (
    plan.statusWorkflowNamespace === undefined ||
    obs.temporalNamespace === undefined ||
    plan.statusWorkflowNamespace === obs.temporalNamespace
  );
}

/**
 * Whether the workflow this operator started for the plan is gone from Temporal before any worker
 * ran it: described absent on a resync, the plan's status records no workflow and shows no phase or
 * only the operator's own Pending/AwaitingWorker. Nothing ran, so nothing would be repeated: the
 * operator starts it again (a plan that ran is never re-run: {@link lostWorkflow}).
 */
export function neverRanLost(obs: Observation): boolean {
  const { plan } = obs;
  return (
    obs.workflow?.state === 'absent' &&
    Boolean(obs.memory?.started) &&
    obs.spec !== undefined &&
    plan.statusWorkflowId === undefined &&
    (plan.phase === undefined || (plan.phase === 'Pending' && plan.reason === PlanReason.AwaitingWorker))
  );
}

/**
 * The step for a workflow that closed behind the plan's back, or undefined when there is none:
 *
 * - the workflow was seen closed with a projected status ({@link closedWorkflowReason}) while the
 *   phase expects it to run, and it was not projected yet: write Failed with a Warning Event, and
 *   with spec.abort hand the nodes back at once (Aborted);
 * - Temporal lost the workflow ({@link lostWorkflow}) while the phase expects it to run: the same,
 *   with reason WorkflowNotFound (the Warning Event names the missing workflow). No new workflow is
 *   started: see docs/design-decisions.md ("Temporal lost the plan's workflow");
 * - the plan is Failed with such a reason already (projected before, perhaps by an earlier
 *   operator) and spec.abort is set: hand the nodes back (Aborted).
 *
 * A COMPLETED workflow is never projected: it wrote its own final status, which the cache may not
 * show yet.
 */
export function closedWorkflowAction(
  obs: Observation,
): Extract<Action, { type: 'closedWorkflow' }> | undefined {
  const { plan, spec, memory } = obs;
  const abort = Boolean(spec?.abort);
  const wf = obs.workflow;
  if (expectsRunningWorkflow(plan.phase, plan.reason) && !memory?.closedProjected) {
    const reason =
      wf?.state === 'closed'
        ? closedWorkflowReason(wf.status)
        : lostWorkflow(obs)
          ? ClosedWorkflowReason.NOT_FOUND
          : undefined;
    if (reason) return { type: 'closedWorkflow', reason, handBack: abort, warn: true };
  }
  if (plan.phase === 'Failed' && abort && closeStatusOfReason(plan.reason)) {
    return {
      type: 'closedWorkflow',
      reason: plan.reason as ClosedWorkflowReasonName,
      handBack: true,
      warn: false,
    };
  }
  return undefined;
}

/**
 * The status the operator writes on a plan whose workflow it started (or adopted running) while the
 * status has no phase: Pending with reason AwaitingWorker, a message naming the workflow and the
 * task queue a worker must poll, and condition Progressing True with the same reason. Until a
 * worker runs the workflow nothing else writes the status, so without it `kubectl get mp` shows no
 * phase at all. The workflow's first status write (a PUT of its whole status) replaces it.
 *
 * No `observedGeneration`: the workflow has not seen any generation yet (an operator adopting the
 * plan then asserts every spec flag, {@link decide}).
 *
 * @param workflowId the plan's workflow ID. @param taskQueue the Temporal task queue it runs on.
 * @param nowIso the condition's lastTransitionTime, RFC 3339.
 */
export function awaitingWorkerStatus(
  workflowId: string,
  taskQueue: string,
  nowIso: string,
): MaintenancePlanStatus {
  const message = `workflow ${workflowId} is started; waiting for a drainflow worker on task queue "${taskQueue}" to run it (drainflow run --worker --task-queue ${taskQueue})`;
  return {
    phase: PlanPhase.Pending,
    reason: PlanReason.AwaitingWorker,
    message,
    conditions: [
      {
        type: ConditionType.Progressing,
        status: 'True',
        lastTransitionTime: nowIso,
        reason: PlanReason.AwaitingWorker,
        message,
      },
    ],
  };
}

/** An Event the operator records on a plan ({@link temporalReach}, {@link deletionWaitEvent}, …). */
export interface ReachEvent {
  type: 'Normal' | 'Warning';
  reason: EventReason;
  message: string;
}

/**
 * Whether the operator reaches Temporal for one plan, after one describe of its workflow, and the
 * Event to record: a Warning TemporalUnavailable (naming the address and the error) when the call
 * failed and the plan was not known unreachable, a Normal TemporalAvailable when a call succeeded
 * after that, nothing otherwise — so one outage gives one Warning per plan however many resyncs
 * (every `--resync-seconds`) and queue retries fail during it.
 *
 * @param wasDown whether the last call for this plan failed (the operator's memory, per plan UID).
 * @param error the failed call's error message; undefined when the call succeeded (a workflow
 *   Temporal does not know is an answer, so a success).
 * @param address the Temporal frontend address (`--temporal-address`).
 * @param workflowId the plan's workflow ID.
 * @returns `down`: remember this for the next call; `event`: record it, when set.
 */
export function temporalReach(
  wasDown: boolean,
  error: string | undefined,
  address: string,
  workflowId: string,
): { down: boolean; event?: ReachEvent } {
  if (error !== undefined) {
    if (wasDown) return { down: true };
    return {
      down: true,
      event: {
        type: 'Warning',
        reason: EventReason.TemporalUnavailable,
        message: `cannot reach Temporal at ${address} to look at workflow ${workflowId}: ${error}; until it answers, the plan shows the status its workflow last wrote and spec changes are not relayed`,
      },
    };
  }
  if (!wasDown) return { down: false };
  return {
    down: false,
    event: {
      type: 'Normal',
      reason: EventReason.TemporalAvailable,
      message: `reached Temporal at ${address} again (workflow ${workflowId})`,
    },
  };
}

/**
 * How long a deletion waits for its aborted workflow to close before the operator asks Temporal
 * whether a worker polls the workflow's task queue ({@link deletionWaitEvent}), ms. With a worker the
 * abort usually completes within seconds: such a deletion costs no extra call, and a worker that is
 * busy for a moment is not reported.
 */
export const DELETION_WORKER_GRACE_MS = 15_000;

/**
 * How often a deletion that still waits asks again whether a worker polls, until it has recorded
 * its {@link deletionWaitEvent}, ms: a worker killed just before the deletion still looks live to
 * Temporal for up to 70 s (POLLER_FRESH_MS, src/shared/workers.ts).
 */
export const DELETION_WORKER_RECHECK_MS = 60_000;

/**
 * The Warning Event of a deletion that waits for its workflow while no worker polls the workflow's
 * task queue, or undefined: when one was recorded for this deletion already (`noted`, the operator's
 * memory of the plan UID: one per deletion however many times the operator's 5-minute wait
 * (CLEANUP_WAIT_MS, src/operator/controller.ts) is retried; an operator that restarts forgets it and records one more), when
 * Temporal could not be asked (`workers` undefined), or when a live worker polls ({@link liveWorkers}:
 * a poll within 70 s, and no heartbeat saying it stopped).
 *
 * Why it matters: the operator removes the finalizer only once the workflow has run the abort and
 * handed the nodes back, and only a worker runs it, so `kubectl delete mp P` waits with no end; the
 * Event (reason AwaitingWorker, shown by `kubectl describe mp P`) names the workflow, the task queue
 * and the command that starts a worker on it.
 *
 * @param workers what Temporal shows of the task queue's pollers and workers (src/shared/workers.ts).
 */
export function deletionWaitEvent(
  noted: boolean,
  workers: TaskQueueWorkers | undefined,
  workflowId: string,
  taskQueue: string,
): ReachEvent | undefined {
  if (noted || workers === undefined || liveWorkers(workers).length > 0) return undefined;
  return {
    type: 'Warning',
    reason: EventReason.AwaitingWorker,
    message: `plan deleted: its finalizer stays until workflow ${workflowId} has run the abort and handed the nodes back, and ${noWorkerWords(workers, taskQueue)}`,
  };
}

/**
 * The Normal Event of a spec change that has no effect because the plan has ended, or undefined
 * (pure): the flags that changed from what the workflow was told (`before`; undefined when the
 * operator does not know, e.g. just restarted: nothing is said) to `now`, those that cannot change
 * anything in the plan's phase ({@link flagHasEffect}: Completed, Aborted, Failed with its workflow
 * closed, Previewed; an abort that still hands nodes back counts), named in one Event
 * SpecChangeIgnored: `plan P has ended (Completed): spec.paused has no effect`. The CRD cannot refuse
 * such a change (it depends on the status), so the Event is what `kubectl describe mp P` shows.
 * Called once per metadata.generation (the operator remembers the generation it handled), so a
 * resync does not repeat it.
 */
export function specChangeIgnored(
  plan: Pick<PlanView, 'name' | 'phase' | 'reason'>,
  before: Flags | undefined,
  now: Flags,
  uncordon: string | undefined,
): Extract<Action, { type: 'normalEvent' }> | undefined {
  if (!before) return undefined;
  const view = { phase: plan.phase, reason: plan.reason, uncordon };
  const ignored = (['paused', 'release', 'abort'] as const satisfies readonly SpecFlagName[]).filter(
    (f) => before[f] !== now[f] && !flagHasEffect(f, view),
  );
  if (ignored.length === 0) return undefined;
  const fields = ignored.map((f) => `spec.${f}`);
  const named =
    fields.length === 1 ? `${fields[0]} has` : `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)} have`;
  return {
    type: 'normalEvent',
    reason: EventReason.SpecChangeIgnored,
    message: `plan ${plan.name} has ended (${phaseWords(view)}): ${named} no effect`,
  };
}

/** The memory after a {@link closedWorkflowAction}: projected, so never again for this UID. */
function projected(mem: Memory, action: Extract<Action, { type: 'closedWorkflow' }>): Memory {
  return { ...mem, closedProjected: action.reason };
}

/**
 * Whether a plan that disappeared (deleted without the finalizer cleanup, e.g. the finalizer removed
 * by hand) may still have a running workflow to abort, so its nodes are handed back rather than held
 * forever: its workflow exists, and no cleanup or abort happened.
 */
export function mayAbortOnForget(memory: Memory | undefined): boolean {
  return Boolean(memory?.started && !memory.cleanedUp && !memory.abortSent);
}

/**
 * The signals that bring the workflow from the flags it was told (`before`; undefined: unknown,
 * assert every one) to `now`, in the order they are sent: pause/resume, release, abort, and
 * drainTimeout when spec.drainTimeoutSeconds was raised (or is asserted). When no
 * flag changed (toggled and back) the pause state is restated, a no-op for the workflow that lets it
 * record the generation. `abortReset`: spec.abort went back to false, which cannot be undone.
 */
export function planSignals(
  before: Flags | undefined,
  now: Flags,
): { signals: SignalName[]; abortReset: boolean } {
  const signals: SignalName[] = [];
  const pause: SignalName = now.paused ? 'pause' : 'resume';
  if (before === undefined || before.paused !== now.paused) signals.push(pause);
  if (now.release && (before === undefined || !before.release)) signals.push('release');
  if (now.abort && (before === undefined || !before.abort)) signals.push('abort');
  // Raised (the CRD refuses lowering): the workflow extends its deadline; repeats are no-ops.
  const raised =
    now.drainTimeoutSeconds !== undefined &&
    (before === undefined ||
      (before.drainTimeoutSeconds !== undefined && now.drainTimeoutSeconds > before.drainTimeoutSeconds));
  if (raised) signals.push('drainTimeout');
  const unchanged =
    before !== undefined &&
    before.paused === now.paused &&
    before.release === now.release &&
    before.abort === now.abort &&
    !raised;
  if (unchanged) signals.push(pause);
  return { signals, abortReset: Boolean(before?.abort && !now.abort) };
}

/**
 * The node count a failed plan should show when its status has none: a plan that failed before its
 * nodes were resolved (NodeNotFound, ResolveFailed, InvalidSpec) has no status.nodes, so its Nodes
 * column read 0 though it names nodes. Returns the number of spec.nodeNames, or undefined when
 * nothing is to be written (not final, nodes recorded, a count already there, or a selector plan).
 */
export function missingNodeCount(plan: PlanView): number | undefined {
  if (plan.phase === undefined || !FINAL_PHASES_FOR_NODE_COUNT.has(plan.phase)) return undefined;
  if (plan.statusNodes > 0 || plan.nodesTotal > 0 || plan.nodeNames === 0) return undefined;
  return plan.nodeNames;
}

function signalActions(before: Flags | undefined, spec: MaintenancePlanSpec): Action[] {
  const { signals, abortReset } = planSignals(before, flagsOf(spec));
  const actions: Action[] = signals.map((signal) => ({ type: 'signal', signal }));
  if (abortReset)
    actions.push({
      type: 'log',
      level: 'warn',
      msg: 'spec.abort was reset to false; an abort cannot be undone',
    });
  return actions;
}

/**
 * Decides what to do about one plan. Pure: the same observation gives the same decision.
 * @throws Error when the observation lacks the workflow state {@link needsWorkflow} asked for.
 */
export function decide(obs: Observation): Decision {
  const { plan, spec, invalid, memory } = obs;
  const generation = plan.generation;
  const workflow = (): WorkflowState => {
    if (!obs.workflow) throw new Error(`decide: plan ${plan.name}: the workflow state was not observed`);
    return obs.workflow;
  };

  if (plan.deleting) {
    if (!plan.hasFinalizer || memory?.cleanedUp) return { actions: [] };
    const wf = workflow();
    const mem: Memory = memory ?? { name: plan.name, generation, started: false };
    if (wf.state === 'running') {
      return {
        before: { ...mem, started: true },
        actions: [
          {
            type: 'cleanup',
            running: true,
            sendAbort: !mem.abortSent,
            ...(wf.taskQueue !== undefined ? { taskQueue: wf.taskQueue } : {}),
          },
        ],
      };
    }
    const outcome =
      wf.state === 'closed'
        ? `workflow ${obs.workflowId} already closed (${wf.status})`
        : `no workflow ${obs.workflowId}`;
    return { before: mem, actions: [{ type: 'cleanup', running: false, sendAbort: false, outcome }] };
  }

  if (memory && memory.generation === generation) {
    if (neverRanLost(obs))
      return {
        before: memory,
        actions: [
          {
            type: 'log',
            level: 'warn',
            msg: 'Temporal no longer knows the workflow started for this plan, and no worker ever ran it; starting it again',
          },
          { type: 'startWorkflow' },
        ],
        after: memory,
      };
    const closedAct = closedWorkflowAction(obs);
    if (closedAct) {
      return {
        before: memory,
        actions: [
          {
            type: 'log',
            level: 'warn',
            msg: 'the workflow closed while the plan expected it to run; marking the plan Failed',
            fields: { reason: closedAct.reason, phase: plan.phase },
          },
          closedAct,
        ],
        after: projected(memory, closedAct),
      };
    }
    const actions: Action[] = [
      { type: 'log', level: 'debug', msg: 'no spec change; nothing to do', fields: { generation } },
    ];
    const count = missingNodeCount(plan);
    if (count !== undefined) actions.push({ type: 'writeNodeCount', nodesTotal: count });
    return { actions };
  }

  // First sight of this UID since the operator started: does the workflow exist already?
  if (!memory) {
    const wf = workflow();
    if (wf.state !== 'absent') {
      const status = wf.state === 'running' ? 'RUNNING' : wf.status;
      const actions: Action[] = [
        {
          type: 'log',
          level: 'info',
          msg: 'workflow exists already; not starting it again',
          fields: { status, generation },
        },
        { type: 'ensureFinalizer', stopIfGone: false },
      ];
      // The workflow has not seen this generation (a relay may have been lost with the previous
      // operator): assert every flag; the workflow treats repeats as no-ops.
      if (wf.state === 'running' && spec && plan.observedGeneration < generation)
        actions.push(...signalActions(undefined, spec));
      if (wf.state === 'running' && plan.phase === undefined)
        actions.push({
          type: 'markAwaitingWorker',
          ...(wf.taskQueue !== undefined ? { taskQueue: wf.taskQueue } : {}),
        });
      const closedAct = closedWorkflowAction(obs);
      if (closedAct) actions.push(closedAct);
      const count = missingNodeCount(plan);
      if (count !== undefined && !closedAct) actions.push({ type: 'writeNodeCount', nodesTotal: count });
      const after: Memory = {
        name: plan.name,
        generation,
        started: true,
        ...(spec ? { relayed: flagsOf(spec) } : {}),
      };
      return {
        // generation -1 until this run succeeds, so a failed relay is retried (asserting every flag).
        before: { name: plan.name, generation: -1, started: true },
        actions,
        after: closedAct ? projected(after, closedAct) : after,
      };
    }
  }
  const mem: Memory = memory ?? { name: plan.name, generation: -1, started: false };

  if (!mem.started) {
    if (!spec) {
      return {
        before: mem,
        actions: [{ type: 'markInvalid', message: invalid ?? 'invalid spec' }],
        after: { ...mem, generation },
      };
    }
    if (obs.startProblem && plan.statusWorkflowId !== obs.workflowId)
      return {
        before: mem,
        actions: [{ type: 'markInvalid', message: obs.startProblem }],
        after: { ...mem, generation },
      };
    const after: Memory = { ...mem, started: true, relayed: flagsOf(spec), generation };
    if (plan.statusWorkflowId === obs.workflowId) {
      const closedAct = closedWorkflowAction(obs);
      // It ran before and Temporal no longer knows it (history past retention): never re-run a plan.
      return {
        before: mem,
        actions: [
          { type: 'ensureFinalizer', stopIfGone: true },
          {
            type: 'log',
            level: 'warn',
            msg: 'the plan records a workflow Temporal no longer knows; not starting it again',
          },
          // A plan marked Failed for its closed workflow, aborted since: the hand-back needs no workflow.
          ...(closedAct ? [closedAct] : []),
        ],
        after: closedAct ? projected(after, closedAct) : after,
      };
    }
    return {
      before: mem,
      actions: [
        { type: 'ensureFinalizer', stopIfGone: true },
        { type: 'startWorkflow' },
        ...(plan.phase === undefined ? [{ type: 'markAwaitingWorker' } as const] : []),
      ],
      after,
    };
  }

  // Spec change of a plan whose workflow exists: relay the flags that changed.
  if (!spec) {
    return {
      before: mem,
      actions: [
        {
          type: 'log',
          level: 'warn',
          msg: 'spec changed to an invalid one; not relayed',
          fields: { generation, invalid },
        },
        {
          type: 'warnEvent',
          reason: EventReason.InvalidSpec,
          message: `spec of generation ${generation} not relayed to the running workflow: ${invalid}`,
        },
      ],
      after: { ...mem, generation },
    };
  }
  const after: Memory = { ...mem, relayed: flagsOf(spec), generation };
  // The workflow is closed (seen now, or projected before): a signal would reach nobody.
  const closedAct = closedWorkflowAction(obs);
  if (closedAct) return { before: mem, actions: [closedAct], after: projected(after, closedAct) };
  // A flag set on a plan that has ended changes nothing: say so once (this generation).
  const ignored = specChangeIgnored(plan, mem.relayed, flagsOf(spec), spec.uncordon);
  const noted: Action[] = ignored ? [ignored] : [];
  if (mem.closedProjected)
    return {
      before: mem,
      actions: [
        {
          type: 'log',
          level: 'info',
          msg: 'the workflow has closed; spec change not relayed',
          fields: { generation },
        },
        ...noted,
      ],
      after,
    };
  return { before: mem, actions: [...signalActions(mem.relayed, spec), ...noted], after };
}

/**
 * A plan named by something that outlives it: a running plan workflow on the operator's task queue
 * (its ID `maintenanceplan-<name>-<uid>`, src/workflows/messages.ts planWorkflowId) or node claims
 * (the annotations of src/k8s/node-claim.ts), gathered by the orphan sweep (src/operator/orphans.ts).
 */
export interface OrphanCandidate {
  /** The plan's metadata.name. */
  name: string;
  /** The plan's metadata.uid; undefined for a claim written without the uid annotation (old claims). */
  uid?: string;
  /** Its plan workflow is running (seen in the visibility list, or described). */
  workflowRunning: boolean;
  /** The nodes carrying its claim, sorted. */
  nodes: string[];
}

/**
 * What the sweep does about one {@link OrphanCandidate} (pure, table-tested):
 *
 * - `keep`: the plan exists (read from the API server, not the informer cache, and whatever the
 *   operator's `--plan-selector`): its reconcile, its deletion and its finalizer own the workflow
 *   and the claims; a claim without the uid annotation counts by name, as src/k8s/node-claim.ts heldBy does;
 * - `end`: no plan has the name (deleted without drainflow's cleanup: its finalizer removed by hand
 *   while the operator was down, or the deletion forced), or the plan of that name has another UID
 *   (deleted and created again, or restored from a backup: another plan). Then
 *   `terminate` the running workflow (and the node and hook workflows it left running) first, so
 *   nothing claims or evicts after the hand-back, and hand back `nodes`: claim removed, uncordoned
 *   only where that plan had cordoned it (was-unschedulable `'false'`), one Warning Event
 *   OrphanHandedBack on each node.
 *
 * Why terminate rather than the abort signal a deletion sends: nobody reads the workflow's status or
 * result any more, an abort needs a live worker on the workflow's task queue to make progress (a
 * terminate takes effect at once, worker or not), and the operator's hand-back without a workflow
 * is the one a deletion of a plan whose workflow is not running already uses. The price: the
 * workflow's own hand-back rules are not read, so spec.uncordon Never of a vanished plan is not
 * known and its nodes are uncordoned where it cordoned them.
 *
 * @param now the plan of that name as the API server has it now (its UID), undefined when none.
 * @param why what the sweep says of the plan when it is an orphan: in the Events and the termination reason.
 */
export function orphanVerdict(
  c: OrphanCandidate,
  now: { uid: string } | undefined,
): { verdict: 'keep' } | { verdict: 'end'; why: string; terminate: boolean; handBack: string[] } {
  if (now !== undefined && (c.uid === undefined || c.uid === now.uid)) return { verdict: 'keep' };
  const who = c.uid !== undefined ? `plan ${c.name} (uid ${c.uid})` : `plan ${c.name}`;
  const why =
    now === undefined
      ? `${who} no longer exists (deleted without drainflow's cleanup)`
      : `${who} no longer exists: the plan of that name now is another one (uid ${now.uid}; deleted and created again, or restored from a backup)`;
  return { verdict: 'end', why, terminate: c.workflowRunning, handBack: c.nodes };
}
