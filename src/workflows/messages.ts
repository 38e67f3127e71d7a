/**
 * Inputs and results of the drain workflows: what the operator starts a plan workflow with, and
 * what the plan starts each node workflow with (the part of the spec a node drain reads, and the
 * state carried across continue-as-new). Their messages and names are the ground floor's
 * (src/contract). Pure: safe to import from workflow code.
 */
import type {
  Hook,
  MaintenancePlanSpec,
  OnDeadline,
  PodSelection,
  RetryBackoff,
  PodOrderRule,
} from '../api/plan.js';
import type { PlanPhase } from '../api/reasons.js';
import type { PlanRef } from '../contract/names.js';
import type { NodeDrainState } from '../drain/node/state.js';
import type { PlanRunState } from '../drain/plan-drain.js';

/** Input of the plan workflow. */
export interface DrainPlanInput {
  plan: PlanRef & { generation: number };
  /** The plan's spec with defaults applied. */
  spec: MaintenancePlanSpec;
  /** Base URL of the Temporal UI, for status.workflow.url (e.g. http://127.0.0.1:8233). */
  temporalUiUrl?: string;
  /** State carried across continue-as-new (absent in a plan's first run). */
  carried?: PlanRunState;
  /**
   * History length, in events, past which a run continues as new (default 10 000,
   * `CONTINUE_AS_NEW_EVENTS` of src/workflows/plan/continue-as-new.ts); the workflow tests set a small one to cross
   * many boundaries.
   */
  continueAsNewEvents?: number;
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
   * The plan hands out PDB budgets (signals `pdbBudget` and `pdbGrant` of
   * src/contract/node-messages.ts): evictions behind a PDB wait for the plan's grant. Set by plans
   * of more than one node.
   */
  coordinatePdbs?: boolean;
  /**
   * With `coordinatePdbs`: the plan names one reporting node per PDB in its grants, so the node
   * sends a PDB-only change only for the PDBs it reports (src/drain/pdb-budget.ts).
   */
  pdbReporters?: boolean;
  /** spec.onDeadline (absent: Stop). */
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
  /** Workflow ID of the plan workflow, which receives the node's progress (`nodeProgressSignal`). */
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
  /**
   * spec.cordon AllAtStart: the `metadata.uid` of the Node the plan claimed before it started this
   * drain. The drain claims no other Node of that name (one deleted and created again meanwhile).
   */
  nodeUid?: string;
}
