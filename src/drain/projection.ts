/**
 * The status projection: from the plan workflow's state to `MaintenancePlan.status`.
 * Pure and deterministic: the caller passes the time. The same function answers the `progress`
 * query, so the query and the written status always agree.
 */
import { DEADLINE_ACTION_NODE_CAP } from '../api/deadline.js';
import type { PreflightReport } from '../api/preflight.js';
import {
  ConditionReason,
  ConditionType,
  DRAIN_ENDED_NODE_PHASES,
  DeadlineReason,
  DisruptionBlockKind,
  FINAL_PLAN_PHASES,
  NodePhase,
  NodeReason,
  PlanPhase,
  PlanReason,
  PreflightReason,
  WindowReason,
} from '../api/reasons.js';
import type {
  Blocker,
  Condition,
  DeadlineAction,
  EvictionProgress,
  MaintenancePlanStatus,
  NodeStatus,
  OnDeadline,
  WorkflowRef,
} from '../api/plan.js';
import { findCondition, setCondition, sortAndCapBlockers, type ConditionUpdate } from './conditions.js';
import { disruptionBlockMessage, disruptionBlocks, disruptionCondition } from './pdb-blocks.js';
import type { NodeState } from '../contract/progress.js';
import type { DrainPace } from './eta.js';

/** What the plan workflow knows, as input to {@link projectStatus}. */
export interface PlanState {
  phase: PlanPhase;
  reason: string;
  message: string;
  /** metadata.generation the workflow last acted on. */
  observedGeneration: number;
  workflow?: WorkflowRef;
  /** ms since epoch. */
  startedAtMs?: number;
  /** ms since epoch. */
  deadlineMs?: number;
  /** ms since epoch, set in a final phase. */
  completedAtMs?: number;
  /** Nodes in plan order. */
  nodes: NodeState[];
  /**
   * The previous conditions, so lastTransitionTime survives unchanged statuses: the stored status's
   * when the status-write activity renders (src/drain/plan-status.ts); empty in the workflow's state.
   */
  conditions: Condition[];
  /** spec.onDeadline (absent until the plan resolved its nodes, and in a Preflight plan: no status.deadlineAction). */
  onDeadline?: OnDeadline;
  /** spec.deadlineWarningSeconds. */
  deadlineWarningSeconds?: number;
  /** With spec.windows: whether one is open, when it closes, when the next opens (ms since epoch). */
  window?: { open: boolean; currentEndMs?: number; nextStartMs?: number };
  /** spec.mode Preflight: the report, once complete (status.preflight). */
  preflight?: PreflightReport;
  /** The drain's pace (src/drain/eta.ts), from the first node's start: status.estimatedCompletion. */
  pace?: DrainPace;
}

/**
 * status.deadlineAction: what spec.onDeadline will do, to which nodes, and when. The nodes are those
 * not yet done (running or not started); `at` is the earliest deadline among them (a node's own, or
 * the plan's). Absent when the policy is not set (see {@link PlanState.onDeadline}), the plan is in a final phase, or no
 * node is left to it.
 */
export function deadlineAction(state: PlanState): DeadlineAction | undefined {
  const policy = state.onDeadline;
  if (!policy || FINAL_PLAN_PHASES.has(state.phase) || state.deadlineMs === undefined) return undefined;
  const open = state.nodes.filter((n) => !DRAIN_ENDED_NODE_PHASES.has(n.phase));
  if (open.length === 0) return undefined;
  const atMs = Math.min(...open.map((n) => n.deadlineMs ?? state.deadlineMs!));
  const names = open.map((n) => n.name).sort();
  const shown = names.slice(0, DEADLINE_ACTION_NODE_CAP);
  const list = `${shown.join(', ')}${names.length > shown.length ? ` and ${names.length - shown.length} more` : ''}`;
  const at = iso(atMs)!;
  const warningAtMs =
    policy === 'DeletePods' && state.deadlineWarningSeconds !== undefined
      ? atMs - state.deadlineWarningSeconds * 1000
      : undefined;
  const message =
    policy === 'Stop'
      ? `at ${at} evictions stop on the nodes not drained by then (${list}); they stay cordoned and the plan ends Blocked (DeadlineExceeded)`
      : policy === 'SkipNode'
        ? open.length === 1
          ? `at its deadline (${at}) node ${list}, if not drained, is handed back (uncordoned if this plan cordoned it) and reported Skipped; it is the plan's last node left, so the plan then ends Blocked (NodesSkipped)`
          : `at its deadline (the first at ${at}) a node not drained is handed back (uncordoned if this plan cordoned it) and reported Skipped; the plan goes on with its other nodes (${list})`
        : `at its deadline (the first at ${at}) the pods still on a node are deleted without the Eviction API, PodDisruptionBudgets bypassed (${list}); a PodsWillBeDeleted Warning Event goes out ${state.deadlineWarningSeconds ?? 0} s before`;
  return {
    policy,
    at,
    nodes: shown,
    ...(warningAtMs !== undefined ? { warningAt: iso(warningAtMs)! } : {}),
    message,
  };
}

/** Pods deleted without the Eviction API at a deadline (onDeadline DeletePods), over all nodes. */
export function podsDeleted(state: Pick<PlanState, 'nodes'>): number {
  return state.nodes.reduce((a, n) => a + (n.podsDeleted ?? 0), 0);
}

/**
 * The plan's reason and message as status and conditions show them. A plan the workflow ended
 * Drained with reason AllNodesDrained after pods were deleted at a deadline (onDeadline
 * DeletePods) shows reason DrainedWithDeletions and the count, so a forced drain never reads
 * like a clean one; one where a node was deleted during the drain (and no pod deleted at a
 * deadline) shows DrainedWithNodesDeleted and how many pods of the deleted nodes left without
 * eviction. Done in the projection rather than where the workflow sets the phase: the phase's
 * reason stays AllNodesDrained, and the workflow's phase Event says what this shows.
 */
export function shownOutcome(state: Pick<PlanState, 'phase' | 'reason' | 'message' | 'nodes'>): {
  reason: string;
  message: string;
} {
  const deleted = podsDeleted(state);
  if (state.phase !== PlanPhase.Drained || state.reason !== PlanReason.AllNodesDrained)
    return { reason: state.reason, message: state.message };
  if (deleted > 0)
    return {
      reason: DeadlineReason.DrainedWithDeletions,
      message: `${state.message}; ${deleted} pod(s) deleted at the deadline without the Eviction API (onDeadline DeletePods), not evicted`,
    };
  const deletedNodes = state.nodes.filter((n) => n.phase === NodePhase.Deleted);
  if (deletedNodes.length === 0) return { reason: state.reason, message: state.message };
  const withNodes = deletedNodes.reduce((a, n) => a + (n.podsGoneWithoutEviction ?? 0), 0);
  return {
    reason: PlanReason.DrainedWithNodesDeleted,
    message: `${state.message}; ${withNodes} pod(s) on the deleted node(s) left without eviction`,
  };
}

/**
 * `node N: message`, unless the message names the node already (`node N is held by plan P`):
 * then the message alone, so the node's name is not said twice.
 */
export function aboutNode(name: string, message: string): string {
  return message.startsWith(`node ${name} `) ? message : `node ${name}: ${message}`;
}

/**
 * Whether the state is a Preflight plan's (spec.mode Preflight): previewing, Previewed, or with a
 * node examined (an aborted preview). Such a plan never evicts, so it shows no evictionProgress and
 * its conditions speak of what the preview found.
 */
export function isPreview(state: Pick<PlanState, 'phase' | 'reason' | 'nodes'>): boolean {
  return (
    state.phase === 'Previewed' ||
    state.reason === PreflightReason.Previewing ||
    state.nodes.some((n) => n.phase === 'Previewed')
  );
}

/**
 * The Blocked condition of a Previewed plan, from its report: True with reason BlockersFound and the
 * counts, Unknown with PreflightIncomplete when a node could not be examined, False with NoBlockers.
 */
function previewBlocked(
  reason: string,
  r: PreflightReport | undefined,
): Pick<Condition, 'status' | 'reason' | 'message'> {
  const refusals = r && r.dryRunRefused > 0 ? ` and ${r.dryRunRefused} dry-run refusal(s)` : '';
  if (reason === PreflightReason.BlockersFound)
    return {
      status: 'True',
      reason,
      message: `the preview found ${r?.blockerCount ?? 0} blocker(s)${refusals} on ${r?.nodesBlocked ?? 0} of ${r?.nodesExamined ?? 0} node(s) that would keep a drain from finishing (see status.preflight); nothing was cordoned or evicted`,
    };
  if (reason === PreflightReason.PreflightIncomplete) {
    const failed = r?.nodes.filter((n) => n.error !== undefined).length ?? 0;
    return {
      status: 'Unknown',
      reason,
      message: `${failed} node(s) could not be examined, so the preview cannot tell whether a drain would be blocked (see status.preflight.nodes[].error)`,
    };
  }
  return { status: 'False', reason, message: 'the preview found nothing that would block a drain' };
}

/** `pod (PDB x): Reason; …` of the first `cap` blockers. */
function blockerSummary(blockers: readonly Blocker[], cap: number): string {
  const shown = blockers.slice(0, cap).map((b) => `${b.pod}${b.pdb ? ` (PDB ${b.pdb})` : ''}: ${b.reason}`);
  return `${shown.join('; ')}${blockers.length > cap ? `; and ${blockers.length - cap} more` : ''}`;
}

const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();

/**
 * Computes the conditions for a plan phase (metav1.Condition semantics: lastTransitionTime moves
 * only when a condition's status changes).
 * - Progressing: True while Pending/Running (reason = the plan reason), False otherwise.
 * - Drained: True in Drained/Completed; False with reason PreviewOnly for a Preflight plan.
 * - Blocked: True in Blocked, or while Running with a node blocked/waiting; in Previewed what the
 *   preview found (True BlockersFound, Unknown PreflightIncomplete, False NoBlockers).
 * - Paused: True in Paused (reason PausedByUser, or OutsideMaintenanceWindow when only the windows hold the plan).
 * - InMaintenanceWindow (plans with spec.windows, until a final phase): True while a window is open.
 * - Previewed (only once a preflight report exists): True, reason NoBlockers, BlockersFound or
 *   PreflightIncomplete, the report's summary as message.
 */
export function planConditions(state: PlanState, nowMs: number): Condition[] {
  const now = new Date(nowMs).toISOString();
  const gen = state.observedGeneration;
  const { phase } = state;
  const { reason, message } = shownOutcome(state);
  const deleted = podsDeleted(state);
  const active = phase === PlanPhase.Pending || phase === PlanPhase.Running || phase === PlanPhase.Paused;
  const waiting = state.nodes.find((n) => n.phase === NodePhase.Waiting || n.phase === NodePhase.Blocked);
  let c = state.conditions;
  c = setCondition(
    c,
    active
      ? {
          type: ConditionType.Progressing,
          status: 'True',
          reason: phase === PlanPhase.Paused ? ConditionReason.Paused : ConditionReason.Draining,
          message,
          observedGeneration: gen,
        }
      : { type: ConditionType.Progressing, status: 'False', reason, message, observedGeneration: gen },
    now,
  );
  const preview = isPreview(state);
  c = setCondition(
    c,
    preview
      ? {
          type: 'Drained',
          status: 'False',
          reason: PreflightReason.PreviewOnly,
          message: 'a Preflight plan never cordons or evicts: it only reports what a drain would do',
          observedGeneration: gen,
        }
      : (phase === 'Drained' || phase === 'Completed') && deleted > 0
        ? {
            type: ConditionType.Drained,
            status: 'True',
            reason: DeadlineReason.PodsDeletedAtDeadline,
            message: `every node of the plan is drained; ${deleted} pod(s) were deleted at the deadline without the Eviction API`,
            observedGeneration: gen,
          }
        : phase === 'Drained' || phase === 'Completed'
          ? {
              type: 'Drained',
              status: 'True',
              reason: 'AllPodsEvicted',
              message: 'every node of the plan is drained',
              observedGeneration: gen,
            }
          : {
              type: 'Drained',
              status: 'False',
              reason: phase === 'Aborted' ? 'Aborted' : 'NotDrained',
              message: 'not every node is drained',
              observedGeneration: gen,
            },
    now,
  );
  c = setCondition(
    c,
    phase === 'Previewed'
      ? { type: 'Blocked', ...previewBlocked(reason, state.preflight), observedGeneration: gen }
      : phase === 'Blocked'
        ? { type: 'Blocked', status: 'True', reason, message, observedGeneration: gen }
        : active && waiting
          ? {
              type: 'Blocked',
              status: 'True',
              reason: waiting.reason ?? 'NodeBlocked',
              message: aboutNode(waiting.name, waiting.message ?? waiting.phase),
              observedGeneration: gen,
            }
          : notBlocked(state.nodes, gen),
    now,
  );
  const disruption = disruptionCondition(
    state.nodes,
    findCondition(c, ConditionType.DisruptionBlocked) !== undefined,
  );
  if (disruption) c = setCondition(c, { ...disruption, observedGeneration: gen }, now);
  c = setCondition(
    c,
    phase === PlanPhase.Paused
      ? {
          type: ConditionType.Paused,
          status: 'True',
          ...(reason === WindowReason.OutsideMaintenanceWindow
            ? { reason, message }
            : { reason: ConditionReason.PausedByUser, message: 'no new evictions until resumed' }),
          observedGeneration: gen,
        }
      : {
          type: ConditionType.Paused,
          status: 'False',
          reason: ConditionReason.NotPaused,
          message: 'the plan is not paused',
          observedGeneration: gen,
        },
    now,
  );
  const w = state.window;
  if (w && !FINAL_PLAN_PHASES.has(phase))
    c = setCondition(
      c,
      w.open
        ? {
            type: ConditionType.InMaintenanceWindow,
            status: 'True',
            reason: WindowReason.InsideMaintenanceWindow,
            message:
              w.currentEndMs !== undefined
                ? `a maintenance window is open until ${iso(w.currentEndMs)!}`
                : 'a maintenance window is open',
            observedGeneration: gen,
          }
        : {
            type: ConditionType.InMaintenanceWindow,
            status: 'False',
            reason: WindowReason.OutsideMaintenanceWindow,
            message:
              w.nextStartMs !== undefined
                ? `no maintenance window is open; the next opens at ${iso(w.nextStartMs)!}`
                : 'no maintenance window is open, and none opens within a week',
            observedGeneration: gen,
          },
      now,
    );
  if (state.preflight)
    c = setCondition(
      c,
      {
        type: ConditionType.Previewed,
        status: 'True',
        reason: phase === PlanPhase.Previewed ? reason : PreflightReason.Previewing,
        message: state.preflight.summary,
        observedGeneration: gen,
      },
      now,
    );
  return c;
}

/**
 * Projects the plan state into `status`. A Preflight plan ({@link isPreview}) has no
 * `evictionProgress`. Per-node blockers are sorted and capped (20 per node) so
 * the status does not churn; `nextActionAt` is the earliest cooldown end over all nodes, absent
 * when nothing cools down. Conditions must have been computed with {@link planConditions} and
 * stored in `state.conditions`.
 */
export function projectStatus(state: PlanState): MaintenancePlanStatus {
  // A node paused by the maintenance windows reports the plan's pause (the node only knows it was paused).
  const windowPaused =
    state.phase === PlanPhase.Paused && state.reason === WindowReason.OutsideMaintenanceWindow;
  const nodes: NodeStatus[] = state.nodes.map((n) => {
    const { blockers } = sortAndCapBlockers(n.blockedBy);
    const windowNode = windowPaused && n.phase === NodePhase.Paused;
    const reason = windowNode ? WindowReason.OutsideMaintenanceWindow : n.reason;
    // A skipped node was handed back, an aborted one gave up: nothing blocks it any more. What
    // held it goes into its message instead of blockers that would read as if they still applied.
    const nodeSkipped = n.phase === 'Skipped' || n.phase === 'Aborted';
    // A paused node lists no `blockedBy`: the pause holds it, not the PodDisruptionBudgets its pods
    // waited for before the pause (they are looked at again when it resumes). Its pods stay pending.
    const pausedHidden = n.phase === NodePhase.Paused;
    const message = windowNode
      ? // A node paused past its deadline says what its policy does when the window opens.
        n.reason === NodeReason.PausedPastDeadline
        ? `${state.message ?? 'outside the maintenance windows'}; ${n.message}`
        : state.message
      : nodeSkipped && blockers.length > 0
        ? `${n.message ?? (n.phase === 'Aborted' ? 'aborted' : 'skipped at its deadline')}; held then by ${blockerSummary(blockers, 5)}`
        : n.message;
    return {
      name: n.name,
      phase: n.phase,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      ...(n.heldBy && n.phase === NodePhase.Waiting ? { heldBy: n.heldBy } : {}),
      podsTotal: n.podsTotal,
      podsEvicted: n.podsEvicted,
      ...(n.podsDeleted ? { podsDeleted: n.podsDeleted } : {}),
      ...(n.podsGoneWithoutEviction ? { podsGoneWithoutEviction: n.podsGoneWithoutEviction } : {}),
      ...(n.deadlineMs !== undefined && (state.deadlineMs === undefined || n.deadlineMs < state.deadlineMs)
        ? { deadline: iso(n.deadlineMs)! }
        : {}),
      ...(blockers.length && !nodeSkipped && !pausedHidden ? { blockedBy: blockers } : {}),
      ...(n.orderGroup !== undefined ? { currentOrder: n.orderGroup } : {}),
      ...(n.skipped?.length ? { skipped: n.skipped } : {}),
      ...(n.hook ? { hook: n.hook } : {}),
    };
  });
  const sum = (f: (n: NodeState) => number) => state.nodes.reduce((a, n) => a + f(n), 0);
  const nexts = state.nodes.map((n) => n.nextActionAtMs).filter((t): t is number => t !== undefined);
  const lastError = [...state.nodes].reverse().find((n) => n.lastError)?.lastError;
  const total = sum((n) => n.podsTotal);
  const evicted = sum((n) => n.podsEvicted);
  const failed = sum((n) => n.podsFailed);
  const action = deadlineAction(state);
  // Pods left on a skipped or aborted node are no longer waited for: not pending.
  const left = (n: NodeState) =>
    n.phase === 'Skipped' || n.phase === 'Aborted'
      ? 0
      : Math.max(
          0,
          n.podsTotal -
            n.podsEvicted -
            (n.podsDeleted ?? 0) -
            (n.podsGoneWithoutEviction ?? 0) -
            n.podsFailed,
        );
  const goneOther = sum((n) => n.podsGoneWithoutEviction ?? 0);
  const progress: EvictionProgress = {
    total,
    evicted,
    pending: sum(left),
    failed,
    attempts: sum((n) => n.attempts),
    tooManyRequests: sum((n) => n.tooManyRequests),
    ...(sum((n) => n.podsDeleted ?? 0) > 0 ? { deleted: sum((n) => n.podsDeleted ?? 0) } : {}),
    ...(goneOther > 0 ? { goneWithoutEviction: goneOther } : {}),
    ...(nexts.length && !FINAL_PLAN_PHASES.has(state.phase)
      ? { nextActionAt: iso(Math.min(...nexts))! }
      : {}),
    ...(lastError ? { lastError } : {}),
  };
  const { reason, message } = shownOutcome(state);
  return {
    phase: state.phase,
    reason,
    message,
    observedGeneration: state.observedGeneration,
    conditions: state.conditions,
    ...(state.workflow ? { workflow: state.workflow } : {}),
    ...(state.startedAtMs !== undefined ? { startedAt: iso(state.startedAtMs)! } : {}),
    ...(state.deadlineMs !== undefined ? { deadline: iso(state.deadlineMs)! } : {}),
    ...(state.completedAtMs !== undefined ? { completedAt: iso(state.completedAtMs)! } : {}),
    nodesTotal: state.nodes.length,
    nodesDrained: state.nodes.filter((n) => n.phase === NodePhase.Drained || n.phase === NodePhase.Released)
      .length,
    nodes,
    // A Preflight plan never evicts: no counters that would read as evictions pending (the pods a
    // drain would evict are status.preflight.podsToEvict).
    ...(isPreview(state) ? {} : { evictionProgress: progress }),
    ...(action ? { deadlineAction: action } : {}),
    ...(state.window && !FINAL_PLAN_PHASES.has(state.phase)
      ? {
          window: {
            open: state.window.open,
            ...(state.window.currentEndMs !== undefined
              ? { currentEnd: iso(state.window.currentEndMs)! }
              : {}),
            ...(state.window.nextStartMs !== undefined ? { nextStart: iso(state.window.nextStartMs)! } : {}),
          },
        }
      : {}),
    ...(state.preflight ? { preflight: state.preflight } : {}),
  };
}

/**
 * The Blocked condition of a running plan none of whose nodes is held up by a reason of its own:
 * True (reason `Never`) when a PodDisruptionBudget blocks a node in a way only a person can clear
 * (the DisruptionBlocked kind `Never`), so that Blocked never reads False beside such a block;
 * else False, saying whether PodDisruptionBudgets are pacing the evictions.
 */
function notBlocked(nodes: readonly NodeState[], gen: number | undefined): ConditionUpdate {
  const blocks = disruptionBlocks(nodes);
  const never = blocks.find((b) => b.blocker.kind === DisruptionBlockKind.Never);
  if (never)
    return {
      type: 'Blocked',
      status: 'True',
      reason: DisruptionBlockKind.Never,
      message: disruptionBlockMessage(never),
      observedGeneration: gen,
    };
  return {
    type: 'Blocked',
    status: 'False',
    reason: 'NotBlocked',
    message: blocks.length
      ? 'nothing blocks the plan for good: PodDisruptionBudgets pace its evictions (see DisruptionBlocked)'
      : 'nothing blocks the plan',
    observedGeneration: gen,
  } as ConditionUpdate;
}
