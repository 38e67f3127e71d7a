/**
 * One run of the plan workflow: its input, its state carried across continue-as-new
 * ({@link PlanRunState}), the state of this run's protocols ({@link PlanRunLocal}: JSON-plain, not
 * carried; continue-as-new waits until it is empty or moves what is left into `s.pending`), and the
 * few operations every protocol shares (wake the loop, set the phase, follow a background call).
 *
 * Deterministic: only `@temporalio/workflow` and pure modules.
 */
import { upsertSearchAttributes, workflowInfo, type WorkflowInfo } from '@temporalio/workflow';
import type { MaintenancePlanSpec } from '../../api/plan.js';
import type { MaintenanceWindow } from '../../api/windows.js';
import { PlanPhase, PlanReason } from '../../api/reasons.js';
import { SA_PHASE, SA_REASON, temporalUiUrl, type PlanRef } from '../../contract/names.js';
import type { PdbGrant } from '../../contract/budget.js';
import {
  initialPlanRunState,
  type PlanEvent,
  type PlanForward,
  type PlanRunState,
} from '../../drain/plan-drain.js';
import type { PlanStatusInput } from '../../drain/plan-status.js';
import { endsPlan, phaseEvent } from '../../drain/plan-phase.js';
import type { WindowState } from '../../drain/windows.js';
import type { DrainPlanInput } from '../messages.js';

/** First wait between two claim-cycle checks while the same nodes wait for other plans, ms. */
export const CLAIM_CYCLE_CHECK_FIRST_MS = 5_000;

/** This run's protocol state (JSON-plain; not carried across continue-as-new). */
export interface PlanRunLocal {
  /** Something changed since the loop last looked: it decides again. */
  woken: boolean;
  /** Events to record on the plan and controls to forward to running nodes, in order. */
  outbox: { events: PlanEvent[]; forwards: PlanForward[] };
  /** The status writer (src/workflows/plan/status-writer.ts). */
  writer: {
    /** Bumped by every change of the state; an Update waits until a write covers its change. */
    changeSeq: number;
    /** The change number the last status write covered. */
    publishedSeq: number;
    /** An Update waits for a write: write at once, not at the interval. */
    urgent: boolean;
    /** The plan is gone (deleted, or another uid): nothing to write to any more. */
    planGone: boolean;
    /** The structured state (plan state, claim-cycle finding) last written. */
    published?: Omit<PlanStatusInput, 'nowMs'>;
    /** When the last write started (or ended, in plans that hand out PDB budgets), ms since epoch. */
    lastPublishMs: number;
    /** Writes put off in a row because the workflow task sent grants. */
    deferredWrites: number;
  };
  /** The PDB budget grants (src/workflows/plan/budget-grants.ts). */
  grants: {
    /** New requests arrived: allocate and send once this workflow task's handlers ran. */
    due: boolean;
    /** The run is continuing as new: no grant is allocated or delivered any more. */
    closing: boolean;
    /** The grant pump runs (false once the run ends). */
    pumping: boolean;
    /** A delivery activity runs (one at a time, so each node gets its grants in order). */
    delivering: boolean;
    /** Grants allocated and not yet handed to a delivery. */
    undelivered: { workflowId: string; grant: PdbGrant }[];
    /** When grants were last allocated, ms since epoch (the workflow clock stands still within a task). */
    sentAtMs?: number;
  };
  /** Child workflows asked to start whose start has not been answered yet. */
  pendingStarts: number;
  /** What the windows said at the last look (spec.windows). */
  window?: WindowState;
  /** The claim-cycle check (src/workflows/plan/claim-cycles.ts). */
  cycle: { waitsKey: string; checkAtMs: number; backoffMs: number; checking: boolean };
  /** Pods gone and the hold at the last sampling of the drain's pace (src/drain/eta.ts). */
  pace: { done: number; held: boolean };
}

/** One run of the plan workflow. See the module comment. */
export interface PlanRun {
  readonly input: DrainPlanInput;
  readonly spec: MaintenancePlanSpec;
  readonly plan: PlanRef;
  /** This workflow's ID (the node workflows' IDs derive from it). */
  readonly workflowId: string;
  /** spec.windows when any. */
  readonly windows: MaintenanceWindow[] | undefined;
  /** Deadlines count time inside the windows only (spec.deadlineCountsOutsideWindows false). */
  readonly windowedDeadlines: boolean;
  /** spec.uncordon AfterEachNode. */
  readonly afterEachNode: boolean;
  /** When this run started, ms since epoch. */
  readonly runStartMs: number;
  /** The state carried across continue-as-new. */
  readonly s: PlanRunState;
  /** This run's protocol state. */
  readonly local: PlanRunLocal;
  /** Background calls (Events, signals, claim-cycle checks) in flight: continue-as-new and the end wait for them. */
  readonly background: Set<Promise<void>>;
  /** The grant pump (./budget-grants.ts), awaited when the run ends. */
  pump?: Promise<void>;
}

/** Starts a run: a first run's state, or the one carried; what the previous run left goes first. */
export function createRun(input: DrainPlanInput): PlanRun {
  const { spec } = input;
  const info = workflowInfo();
  const windows = spec.windows?.length ? spec.windows : undefined;
  const s = input.carried ?? firstState(input, info);
  const local: PlanRunLocal = {
    woken: false,
    outbox: { events: s.pending?.events ?? [], forwards: s.pending?.forwards ?? [] },
    writer: {
      changeSeq: 1,
      publishedSeq: 0,
      urgent: false,
      planGone: false,
      lastPublishMs: 0,
      deferredWrites: 0,
    },
    // A carried ledger is allocated first thing in a new run (the previous one sent no grants while it closed).
    grants: {
      due: s.budget !== undefined,
      closing: false,
      pumping: true,
      delivering: false,
      undelivered: s.pending?.grants ?? [],
    },
    pendingStarts: 0,
    cycle: { waitsKey: '', checkAtMs: 0, backoffMs: CLAIM_CYCLE_CHECK_FIRST_MS, checking: false },
    pace: { done: 0, held: false },
  };
  delete s.pending;
  return {
    input,
    spec,
    plan: { name: input.plan.name, uid: input.plan.uid },
    workflowId: info.workflowId,
    windows,
    windowedDeadlines: windows !== undefined && spec.deadlineCountsOutsideWindows === false,
    afterEachNode: spec.uncordon === 'AfterEachNode',
    runStartMs: Date.now(),
    s,
    local,
    background: new Set(),
  };
}

function firstState(input: DrainPlanInput, info: WorkflowInfo): PlanRunState {
  const { spec } = input;
  const url = input.temporalUiUrl
    ? temporalUiUrl(input.temporalUiUrl, info.namespace, info.workflowId, info.firstExecutionRunId)
    : undefined;
  return initialPlanRunState(
    'Resolve',
    {
      phase: PlanPhase.Pending,
      reason: PlanReason.Starting,
      message: 'resolving nodes',
      observedGeneration: input.plan.generation,
      workflow: {
        namespace: info.namespace,
        workflowId: info.workflowId,
        runId: info.firstExecutionRunId,
        ...(url ? { url } : {}),
      },
      nodes: [],
      conditions: [],
    },
    { paused: spec.paused, aborted: spec.abort, released: spec.release },
  );
}

/** Marks a change: the loop decides again, and an Update waiting for a write gets one. */
export function wake(run: PlanRun): void {
  run.local.woken = true;
  run.local.writer.changeSeq++;
}

/** Paused by the user or by the maintenance windows: no node starts, running nodes evict nothing new. */
export function held(run: PlanRun): boolean {
  return run.s.paused || run.s.outsideWindow === true;
}

/** Follows a background call (Event, signal) so continue-as-new and the end wait for it; failures are ignored. */
export function track(run: PlanRun, p: Promise<unknown>): void {
  const t: Promise<void> = p
    .then(
      () => undefined,
      () => undefined,
    )
    .then(() => {
      run.background.delete(t);
      run.local.woken = true;
    });
  run.background.add(t);
}

/**
 * Sets the plan's phase. A new phase or reason updates the Phase and Reason search attributes (one
 * command, only on a change: each is a history event); a new phase sends one Event ({@link phaseEvent}).
 */
export function setPhase(run: PlanRun, phase: PlanPhase, reason: string, message: string): void {
  const { s } = run;
  const st = s.plan;
  const changed = phase !== st.phase || reason !== st.reason;
  st.phase = phase;
  st.reason = reason;
  st.message = message;
  if (endsPlan(phase, reason)) st.completedAtMs ??= Date.now();
  if (changed) {
    upsertSearchAttributes([
      { key: SA_PHASE, value: phase },
      { key: SA_REASON, value: reason },
    ]);
    if (s.lastEventPhase !== phase) {
      s.lastEventPhase = phase;
      run.local.outbox.events.push(phaseEvent(phase, reason, message, st.nodes));
    }
  }
  wake(run);
}

/** The message of an error a workflow saw (an activity's or child's failure says it in its cause). */
export function errorMessage(err: unknown): string {
  const cause = (err as { cause?: unknown })?.cause;
  if (cause instanceof Error) return cause.message;
  return err instanceof Error ? err.message : String(err);
}
