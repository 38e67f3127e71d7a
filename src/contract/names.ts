/**
 * How drainflow names things on the Temporal side: the plan reference every layer passes around,
 * task queues, workflow IDs and types, search attributes and links to the Temporal UI. Shared by
 * the workflows, the activities, the operator, the CLI and the tests.
 *
 * Ground floor (src/contract): imports only API types and the SDK's pure definition functions.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Identifies the plan an activity works for (node claims and status writes are keyed by it). */
export interface PlanRef {
  /** metadata.name of the MaintenancePlan. */
  name: string;
  /** metadata.uid of the MaintenancePlan: a re-created plan of the same name is another plan. */
  uid: string;
}

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

/** A drainflow workflow ID ({@link planWorkflowId}, {@link nodeWorkflowId}); a UID is a lowercase RFC 4122 UUID. */
const WORKFLOW_ID =
  /^maintenanceplan-(.+)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:-node-(.+))?$/;

/**
 * The plan (and node) a drainflow workflow ID names, or undefined for any other ID.
 * @returns e.g. `{ plan: { name: 'p1', uid }, node: 'worker-1' }` for `maintenanceplan-p1-<uid>-node-worker-1`.
 */
export function parseWorkflowId(workflowId: string): { plan: PlanRef; node?: string } | undefined {
  const m = WORKFLOW_ID.exec(workflowId);
  if (!m) return undefined;
  const plan = { name: m[1]!, uid: m[2]! };
  return m[3] ? { plan, node: m[3] } : { plan };
}

/** `value` as a string literal of a Temporal visibility query: double quotes and backslashes escaped. */
export function queryLiteral(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Workflow type of the per-node child workflows (the name of the function in src/workflows/node.ts). */
export const NODE_WORKFLOW_TYPE = 'drainNodeWorkflow';

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

/**
 * Search attribute: the reason of the plan's phase (Keyword, a CamelCase reason such as
 * `DeadlineExceeded`), upserted with {@link SA_PHASE} in the same command whenever either changes.
 * As a list column beside DrainflowPhase it tells a plan that ended Blocked or Failed from one that
 * Completed, which the workflow's own status (Completed for all of them) does not.
 */
export const SA_REASON = defineSearchAttributeKey('DrainflowReason', SearchAttributeType.KEYWORD);
