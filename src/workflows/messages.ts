/**
 * Messages of the drain workflows — signals, queries, updates, search attributes, IDs and the task
 * queue — in one module shared by the workflows, the operator, the CLI and the tests.
 * Pure: safe to import from workflow code.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type {
  Hook,
  MaintenancePlanStatus,
  MaintenancePlanSpec,
  OnDeadline,
  PodSelection,
  RetryBackoff,
  PodOrderRule,
} from '../api/plan.js';
import type { PlanPhase } from '../api/reasons.js';
import type { NodeState } from '../drain/projection.js';
import type { NodeDrainState } from '../drain/node-drain.js';
import type { PdbBudgetRequest, PdbGrant } from '../drain/pdb-budget.js';
import type { PlanRunState } from '../drain/plan-drain.js';
import type { PlanRef } from '../activities/types.js';

/** Default task queue of the drain workers. */
export const DEFAULT_TASK_QUEUE = 'drainflow';

/**
 * Task queue of the `evictPod` activities of the node drains on workflow task queue `taskQueue`:
 * `<taskQueue>-evictions`. Evictions get their own queue so the server-enforced task-queue rate
 * limit (`maxTaskQueueActivitiesPerSecond`, `drainflow run --max-evictions-per-second`) caps the
 * Eviction API calls of every plan and worker without slowing the other activities (observations,
 * cordons, status writes), which that limit would count too on a shared queue.
 */
export function evictionTaskQueue(taskQueue: string): string {
  return `${taskQueue}-evictions`;
}

/**
 * Workflow ID of a plan's drain workflow: `maintenanceplan-<name>-<uid>`. Starting a workflow with
 * this ID twice is a no-op (the operator uses WorkflowIdReusePolicy REJECT_DUPLICATE, so a finished
 * plan is never re-run).
 */
export function planWorkflowId(plan: PlanRef): string {
  return `maintenanceplan-${plan.name}-${plan.uid}`;
}

/** Workflow ID of the child workflow draining one node of a plan. */
export function nodeWorkflowId(parentWorkflowId: string, node: string): string {
  return `${parentWorkflowId}-node-${node}`;
}

/** URL of a workflow run in the Temporal UI (`<ui>/namespaces/<ns>/workflows/<id>/<run>/history`). */
export function temporalUiUrl(uiBase: string, namespace: string, workflowId: string, runId?: string): string {
  const base = uiBase.replace(/\/+$/, '');
  const run = runId ? `/${encodeURIComponent(runId)}` : '';
  return `${base}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}${run}/history`;
}

/** Search attribute: the plan name (Keyword). Registered by `npm run stack -- up`. */
export const SA_PLAN = defineSearchAttributeKey('DrainflowPlan', SearchAttributeType.KEYWORD);
/** Search attribute: the plan's node names (KeywordList), to find "every drain that touched node X". */
export const SA_NODES = defineSearchAttributeKey('DrainflowNodes', SearchAttributeType.KEYWORD_LIST);
/** Search attribute: the plan's phase (Keyword), upserted on every change. */
export const SA_PHASE = defineSearchAttributeKey('DrainflowPhase', SearchAttributeType.KEYWORD);

/** Optional payload of the control signals: the plan generation that asked for it. */
export interface ControlArgs {
  /** metadata.generation of the plan whose spec change caused the signal (relayed by the operator). */
  generation?: number;
}

/** Stop starting new evictions (in-flight calls finish; every timer keeps running). */
export const pauseSignal = defineSignal<[ControlArgs?]>('pause');
/** Continue after pause. */
export const resumeSignal = defineSignal<[ControlArgs?]>('resume');
/** Stop evicting, hand back the nodes this plan cordoned (per spec.uncordon), end Aborted. */
export const abortSignal = defineSignal<[ControlArgs?]>('abort');
/** Maintenance is over: with uncordon OnRelease the nodes are uncordoned and the plan Completed. */
export const releaseSignal = defineSignal<[ControlArgs?]>('release');
/** The plan's status as the workflow sees it (same shape as MaintenancePlan.status). */
export const progressQuery = defineQuery<MaintenancePlanStatus>('progress');

/** Action of {@link controlUpdate}. */
export type ControlAction = 'pause' | 'resume' | 'abort' | 'release';
/**
 * Same as the signals, but returns the status after the workflow applied the action. Rejected
 * (validator) for an unknown action.
 */
export const controlUpdate = defineUpdate<MaintenancePlanStatus, [{ action: ControlAction } & ControlArgs]>(
  'control',
);

/** Input of the plan workflow. */
export interface DrainPlanInput {
  plan: PlanRef & { generation: number };
  /** The plan's spec with defaults applied. */
  spec: MaintenancePlanSpec;
  /** Base URL of the Temporal UI, for status.workflow.url (e.g. http://127.0.0.1:8233). */
  temporalUiUrl?: string;
  /** State carried across continue-as-new (absent in a plan's first run). */
  carried?: PlanRunState;
}

/** Final result of the plan workflow. */
export interface DrainPlanResult {
  phase: PlanPhase;
  reason: string;
  message: string;
}

/**
 * What a node drain reads of the plan's spec (the child input carries only this, not the spec with
 * its possibly thousands of node names). Durations in seconds.
 */
export interface NodeDrainSpec {
  /** eviction.callTimeoutSeconds: start-to-close timeout of one Eviction API call. */
  callTimeoutSeconds: number;
  /** eviction.maxConcurrentPerNode. */
  maxConcurrentPerNode: number;
  /** eviction.gracePeriodSeconds; absent means the pod's own. */
  gracePeriodSeconds?: number;
  /** eviction.retryBackoff. */
  retryBackoff: RetryBackoff;
  /** spec.podSelection. */
  podSelection: PodSelection;
  /**
   * The plan hands out PDB budgets ({@link pdbBudgetSignal}, {@link pdbGrantSignal}): evictions
   * behind a PDB wait for the plan's grant. Set by plans of more than one node.
   */
  coordinatePdbs?: boolean;
  /**
   * With `coordinatePdbs`: the plan names one reporting node per PDB in its grants, so the node
   * sends a PDB-only change only for the PDBs it reports (src/drain/pdb-budget.ts).
   */
  pdbReporters?: boolean;
  /** spec.onDeadline (absent in inputs written before it existed: Stop). */
  onDeadline?: OnDeadline;
  /** spec.deadlineWarningSeconds (DeletePods advance notice). */
  deadlineWarningSeconds?: number;
  /** The plan's deadline, ms since epoch (DeletePods cuts grace periods to what is left until it). */
  planDeadlineMs?: number;
  /** spec.podOrder (order groups; src/drain/pod-policy.ts). */
  podOrder?: PodOrderRule[];
  /** eviction.skipWaitForDeleteTimeoutSeconds. */
  skipWaitForDeleteTimeoutSeconds?: number;
  /** spec.hooks and spec.uncordon AfterEachNode (absent when neither is set: no rolling part). */
  roll?: NodeRollSpec;
}

/** What a node drain reads of spec.hooks and spec.uncordon (src/drain/hooks.ts). */
export interface NodeRollSpec {
  /** spec.uncordon is AfterEachNode: the node hands itself back after its afterDrain hook or a per-node release. */
  uncordonAfterEachNode: boolean;
  beforeDrain?: Hook;
  afterDrain?: Hook;
}

/** The {@link NodeRollSpec} of a plan spec; undefined when it sets neither hooks nor AfterEachNode. */
export function nodeRollSpec(spec: MaintenancePlanSpec): NodeRollSpec | undefined {
  const after = spec.uncordon === 'AfterEachNode';
  const { beforeDrain, afterDrain } = spec.hooks ?? {};
  if (!after && !beforeDrain && !afterDrain) return undefined;
  return {
    uncordonAfterEachNode: after,
    ...(beforeDrain ? { beforeDrain } : {}),
    ...(afterDrain ? { afterDrain } : {}),
  };
}

/** The {@link NodeDrainSpec} of a plan spec. */
export function nodeDrainSpec(spec: MaintenancePlanSpec): NodeDrainSpec {
  return {
    callTimeoutSeconds: spec.eviction.callTimeoutSeconds,
    maxConcurrentPerNode: spec.eviction.maxConcurrentPerNode,
    ...(spec.eviction.gracePeriodSeconds !== undefined
      ? { gracePeriodSeconds: spec.eviction.gracePeriodSeconds }
      : {}),
    retryBackoff: spec.eviction.retryBackoff,
    podSelection: spec.podSelection,
    ...(spec.podOrder?.length ? { podOrder: spec.podOrder } : {}),
    ...(spec.eviction.skipWaitForDeleteTimeoutSeconds !== undefined
      ? { skipWaitForDeleteTimeoutSeconds: spec.eviction.skipWaitForDeleteTimeoutSeconds }
      : {}),
    ...(nodeRollSpec(spec) ? { roll: nodeRollSpec(spec)! } : {}),
  };
}

/** Input of the per-node child workflow. */
export interface DrainNodeInput {
  plan: PlanRef;
  node: string;
  /** The whole plan spec: only in inputs written before `drain` existed. */
  spec?: MaintenancePlanSpec;
  /** What the drain reads of the spec (inputs of current plans). */
  drain?: NodeDrainSpec;
  /** State carried across continue-as-new (absent in the node's first run). */
  carried?: NodeDrainState;
  /**
   * Absolute deadline of this node's drain, ms since epoch: the plan's, or earlier with
   * spec.nodeDrainTimeoutSeconds.
   */
  deadlineMs: number;
  /** Workflow ID of the plan workflow, which receives {@link nodeProgressSignal}. */
  parentWorkflowId: string;
  /** Whether the plan is paused when the child starts. */
  paused: boolean;
  /** uncordon AfterEachNode: the plan was released before this node started (it hands itself back once drained). */
  released?: boolean;
  /**
   * The newest plan generation of a user's control (pause, resume, abort, release) the plan had seen
   * when it started this node, when newer than the generation the plan started with: the node's
   * first {@link NodeDrainState.controlGeneration}. Without it a node started after a resume of
   * generation 3 would take a late direct pause of generation 2 (a standby operator's start-up
   * relay, src/operator/node-stops.ts) as new, and pause while its plan runs.
   */
  controlGeneration?: number;
}

/**
 * Progress of one node, sent by the node workflow to the plan workflow after each change: the
 * node's {@link NodeState} (keyed by `node` instead of `name`) plus the claim it holds.
 */
export interface NodeProgress extends Omit<NodeState, 'name'> {
  node: string;
  /** Whether this plan cordoned the node (false when it was unschedulable before). */
  cordonedByPlan?: boolean;
  /** Whether this plan holds the claim on the node. */
  claimed?: boolean;
  /** Whether this is the node drain's last report (its workflow is ending). */
  final?: boolean;
}

/** Child → parent: a node's progress changed. */
export const nodeProgressSignal = defineSignal<[NodeProgress]>('nodeProgress');
/**
 * Payload of {@link pdbBudgetSignal}: the budget request, and — from nodes of plans that name PDB
 * reporters ({@link NodeDrainSpec.pdbReporters}) — the node's progress when it changed since its
 * last report, so the request and the progress take one signal instead of two.
 */
export type PdbBudgetMessage = PdbBudgetRequest & { progress?: NodeProgress };
/** Child → parent: what the node holds and wants of each PDB's budget (src/drain/pdb-budget.ts). */
export const pdbBudgetSignal = defineSignal<[PdbBudgetMessage]>('pdbBudget');
/** Parent → child: disruptions the node may spend, per PDB. */
export const pdbGrantSignal = defineSignal<[PdbGrant]>('pdbGrant');
/**
 * Payload of {@link nodeControlSignal}. `generation`: the plan's metadata.generation whose spec
 * change asked for it — set by the operator's direct stops (src/operator/node-stops.ts) and by the
 * plan when it forwards a user's control that carried one; absent for the plan's window-driven
 * pauses and resumes. The node ignores a pause or resume older than
 * the newest generation it has seen (`isStaleControl` in src/drain/node-drain.ts).
 */
export interface NodeControl extends ControlArgs {
  action: ControlAction;
}
/**
 * Parent → child: pause, resume or abort the node's drain, or release the node (uncordon
 * AfterEachNode). The operator sends pause and abort to a plan's running nodes directly as well.
 */
export const nodeControlSignal = defineSignal<[NodeControl]>('nodeControl');

/** Workflow type of the per-node child workflows (the name of the function in src/workflows/node.ts). */
export const NODE_WORKFLOW_TYPE = 'drainNodeWorkflow';

/**
 * uncordon AfterEachNode: hand back one node of the plan (uncordon it once drained, or at once when
 * it is drained already and waits). Returns the status once the workflow took it in. Rejected
 * (validator) when the plan's uncordon is not AfterEachNode or the node is not in the plan.
 */
export const releaseNodeUpdate = defineUpdate<MaintenancePlanStatus, [{ node: string }]>('releaseNode');
