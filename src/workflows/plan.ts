/**
 * `drainPlanWorkflow`: one workflow per MaintenancePlan (ID {@link planWorkflowId}). It resolves the
 * nodes, cordons all of them first when spec.cordon is AllAtStart, drains them as child workflows
 * (`drainNodeWorkflow`, at most spec.maxUnavailableNodes at once), projects its state into the
 * plan's status, and hands the nodes back per spec.uncordon.
 *
 * Lifecycle: Pending → Running (⇄ Paused) → Drained | Blocked | Failed | Aborted; a plan of
 * spec.mode Preflight goes Pending → Running → Previewed (see `previewPlan`). From Drained or
 * Blocked the workflow stays open, waiting for `release` (→ Completed) or `abort` (sent by the
 * operator when the plan is deleted), so nodes are handed back exactly once by the workflow that
 * took them.
 *
 * Structure (Temporal's safe-message-handlers shape): one JSON-plain {@link PlanRunState}, message
 * handlers of one line each that change it, and one loop that sequences act → publish → wait. The
 * decisions are the pure reducers of `src/drain/plan-drain.ts`.
 *
 * - PDB budgets (plans of more than one node): the nodes' `pdbBudget` requests go into one ledger
 *   per plan, and the plan hands each PDB's allowed disruptions out as `pdbGrant` signals (once
 *   per workflow task), so two nodes never spend the same disruption; it names one reporting
 *   node per PDB, so a PDB's change reaches it once, not from every node behind it
 *   (src/drain/pdb-budget.ts).
 * - Slots: a node holds its slot of maxUnavailableNodes until its drain ends (Drained, deadline,
 *   aborted, failed, node deleted); a blocked node keeps it.
 * - Children are started with ParentClosePolicy ABANDON and report their end by a final
 *   `nodeProgress` signal, so they survive this workflow's continue-as-new (within one run the
 *   child's result is followed as well).
 * - Status writes are local activities (the status is not stored in the history; only the small
 *   result is), at an interval that grows with the plan's size ({@link statusWriteIntervalMs}).
 *   In plans that hand out PDB budgets the interval counts from the end of the previous write and
 *   no write starts in the workflow task that sends grants (a local activity holds back every
 *   command of its task).
 * - Continue-as-new at a quiet point (no child start, Event or signal in flight; handlers finished)
 *   when the history passes {@link CONTINUE_AS_NEW_EVENTS}, Temporal suggests it, or the run is
 *   older than {@link CONTINUE_AS_NEW_AGE_MS}. `status.workflow` keeps the first run.
 *
 * - Maintenance windows (spec.windows): while no window is open no node is
 *   cordoned or started and the running nodes are paused (a pause of its own, apart from the
 *   user's: `s.outsideWindow` next to `s.paused`); one durable timer wakes the loop at the next
 *   window boundary (src/drain/windows.ts computes it, deterministically, from the workflow clock).
 *   With deadlineCountsOutsideWindows false the deadlines count time inside windows only.
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow` are imported.
 */
import {
  CancellationScope,
  CancelledFailure,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { DrainActivities, PreflightActivities } from '../activities/types.js';
import type { GrantDelivery, GrantDeliveryActivities } from '../activities/grant-delivery.js';
import { MAX_PLAN_NODES } from '../api/bounds.js';
import type { MaintenancePlanStatus } from '../api/plan.js';
import {
  DeadlineReason,
  EventReason,
  FINAL_PLAN_PHASES,
  NodePhase,
  NodeReason,
  PlanPhase,
  PlanReason,
  PreflightReason,
  WindowReason,
} from '../api/reasons.js';
import { setCondition, statusEquals } from '../drain/conditions.js';
import {
  applyClaimCycle,
  claimCycleCondition,
  claimCycleKey,
  findClaimCycle,
  statusWaits,
} from '../drain/claim-cycle.js';
import type { ClaimCycleActivities } from '../activities/claim-cycle.js';
import { allocateBudget } from '../drain/pdb-budget.js';
import {
  applyNodeBudgetRequest,
  drainSettled,
  markFinished,
  mergeNodeProgress,
  nodeWorkflowFailed,
  nodeDeadlineMs,
  nodesToStart,
  lostNodesAtMs,
  pendingNode,
  planOutcome,
  runningNodes,
  runningSummary,
  type PlanEvent,
  type PlanRunState,
  type PlanForward,
} from '../drain/plan-drain.js';
import { planConditions, projectStatus, shownOutcome } from '../drain/projection.js';
import { windowState, windowedDeadline, windowsError, type WindowState } from '../drain/windows.js';
import {
  failedPreflightNode,
  nodeBlocked,
  preflightOutcome,
  summarizePreflight,
  type NodePreflight,
} from '../drain/preflight.js';
import { nodeDrainSpec, type DrainPlanInput, type DrainPlanResult } from './messages.js';
import {
  SA_NODES,
  SA_PHASE,
  SA_PLAN,
  nodeWorkflowId,
  temporalUiUrl,
  type PlanRef,
} from '../contract/names.js';
import {
  abortSignal,
  controlUpdate,
  pauseSignal,
  progressQuery,
  releaseNodeUpdate,
  releaseSignal,
  resumeSignal,
  type ControlAction,
  type ControlArgs,
} from '../contract/plan-messages.js';
import { nodeControlSignal, nodeProgressSignal, pdbBudgetSignal } from '../contract/node-messages.js';
import type { NodeProgress } from '../contract/progress.js';
import { drainNodeWorkflow } from './node.js';
import { WakeTimer } from './wake-timer.js';

/** First wait between two claim-cycle checks while the same nodes wait for other plans, ms. */
export const CLAIM_CYCLE_CHECK_FIRST_MS = 5_000;
/** Longest wait between two claim-cycle checks, ms (the wait doubles from the first). */
export const CLAIM_CYCLE_CHECK_MAX_MS = 120_000;

// Claim cycles: a few tries (reads only); a check that fails is made again at the next one.
const cycles = proxyActivities<ClaimCycleActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '5s', backoffCoefficient: 2, maximumAttempts: 3 },
});

/** `cordonNode` activities in flight at once while spec.cordon is AllAtStart, and `releaseNode` at hand-back. */
const NODE_CALL_CONCURRENCY = 10;
/** History length (events) after which the plan continues as new at its next quiet point. */
export const CONTINUE_AS_NEW_EVENTS = 10000;

/**
 * At most this many rounds of sending and waiting before a run ends or continues as new while
 * handlers keep producing Events, forwarded controls or grants (a busy plan gets quiet within one
 * or two); what is left then is carried to the next run ({@link PlanRunState.pending}).
 */
const QUIESCE_ROUNDS_MAX = 20;
/** Age of a run after which it continues as new at its next quiet point, ms (24 h). */
export const CONTINUE_AS_NEW_AGE_MS = 24 * 3600 * 1000;
/** After the deadline, how long a running node may take to report its end before it counts as lost, ms. */
const LOST_NODE_GRACE_MS = 10 * 60 * 1000;

/**
 * How many times in a row a plan that hands out PDB budgets puts off a due status write because
 * its workflow task sent grants (see `publish` in the loop).
 */
export const GRANT_DEFERRALS_MAX = 3;

/**
 * Minimum time between two status writes, ms: 1 s for up to 20 nodes, growing by 50 ms per node,
 * at most 15 s (a 200-node plan writes at most every 10 s), so the API server's load from status
 * writes does not grow with the plan's size times its progress rate.
 */
export function statusWriteIntervalMs(nodes: number): number {
  return Math.min(15000, Math.max(1000, nodes * 50));
}

const k8s = proxyActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});
/** spec.mode Preflight: one activity per node, which may send many dry-run evictions. */
const preflight = proxyActivities<PreflightActivities>({
  startToCloseTimeout: '5m',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2, maximumAttempts: 5 },
});
const local = proxyLocalActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});
/** The plan's PDB grants to its nodes (src/activities/grant-delivery.ts): quick, retried until done. */
const grantDelivery = proxyLocalActivities<GrantDeliveryActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
});

/**
 * Temporal limits one search attribute value to 2 KiB by default
 * (`limit.searchAttributeValueSize`; a larger value fails every workflow task with
 * BadSearchAttributes). The node list is cut to fit; status.nodes always has all of them.
 */
const SEARCH_ATTRIBUTE_VALUE_BYTES = 1900;

/** The longest prefix of `nodes` whose JSON encoding fits {@link SEARCH_ATTRIBUTE_VALUE_BYTES}. */
export function searchableNodes(nodes: readonly string[]): string[] {
  const out: string[] = [];
  let size = 2; // []
  for (const n of nodes) {
    size += n.length + 3; // quotes and comma
    if (size > SEARCH_ATTRIBUTE_VALUE_BYTES) break;
    out.push(n);
  }
  return out;
}

function errorMessage(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof Error) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

/** Drains the nodes of one MaintenancePlan. See the module comment. */
export async function drainPlanWorkflow(input: DrainPlanInput): Promise<DrainPlanResult> {
  const root = CancellationScope.current();
  const result = await CancellationScope.nonCancellable(() => drainPlan(input, root.cancelRequested));
  // The run stopped because Temporal asked it to: it closes CANCELED, which is how Temporal (its
  // UI, `temporal workflow describe`) shows that a cancellation request was honoured.
  if (root.consideredCancelled && result.reason === PlanReason.WorkflowCanceled)
    throw new CancelledFailure(result.message);
  return result;
}

/**
 * The plan workflow's body. It runs shielded from Temporal's cancellation: a cancellation request
 * (Temporal UI, `temporal workflow cancel`) rejects `cancelRequested`, which the body takes as an
 * abort ({@link PlanRunState.cancelled}): no more evictions, the nodes handed back as an abort hands
 * them back, the plan Aborted/WorkflowCanceled. Without the shield every wait of the body (and its
 * background waits) would reject with CancelledFailure, and the plan would stop where it stood,
 * its nodes claimed and cordoned, its status frozen.
 */
async function drainPlan(input: DrainPlanInput, cancelRequested: Promise<never>): Promise<DrainPlanResult> {
  const { spec } = input;
  const plan: PlanRef = { name: input.plan.name, uid: input.plan.uid };
  const windows = spec.windows?.length ? spec.windows : undefined;
  const windowedDeadlines = windows !== undefined && spec.deadlineCountsOutsideWindows === false;
  const afterEachNode = spec.uncordon === 'AfterEachNode';
  const info = workflowInfo();
  const runStartMs = Date.now();
  const s: PlanRunState = input.carried ?? {
    stage: 'Resolve',
    plan: {
      phase: PlanPhase.Pending,
      reason: PlanReason.Starting,
      message: 'resolving nodes',
      observedGeneration: input.plan.generation,
      workflow: {
        namespace: info.namespace,
        workflowId: info.workflowId,
        runId: info.firstExecutionRunId,
        ...(input.temporalUiUrl
          ? {
              url: temporalUiUrl(
                input.temporalUiUrl,
                info.namespace,
                info.workflowId,
                info.firstExecutionRunId,
              ),
            }
          : {}),
      },
      nodes: [],
      conditions: [],
    },
    paused: spec.paused,
    aborted: spec.abort,
    released: spec.release,
    claimed: {},
    started: [],
    finished: [],
    cordoned: 0,
    stopStarting: false,
    announced: [],
    continuedRuns: 0,
  };

  // ---- what the loop acts on next (not carried: the loop empties them before continuing as new) ----
  let woken = false;
  let changeSeq = 1;
  let publishedSeq = 0;
  let urgent = false;
  // What the previous run had not sent when it continued as new (see `quiesce`) goes first.
  const events: PlanEvent[] = s.pending?.events ?? [];
  /** Controls to signal to running nodes; `generation`: the plan generation of the user's control. */
  const forwards: PlanForward[] = s.pending?.forwards ?? [];
  const background = new Set<Promise<void>>();
  let pendingStarts = 0;
  /** What the windows said at the last look (spec.windows). */
  let lastWindow: WindowState | undefined;
  const wake = () => {
    woken = true;
    changeSeq++;
  };
  /** Paused by the user or by the maintenance windows: no node starts, running nodes evict nothing new. */
  const held = () => s.paused || s.outsideWindow === true;
  /** Follows a background call (Event, signal) so continue-as-new and the end wait for it; failures are ignored. */
  const track = (p: Promise<unknown>) => {
    const t: Promise<void> = p
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        background.delete(t);
        woken = true;
      });
    background.add(t);
  };

  const setPhase = (phase: PlanPhase, reason: string, message: string) => {
    const st = s.plan;
    const changed = phase !== st.phase || reason !== st.reason;
    st.phase = phase;
    st.reason = reason;
    st.message = message;
    if (FINAL_PLAN_PHASES.has(phase) && phase !== PlanPhase.Blocked) st.completedAtMs ??= Date.now();
    if (
      phase === PlanPhase.Blocked &&
      (reason === PlanReason.DeadlineExceeded || reason === DeadlineReason.NodesSkipped)
    )
      st.completedAtMs ??= Date.now();
    if (changed) {
      upsertSearchAttributes([{ key: SA_PHASE, value: phase }]);
      if (s.lastEventPhase !== phase) {
        s.lastEventPhase = phase;
        // A drain that ended with pods deleted at the deadline reads DrainedWithDeletions in status
        // (shownOutcome), one with a node deleted during it DrainedWithNodesDeleted; its Event says
        // the same.
        const shown = shownOutcome({ phase, reason, message, nodes: st.nodes });
        const said = shown.reason !== reason ? shown : { reason, message };
        events.push({
          type:
            phase === PlanPhase.Blocked ||
            phase === PlanPhase.Failed ||
            (phase === PlanPhase.Previewed && reason !== PreflightReason.NoBlockers) ||
            reason === PlanReason.HandedBackWithHookFailures
              ? 'Warning'
              : 'Normal',
          reason: said.reason,
          message: said.message,
        });
      }
    }
    wake();
  };

  // ---- messages: one line each over the state ----
  const forwardAll = (action: ControlAction, generation?: number) => {
    for (const node of runningNodes(s))
      forwards.push({ node, action, ...(generation !== undefined ? { generation } : {}) });
  };
  const control = (action: ControlAction, args?: ControlArgs) => {
    // A pause or resume relayed for an older generation than one already seen is stale (a standby
    // operator's start-up relay crossing the leader's newer one): the newer spec wins.
    if (
      (action === 'pause' || action === 'resume') &&
      args?.generation !== undefined &&
      args.generation < s.plan.observedGeneration
    )
      return;
    if (args?.generation !== undefined && args.generation > s.plan.observedGeneration)
      s.plan.observedGeneration = args.generation;
    if (action === 'pause' && !s.paused && !FINAL_PLAN_PHASES.has(s.plan.phase)) {
      s.paused = true;
      forwardAll('pause', args?.generation);
      if (
        s.plan.phase === PlanPhase.Running ||
        s.plan.phase === PlanPhase.Pending ||
        (s.plan.phase === PlanPhase.Paused && s.plan.reason === WindowReason.OutsideMaintenanceWindow)
      )
        setPhase(
          PlanPhase.Paused,
          PlanReason.PausedByUser,
          // A pause without a generation came as a raw signal (Temporal UI or CLI), not from the
          // spec: spec.paused stays false, so `kubectl patch … paused: false` changes nothing.
          // Only the message differs, and the phase changes with it, so the status write this
          // pause makes happens either way.
          args?.generation === undefined
            ? `paused by a pause signal, not by spec.paused: no new evictions until resumed with the resume signal or drainflow resume ${plan.name}`
            : 'no new evictions until resumed',
        );
    } else if (action === 'resume' && s.paused) {
      s.paused = false;
      if (s.outsideWindow) {
        // Still outside the windows: the nodes stay paused until the next one opens.
        if (s.plan.phase === PlanPhase.Paused)
          setPhase(PlanPhase.Paused, WindowReason.OutsideMaintenanceWindow, outsideMessage());
      } else {
        s.resumedAtMs = Date.now();
        forwardAll('resume', args?.generation);
        if (s.plan.phase === PlanPhase.Paused)
          setPhase(PlanPhase.Running, PlanReason.Draining, 'draining nodes');
      }
    } else if (action === 'abort' && !s.aborted) {
      s.aborted = true;
      forwardAll('abort', args?.generation);
    } else if (action === 'release') {
      // uncordon AfterEachNode: the whole-plan release hands back every node as it is drained.
      if (afterEachNode && !s.released) forwardAll('release', args?.generation);
      s.released = true;
    }
    wake();
  };
  // A cancellation request from Temporal is an abort that says where it came from.
  cancelRequested.catch(() => {
    s.cancelled = true;
    control('abort');
  });
  /** uncordon AfterEachNode: a per-node release (a node not started yet hands itself back once drained). */
  const releaseOne = (node: string) => {
    if (runningNodes(s).includes(node)) forwards.push({ node, action: 'release' });
    else if (!s.started.includes(node) && !(s.releasedNodes ??= []).includes(node))
      s.releasedNodes.push(node);
    wake();
  };
  /** The plan's conditions now: those of its phase, and ClaimCycle once a cycle was seen. */
  const conditionsNow = () => {
    const c = planConditions(s.plan, Date.now());
    const cycle = claimCycleCondition(s.claimCycle, s.plan.observedGeneration);
    return cycle ? setCondition(c, cycle, new Date(Date.now()).toISOString()) : c;
  };
  /**
   * Claim cycles: while nodes of the plan wait for other plans' claims, the worker reads the
   * waits they lead to (claimWaitGraph) at once when the waits change, then after
   * CLAIM_CYCLE_CHECK_FIRST_MS, doubling up to CLAIM_CYCLE_CHECK_MAX_MS; a cycle through this plan
   * sets the ClaimCycle condition and sends one Warning Event per cycle.
   */
  let cycleWaitsKey = '';
  let cycleCheckAtMs = 0;
  let cycleBackoffMs = CLAIM_CYCLE_CHECK_FIRST_MS;
  let cycleChecking = false;
  const checkClaimCycle = (now: number): number | undefined => {
    const waits = s.stage === 'Settled' || s.aborted ? [] : statusWaits(plan.name, s.plan.nodes);
    if (waits.length === 0) {
      cycleWaitsKey = '';
      if (s.claimCycle?.active && !cycleChecking) {
        s.claimCycle = applyClaimCycle(s.claimCycle, undefined).next;
        wake();
      }
      return undefined;
    }
    const key = claimCycleKey(waits);
    if (key !== cycleWaitsKey) {
      cycleWaitsKey = key;
      cycleCheckAtMs = now;
      cycleBackoffMs = CLAIM_CYCLE_CHECK_FIRST_MS;
    }
    if (cycleChecking) return undefined;
    if (now < cycleCheckAtMs) return cycleCheckAtMs;
    cycleChecking = true;
    cycleCheckAtMs = now + cycleBackoffMs;
    cycleBackoffMs = Math.min(cycleBackoffMs * 2, CLAIM_CYCLE_CHECK_MAX_MS);
    track(
      cycles.claimWaitGraph
        .executeWithOptions({ summary: 'claim cycle check' }, [
          { plan, waits: waits.map((w) => ({ node: w.node, heldBy: w.heldBy })) },
        ])
        .then(({ edges }) => {
          const r = applyClaimCycle(s.claimCycle, findClaimCycle(plan.name, edges));
          s.claimCycle = r.next;
          if (r.warning) events.push({ type: 'Warning', reason: EventReason.ClaimCycle, message: r.warning });
          if (r.changed) wake();
        })
        .finally(() => {
          cycleChecking = false;
        }),
    );
    return cycleCheckAtMs;
  };
  const project = (): MaintenancePlanStatus => projectStatus({ ...s.plan, conditions: conditionsNow() });
  setHandler(pauseSignal, (a) => control('pause', a));
  setHandler(resumeSignal, (a) => control('resume', a));
  setHandler(abortSignal, (a) => control('abort', a));
  setHandler(releaseSignal, (a) => control('release', a));
  setHandler(progressQuery, project);
  setHandler(
    controlUpdate,
    async ({ action, generation }) => {
      control(action, generation !== undefined ? { generation } : undefined);
      const mine = changeSeq;
      urgent = true;
      await condition(() => publishedSeq >= mine || planGone);
      return project();
    },
    {
      validator: ({ action }) => {
        if (!['pause', 'resume', 'abort', 'release'].includes(action))
          throw new Error(`unknown action ${String(action)}`);
      },
    },
  );
  if (afterEachNode)
    setHandler(
      releaseNodeUpdate,
      async ({ node }) => {
        releaseOne(node);
        const mine = changeSeq;
        urgent = true;
        await condition(() => publishedSeq >= mine || planGone);
        return project();
      },
      {
        validator: ({ node }) => {
          if (!s.plan.nodes.some((n) => n.name === node))
            throw new Error(`node ${String(node)} is not a node of plan ${plan.name}`);
        },
      },
    );
  setHandler(nodeProgressSignal, (p: NodeProgress) => {
    events.push(...mergeNodeProgress(s, p));
    wake();
  });
  // Budget requests change no status. The grants do not wait for the loop (behind a status write
  // it delayed them by 0.5 s median, 2 s p90, in the fleet benchmark): they go out once per
  // workflow task from the grant pump below, after every request of that task was applied (one
  // allocation, at most one grant per node).
  // A carried ledger is allocated first thing in a new run (the previous one sent no grants while
  // it closed: see `closing`).
  let grantsDue = s.budget !== undefined;
  /**
   * The run is continuing as new: no grant is allocated or delivered any more, the next run does
   * that first. Why: the server refuses a workflow task that closes the run when a signal arrived
   * meanwhile (UnhandledCommand), and the SDK runs the task again with the signal. Grants go out
   * by a local activity, which has run by then: the task's second run would allocate again and
   * send other grants under the same numbers, which the nodes ignore while the ledger counts them
   * issued (a PDB that allows disruptions then hands out none).
   */
  let closing = false;
  setHandler(pdbBudgetSignal, (req) => {
    applyNodeBudgetRequest(s, req);
    // Nodes of plans that name reporters send their changed progress along (never a final one).
    if (req.progress) {
      events.push(...mergeNodeProgress(s, req.progress));
      wake();
    }
    grantsDue = true;
  });
  // The grant pump: once per workflow task with new requests, after all of them were applied. It
  // ends when the run does (`pumping` false) and is awaited there, like every promise of the run.
  let pumping = true;
  const grantPump = (async () => {
    for (;;) {
      await condition(() => (grantsDue && !closing) || !pumping);
      if (!pumping) return;
      sendGrants();
    }
  })();

  // ---- act: Events, control forwarding, status writes ----
  let planGone = false;
  let published: MaintenancePlanStatus | undefined;
  let lastPublishMs = 0;
  const flushEvents = () => {
    for (const e of events.splice(0))
      track(k8s.recordEvent.executeWithOptions({ summary: `event ${e.reason}` }, [{ plan, ...e }]));
    for (const f of forwards.splice(0)) {
      // A user's control goes on with the generation that caused it, so the node learns a
      // resume's generation and ignores an older pause the operator sent it directly
      // (src/operator/node-stops.ts). Window-driven ones carry none.
      track(
        getExternalWorkflowHandle(nodeWorkflowId(info.workflowId, f.node)).signal(nodeControlSignal, {
          action: f.action,
          ...(f.generation !== undefined ? { generation: f.generation } : {}),
        }),
      );
    }
    sendGrants();
  };
  // Grants go to the nodes through the `deliverGrants` local activity, as client signals sent in
  // parallel: a workflow's own signal command is a transfer task of the plan, carried one after the
  // other, plus two events and a task in the plan's history per grant (in `scale`, 3.2 s median
  // from the plan's send to the node's history). One delivery runs at a time, so each node gets its
  // grants in `seq` order (a node ignores an older one).
  const undelivered: GrantDelivery[] = s.pending?.grants ?? [];
  delete s.pending;
  let delivering = false;
  function deliverGrants(): void {
    if (delivering || closing || undelivered.length === 0) return;
    delivering = true;
    const grants = undelivered.splice(0);
    track(
      grantDelivery.deliverGrants({ grants }).finally(() => {
        delivering = false;
        deliverGrants();
      }),
    );
  }
  /** Hands out what the PDB budgets allow now (a node that ended may have freed some). */
  function sendGrants(): void {
    if (closing) return;
    grantsDue = false;
    if (!s.budget || s.aborted) return;
    for (const { node, grant } of allocateBudget(s.budget)) {
      undelivered.push({ workflowId: nodeWorkflowId(info.workflowId, node), grant });
      grantsSentAtMs = Date.now();
    }
    deliverGrants();
  }
  // Grants before status writes: a status write is a local activity, and a workflow task that runs
  // one sends none of its commands (the grants' signals) before it finishes. In the fleet benchmark
  // on a loaded host the plan's tasks with a write took 3.0 s (median) against 0.5 s without one,
  // and 112 of the 118 tasks that sent grants had one. So a write is not started in the workflow
  // task that sent grants (it goes 1 ms later, in a task of its own; at most
  // GRANT_DEFERRALS_MAX times in a row, so grants in every task do not stop the writes), and the
  // interval between writes counts from the end of the previous write, so a slow API server does
  // not keep a write running in nearly every task.
  let grantsSentAtMs: number | undefined;
  let deferredWrites = 0;
  /** Writes the status when it changed and the interval allows (or an Update waits); @returns when to try again. */
  const publish = async (force: boolean): Promise<number | undefined> => {
    if (planGone || publishedSeq >= changeSeq) return undefined;
    const grantsFirst = s.budget !== undefined;
    const interval = statusWriteIntervalMs(s.plan.nodes.length);
    const due = lastPublishMs + interval;
    if (!force && !urgent && Date.now() < due) return due;
    if (
      !force &&
      !urgent &&
      grantsFirst &&
      grantsSentAtMs === Date.now() && // the workflow clock stands still within one workflow task
      deferredWrites < GRANT_DEFERRALS_MAX
    ) {
      deferredWrites++;
      return Date.now() + 1;
    }
    deferredWrites = 0;
    urgent = false;
    const seq = changeSeq;
    s.plan.conditions = conditionsNow();
    const status = projectStatus(s.plan);
    lastPublishMs = Date.now();
    if (!published || !statusEquals(status, published)) {
      try {
        const { exists } = await local.publishStatus({ plan, status });
        if (!exists) planGone = true; // the plan is gone: nothing to write to any more
        published = status;
      } catch {
        // A status write refused for good (e.g. 422) must not stop the drain; the next change tries again.
      }
      if (grantsFirst) lastPublishMs = Date.now();
    }
    publishedSeq = seq;
    return undefined;
  };
  /**
   * Waits until every message handler finished. An Update handler returns once the status it
   * changed is written; an Update that arrived after the last write (while the workflow waited
   * for its Events, e.g. `drainflow abort` right after the operator relayed spec.abort) waits for
   * another write, so one is made for it: without it that handler and this wait waited for each
   * other for ever (the Update accepted, never completed; the workflow open).
   */
  const handlersFinished = async (): Promise<void> => {
    for (;;) {
      await condition(() => allHandlersFinished() || planGone || publishedSeq < changeSeq);
      if (allHandlersFinished()) return;
      if (planGone) return condition(allHandlersFinished);
      flushEvents();
      await publish(true);
      await condition(() => background.size === 0);
    }
  };
  /**
   * Brings the run to a quiet point: Events, forwarded controls and grants (none while `closing`:
   * the next run sends them) sent and answered, no
   * child starting, every handler finished, the status written; and again while handlers of the
   * last workflow task produced more of them, so nothing a handler did is lost when the run ends or
   * continues as new (the check and the end fall in one workflow task: no message can come between).
   */
  const quiesce = async (): Promise<void> => {
    for (let round = 0; round < QUIESCE_ROUNDS_MAX; round++) {
      flushEvents();
      await publish(true);
      await condition(() => background.size === 0 && pendingStarts === 0);
      await handlersFinished();
      const quiet =
        events.length === 0 &&
        forwards.length === 0 &&
        (closing || (!grantsDue && undelivered.length === 0)) &&
        background.size === 0 &&
        pendingStarts === 0;
      if (quiet) break;
    }
    pumping = false;
    await grantPump;
  };
  const close = async (result: DrainPlanResult): Promise<DrainPlanResult> => {
    await quiesce();
    return result;
  };

  const continueAsNewDue = () => {
    const wf = workflowInfo();
    return (
      wf.continueAsNewSuggested ||
      wf.historyLength >= (input.continueAsNewEvents ?? CONTINUE_AS_NEW_EVENTS) ||
      Date.now() - runStartMs >= CONTINUE_AS_NEW_AGE_MS
    );
  };
  const continueAsNewNow = async (): Promise<never> => {
    closing = true;
    // The task that decided to close may have sent grants; the run closes in a later one (a timer's
    // task is never refused), which sends none.
    await sleep(1);
    await quiesce();
    s.continuedRuns++;
    // What a run that never got quiet (QUIESCE_ROUNDS_MAX) still holds goes along; the next run
    // sends it first.
    s.pending = { events: events.splice(0), forwards: forwards.splice(0), grants: undelivered.splice(0) };
    return continueAsNew<typeof drainPlanWorkflow>({ ...input, carried: s });
  };

  const startNode = (node: string) => {
    s.started.push(node);
    pendingStarts++;
    const startedPaused = held();
    const planDeadlineMs = s.plan.deadlineMs!;
    const deadlineMs =
      windowedDeadlines && spec.nodeDrainTimeoutSeconds !== undefined
        ? Math.min(
            planDeadlineMs,
            windowedDeadline(windows!, Date.now(), spec.nodeDrainTimeoutSeconds * 1000),
          )
        : nodeDeadlineMs(planDeadlineMs, Date.now(), spec.nodeDrainTimeoutSeconds);
    const entry = s.plan.nodes.find((n) => n.name === node);
    if (entry && deadlineMs < planDeadlineMs) entry.deadlineMs = deadlineMs;
    startChild(drainNodeWorkflow, {
      workflowId: nodeWorkflowId(info.workflowId, node),
      args: [
        {
          plan,
          node,
          drain: {
            ...nodeDrainSpec(spec),
            ...(s.plan.nodes.length > 1 ? { coordinatePdbs: true, pdbReporters: true } : {}),
            onDeadline: spec.onDeadline ?? 'Stop',
            deadlineWarningSeconds: spec.deadlineWarningSeconds ?? 300,
            planDeadlineMs,
          },
          deadlineMs,
          parentWorkflowId: info.workflowId,
          paused: startedPaused,
          ...(afterEachNode && (s.released || s.releasedNodes?.includes(node)) ? { released: true } : {}),
          // spec.cordon AllAtStart: the Node the plan claimed (a Node created again under its name
          // before the child starts is not claimed by it).
          ...(s.claimed[node]?.nodeUid !== undefined ? { nodeUid: s.claimed[node].nodeUid } : {}),
          // The generation of the user's controls the plan has seen, when it has seen one (a node
          // started after a resume then ignores an older pause sent to it directly).
          ...(s.plan.observedGeneration > input.plan.generation
            ? { controlGeneration: s.plan.observedGeneration }
            : {}),
        },
      ],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `drain node ${node}`,
    }).then(
      (handle) => {
        pendingStarts--;
        // An abort or a pause/resume that arrived while the child was starting goes to it now.
        if (s.aborted) forwards.push({ node, action: 'abort' });
        else if (held() !== startedPaused) forwards.push({ node, action: held() ? 'pause' : 'resume' });
        wake();
        handle.result().then(
          (r) => {
            events.push(...mergeNodeProgress(s, { ...r, final: true }));
            markFinished(s, node);
            wake();
          },
          (err: unknown) => {
            if (!s.finished.includes(node)) nodeWorkflowFailed(s, node, errorMessage(err));
            wake();
          },
        );
      },
      (err: unknown) => {
        pendingStarts--;
        nodeWorkflowFailed(s, node, `could not start the node's drain: ${errorMessage(err)}`);
        wake();
      },
    );
  };

  // ---- search attributes (each run upserts them: cheap, and independent of what continue-as-new copies) ----
  upsertSearchAttributes([
    { key: SA_PLAN, value: plan.name },
    { key: SA_PHASE, value: s.plan.phase },
    ...(s.plan.nodes.length
      ? [{ key: SA_NODES, value: searchableNodes(s.plan.nodes.map((n) => n.name)) }]
      : []),
  ]);

  // ---- maintenance windows ----
  // A zone the operator's Node.js knew but this worker's does not fails the plan before it touches a
  // node. (A later run on such a worker fails its workflow tasks, retried until a worker knows the zone.)
  const windowProblem = windows && s.stage === 'Resolve' ? windowsError(windows) : undefined;
  if (windowProblem) {
    setPhase(PlanPhase.Failed, PlanReason.InvalidSpec, windowProblem);
    return close({ phase: PlanPhase.Failed, reason: PlanReason.InvalidSpec, message: windowProblem });
  }
  function outsideMessage(): string {
    const next = lastWindow?.nextStartMs;
    return next !== undefined
      ? `outside the maintenance windows: no new evictions until the next one opens at ${new Date(next).toISOString()}`
      : 'outside the maintenance windows: none opens within a week';
  }
  /**
   * Reads the windows at the workflow's time into the state; when one opened or closed, forwards
   * resume/pause to the running nodes (unless the user paused the plan). @returns when to look again.
   */
  const observeWindow = (): number | undefined => {
    if (!windows || s.stage === 'Settled') return undefined;
    // Nothing changes before the next boundary: ask again only then (one answer costs about 3 ms).
    if (lastWindow && Date.now() < lastWindow.nextChangeMs) return lastWindow.nextChangeMs;
    const w = windowState(windows, Date.now());
    lastWindow = w;
    const view = {
      open: w.open,
      ...(w.currentEndMs !== undefined ? { currentEndMs: w.currentEndMs } : {}),
      ...(w.nextStartMs !== undefined ? { nextStartMs: w.nextStartMs } : {}),
    };
    const before = s.plan.window;
    if (
      !before ||
      before.open !== view.open ||
      before.currentEndMs !== view.currentEndMs ||
      before.nextStartMs !== view.nextStartMs
    ) {
      s.plan.window = view;
      wake();
    }
    if (!w.open !== (s.outsideWindow ?? false)) {
      s.outsideWindow = !w.open;
      if (w.open && !s.paused) s.resumedAtMs = Date.now();
      if (!s.paused && !s.aborted) forwardAll(w.open ? 'resume' : 'pause');
      wake();
    }
    return w.nextChangeMs;
  };
  /** Plan phase Paused/OutsideMaintenanceWindow while outside the windows (a user's pause shows first). */
  const windowPhase = () => {
    if (!windows || s.paused || s.aborted || FINAL_PLAN_PHASES.has(s.plan.phase)) return;
    const out = WindowReason.OutsideMaintenanceWindow;
    if (s.outsideWindow) {
      const msg = outsideMessage();
      if (s.plan.phase !== PlanPhase.Paused || s.plan.reason !== out || s.plan.message !== msg)
        setPhase(PlanPhase.Paused, out, msg);
    } else if (s.plan.phase === PlanPhase.Paused && s.plan.reason === out)
      setPhase(
        PlanPhase.Running,
        s.stage === 'Cordon' ? PlanReason.Cordoning : PlanReason.Draining,
        `a maintenance window is open: draining ${s.plan.nodes.length} node(s)`,
      );
  };
  observeWindow();
  /**
   * spec.mode Preflight: examines the resolved nodes (at most NODE_CALL_CONCURRENCY at once), one
   * `preflightNode` activity each (reads and dry-run evictions only: nothing is cordoned, claimed or
   * evicted), then writes the report to status.preflight and ends Previewed. A node whose activity
   * fails for good is reported with its error. An abort (or the plan's deletion) ends it Aborted.
   */
  const previewPlan = async (): Promise<DrainPlanResult> => {
    const names = s.plan.nodes.map((n) => n.name);
    setPhase(
      PlanPhase.Running,
      PreflightReason.Previewing,
      `examining ${names.length} node(s): no cordon, no eviction, dry-run evictions only`,
    );
    const results: NodePreflight[] = [];
    for (let i = 0; i < names.length && !s.aborted; i += NODE_CALL_CONCURRENCY) {
      flushEvents();
      await publish(false);
      const batch = await Promise.all(
        names
          .slice(i, i + NODE_CALL_CONCURRENCY)
          .map((node) =>
            preflight.preflightNode
              .executeWithOptions({ summary: `preflight ${node}` }, [
                { node, selection: spec.podSelection, planName: plan.name },
              ])
              .catch((err: unknown) => failedPreflightNode(node, errorMessage(err))),
          ),
      );
      for (const r of batch) {
        const n = s.plan.nodes.find((x) => x.name === r.report.name);
        if (!n) continue;
        n.phase = NodePhase.Previewed;
        n.podsTotal = r.report.podsToEvict;
        n.reason = r.report.error
          ? PreflightReason.PreflightFailed
          : nodeBlocked(r.report)
            ? PreflightReason.BlockersFound
            : PreflightReason.NoBlockers;
        n.message =
          r.report.error ??
          `${r.report.podsToEvict} pod(s) to evict, ${r.report.podsSkipped} skipped, ${r.report.blockerCount} blocker(s), ${r.report.dryRunRefused} dry-run refusal(s)`;
      }
      results.push(...batch);
      wake();
    }
    if (s.aborted) {
      const reason = s.cancelled ? PlanReason.WorkflowCanceled : PlanReason.Aborted;
      setPhase(
        PlanPhase.Aborted,
        reason,
        `${s.cancelled ? 'cancelled from Temporal' : 'aborted'} during the preflight; nothing was cordoned or evicted`,
      );
      return close({ phase: PlanPhase.Aborted, reason, message: s.plan.message });
    }
    const report = summarizePreflight(results, Date.now());
    s.plan.preflight = report;
    const reason = preflightOutcome(report);
    setPhase(PlanPhase.Previewed, reason, report.summary);
    return close({ phase: PlanPhase.Previewed, reason, message: report.summary });
  };

  // ---- 1. resolve the nodes (once) ----
  if (s.stage === 'Resolve') {
    let resolved;
    try {
      resolved = await k8s.resolveNodes.executeWithOptions({ summary: 'resolve nodes' }, [
        {
          ...(spec.nodeNames ? { nodeNames: spec.nodeNames } : {}),
          ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
        },
      ]);
    } catch (err) {
      const msg = `resolving the nodes failed: ${errorMessage(err)}`;
      setPhase(PlanPhase.Failed, PlanReason.ResolveFailed, msg);
      return close({ phase: PlanPhase.Failed, reason: PlanReason.ResolveFailed, message: msg });
    }
    let failure: { reason: string; message: string } | undefined;
    if (resolved.missing.length > 0)
      failure = {
        reason: PlanReason.NodeNotFound,
        message: `node(s) not found: ${resolved.missing.join(', ')}`,
      };
    else if (resolved.nodes.length === 0)
      failure = { reason: PlanReason.NoNodesMatched, message: 'spec.nodeSelector matches no node' };
    else if (resolved.nodes.length > MAX_PLAN_NODES)
      failure = {
        reason: PlanReason.TooManyNodes,
        message: `${resolved.nodes.length} nodes match; one plan drains at most ${MAX_PLAN_NODES}`,
      };
    if (failure) {
      setPhase(PlanPhase.Failed, failure.reason, failure.message);
      return close({ phase: PlanPhase.Failed, ...failure });
    }
    upsertSearchAttributes([{ key: SA_NODES, value: searchableNodes(resolved.nodes) }]);
    s.plan.nodes = resolved.nodes.map(pendingNode);
    s.plan.startedAtMs = Date.now();
    if (spec.mode === 'Preflight') return previewPlan();
    s.plan.deadlineMs = windowedDeadlines
      ? windowedDeadline(windows!, s.plan.startedAtMs, spec.drainTimeoutSeconds * 1000)
      : s.plan.startedAtMs + spec.drainTimeoutSeconds * 1000;
    s.stage = spec.cordon === 'AllAtStart' ? 'Cordon' : 'Drain';
    if (s.paused) setPhase(PlanPhase.Paused, PlanReason.PausedByUser, 'no new evictions until resumed');
    else if (s.outsideWindow)
      setPhase(PlanPhase.Paused, WindowReason.OutsideMaintenanceWindow, outsideMessage());
    else if (s.stage === 'Cordon')
      setPhase(
        PlanPhase.Running,
        PlanReason.Cordoning,
        `cordoning ${resolved.nodes.length} node(s) before the first eviction`,
      );
    else setPhase(PlanPhase.Running, PlanReason.Draining, `draining ${resolved.nodes.length} node(s)`);
  }
  const deadlineMs = s.plan.deadlineMs!;
  s.plan.onDeadline = spec.onDeadline ?? 'Stop';
  s.plan.deadlineWarningSeconds = spec.deadlineWarningSeconds ?? 300;
  s.maxUnavailableNodes = spec.maxUnavailableNodes;
  const timer = new WakeTimer();

  // ---- 2. the loop: act → publish → continue-as-new at a quiet point → wait ----
  for (;;) {
    const now = Date.now();
    const windowChangeMs = observeWindow();
    windowPhase();
    if (s.stage === 'Cordon') {
      if (s.aborted || now >= deadlineMs || s.cordoned >= s.plan.nodes.length) {
        s.stage = 'Drain';
        if (!s.aborted && !held() && now < deadlineMs)
          setPhase(PlanPhase.Running, PlanReason.Draining, `draining ${s.plan.nodes.length} node(s)`);
        continue;
      }
      if (!held()) {
        // spec.cordon AllAtStart: claim and cordon every node before the first eviction, so evicted
        // pods are rescheduled only onto nodes outside the plan.
        if (s.plan.phase !== PlanPhase.Running || s.plan.reason !== PlanReason.Cordoning)
          setPhase(
            PlanPhase.Running,
            PlanReason.Cordoning,
            `cordoning ${s.plan.nodes.length} node(s) before the first eviction`,
          );
        const batch = s.plan.nodes.slice(s.cordoned, s.cordoned + NODE_CALL_CONCURRENCY);
        const results = await Promise.all(
          batch.map((n) =>
            k8s.cordonNode
              .executeWithOptions({ summary: `cordon ${n.name}` }, [{ plan, node: n.name }])
              .catch(() => undefined),
          ),
        );
        batch.forEach((n, i) => {
          const res = results[i];
          if (res?.outcome === 'Cordoned') {
            s.claimed[n.name] = {
              cordonedByPlan: !res.wasUnschedulable,
              ...(res.nodeUid !== undefined ? { nodeUid: res.nodeUid } : {}),
            };
            n.phase = NodePhase.Cordoned;
          } else if (res?.outcome === 'HeldByOtherPlan') {
            n.phase = NodePhase.Waiting;
            n.reason = NodeReason.NodeHeldByOtherPlan;
            n.message = `node ${n.name} is held by plan ${res.heldBy}`;
            n.heldBy = res.heldBy;
          }
          // NodeNotFound or an error: the node's own drain tries again and reports it.
        });
        s.cordoned += batch.length;
        wake();
      }
    } else if (s.stage === 'Drain') {
      if (!s.outsideWindow)
        for (const node of nodesToStart(s, spec.maxUnavailableNodes, now)) startNode(node);
      // A node that never reports its end after the deadline (its workflow was terminated) is lost;
      // not while the plan is held (a node paused past its deadline waits for the resume).
      const lostAt = lostNodesAtMs(s, held(), LOST_NODE_GRACE_MS);
      if (lostAt !== undefined && now >= lostAt && pendingStarts === 0)
        for (const node of runningNodes(s))
          nodeWorkflowFailed(s, node, 'the node drain did not report its end after the deadline');
      if (pendingStarts === 0 && drainSettled(s, now)) {
        s.stage = 'Settled';
        s.settledAtMs = Date.now();
        if (!s.aborted) {
          const o = planOutcome(s);
          setPhase(o.phase, o.reason, o.message);
        }
        continue;
      }
      if (s.paused && s.plan.phase === PlanPhase.Running)
        setPhase(PlanPhase.Paused, PlanReason.PausedByUser, 'no new evictions until resumed');
      else if (s.plan.phase === PlanPhase.Running && s.plan.reason !== PlanReason.Cordoning) {
        const r = runningSummary(s, plan.name);
        if (r.reason !== s.plan.reason || r.message !== s.plan.message)
          setPhase(PlanPhase.Running, r.reason, r.message);
      }
    } else {
      // Settled: wait for release or abort (the operator aborts when the plan is deleted).
      // uncordon AfterEachNode: a plan whose nodes all handed themselves back is complete.
      if (
        afterEachNode &&
        !s.aborted &&
        s.plan.phase === PlanPhase.Completed &&
        Object.keys(s.claimed).length === 0
      )
        return close({ phase: PlanPhase.Completed, reason: s.plan.reason, message: s.plan.message });
      if (s.aborted || s.released) {
        const uncordon = s.aborted
          ? spec.uncordon !== 'Never'
          : spec.uncordon === 'OnRelease' || spec.uncordon === 'AfterEachNode';
        if (s.aborted || spec.uncordon !== 'OnDelete') {
          const nodes = Object.keys(s.claimed).sort();
          for (let i = 0; i < nodes.length; i += NODE_CALL_CONCURRENCY) {
            await Promise.all(
              nodes.slice(i, i + NODE_CALL_CONCURRENCY).map(async (node) => {
                const c = s.claimed[node]!;
                try {
                  const { uncordoned } = await k8s.releaseNode.executeWithOptions(
                    { summary: `hand back ${node}` },
                    [{ plan, node, uncordon, ...(c.nodeUid !== undefined ? { nodeUid: c.nodeUid } : {}) }],
                  );
                  const n = s.plan.nodes.find((x) => x.name === node);
                  // Released means drained and handed back; an aborted node keeps its own phase.
                  if (n && uncordoned && c.cordonedByPlan && n.phase === NodePhase.Drained)
                    n.phase = NodePhase.Released;
                  delete s.claimed[node];
                } catch (err) {
                  events.push({
                    type: 'Warning',
                    reason: EventReason.HandBackFailed,
                    message: `node ${node}: ${errorMessage(err)}`,
                  });
                }
              }),
            );
          }
          wake();
        }
        if (s.aborted) {
          const reason = s.cancelled ? PlanReason.WorkflowCanceled : PlanReason.Aborted;
          setPhase(
            PlanPhase.Aborted,
            reason,
            `${s.cancelled ? 'cancelled from Temporal' : 'aborted'}: no more evictions; nodes handed back per spec.uncordon`,
          );
          return close({ phase: PlanPhase.Aborted, reason, message: s.plan.message });
        }
        if (spec.uncordon === 'OnDelete') {
          if (s.plan.phase !== PlanPhase.Completed)
            setPhase(
              PlanPhase.Completed,
              PlanReason.Released,
              'released; nodes stay cordoned until the plan is deleted',
            );
          s.released = false;
        } else {
          setPhase(
            PlanPhase.Completed,
            PlanReason.Released,
            spec.uncordon === 'OnRelease' || spec.uncordon === 'AfterEachNode'
              ? 'released; nodes uncordoned'
              : 'released; nodes left cordoned (uncordon: Never)',
          );
          return close({ phase: PlanPhase.Completed, reason: PlanReason.Released, message: s.plan.message });
        }
      }
    }

    const cycleCheckAt = checkClaimCycle(Date.now());
    flushEvents();
    const publishAt = await publish(false);
    if (continueAsNewDue()) await continueAsNewNow();
    if (s.stage === 'Cordon' && !held() && !s.aborted) continue;

    // A quiet plan continues as new by age too, so something must wake it then.
    timer.ensure(runStartMs + CONTINUE_AS_NEW_AGE_MS);
    if (Date.now() < deadlineMs) timer.ensure(deadlineMs);
    else if (s.stage === 'Drain') {
      const lostAt = lostNodesAtMs(s, held(), LOST_NODE_GRACE_MS);
      if (lostAt !== undefined && lostAt > Date.now()) timer.ensure(lostAt);
    }
    if (publishAt !== undefined) timer.ensure(publishAt);
    if (cycleCheckAt !== undefined) timer.ensure(cycleCheckAt);
    // The next window boundary (a durable timer: exact across worker restarts, no polling).
    if (windowChangeMs !== undefined && s.stage !== 'Settled') timer.ensure(windowChangeMs);
    woken = false;
    await condition(() => woken || urgent || timer.fired);
    timer.fired = false;
  }
}
