/**
 * Sends a plan's stop (pause or abort) straight to its running node workflows, beside the signal to
 * the plan workflow.
 *
 * Why: a node workflow otherwise learns a stop only from its plan workflow, which forwards it as a
 * `nodeControl` signal from its own workflow task. After a worker restart (the worker killed
 * mid-drain, the stop set meanwhile) the plan's and the nodes' pending workflow tasks run in no
 * particular order: a node whose task runs first (a cooldown timer fired while no worker ran)
 * schedules an `evictPod` before the plan's forwarded signal lands in its history, and one pod is
 * evicted after the user asked to stop. A signal sent to the node by the operator is in the node's
 * history before its next workflow task starts (Temporal delivers a workflow's signals in the
 * activation of its next task, before the code resumes), so that task already sees the stop. The
 * signal carries the plan's metadata.generation: a node ignores a pause older than a resume the
 * plan forwarded to it (`isStaleControl` in src/drain/node/controls.ts), so a standby replica's late
 * relay (src/operator/stop-relay.ts) cannot undo the leader's newer resume. Resume and release go
 * through the plan only (nothing is lost when they reach a node a task later).
 *
 * How the node workflows are found: by one visibility query on their type and deterministic IDs
 * ({@link runningNodesQuery}), not from the plan's status.nodes. The query finds exactly the node
 * workflows Temporal runs, whatever the plan's size (at most spec.maxUnavailableNodes), in one call
 * that needs no worker; status.nodes is the plan workflow's own throttled write (up to 15 s old, and
 * not yet written when the worker died right after the plan started its first nodes) and would cost
 * one signal per node of the plan (up to 5,000). Visibility is eventually consistent (a node
 * workflow started within about a second may be missing): such a node still gets the stop from its
 * plan, as before. A node workflow that closed meanwhile is skipped.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { NODE_WORKFLOW_TYPE, queryLiteral } from '../contract/names.js';
import { nodeControlSignal } from '../contract/node-messages.js';

/** A stop the operator sends to node workflows directly. */
export type NodeStop = 'pause' | 'abort';

/**
 * The visibility query of the running node workflows of plan workflow `planWorkflowId`: type
 * {@link NODE_WORKFLOW_TYPE}, ID `<planWorkflowId>-node-<node>` (src/contract/names.ts
 * `nodeWorkflowId`). The type excludes the hook workflows, whose IDs start the same
 * (`<node workflow ID>-<hook>`).
 */
export function runningNodesQuery(planWorkflowId: string): string {
  return `WorkflowType = "${NODE_WORKFLOW_TYPE}" AND WorkflowId STARTS_WITH ${queryLiteral(`${planWorkflowId}-node-`)} AND ExecutionStatus = "Running"`;
}

/**
 * IDs of the running node workflows of plan workflow `planWorkflowId` ({@link runningNodesQuery}),
 * sorted. @throws the client's error when Temporal cannot be reached or refuses the query.
 */
export async function runningNodeWorkflowIds(client: Client, planWorkflowId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: runningNodesQuery(planWorkflowId) }))
    ids.push(wf.workflowId);
  return ids.sort();
}

/**
 * Signals `nodeControl` {action: stop, generation} to each workflow of `workflowIds` (its current
 * run: a continued-as-new node gets it too), all at once. `generation` absent (an abort of a plan
 * deleted without its finalizer): the node applies it whatever it saw before.
 * @returns the IDs signalled; a workflow that closed or is unknown (WorkflowNotFoundError) is left out.
 * @throws the client's first other error (after every signal settled).
 */
export async function signalNodeStop(
  client: Client,
  workflowIds: readonly string[],
  stop: NodeStop,
  generation?: number,
): Promise<string[]> {
  const payload = { action: stop, ...(generation !== undefined ? { generation } : {}) };
  const sent = await Promise.allSettled(
    workflowIds.map((id) => client.workflow.getHandle(id).signal(nodeControlSignal, payload)),
  );
  const signalled: string[] = [];
  sent.forEach((r, i) => {
    if (r.status === 'fulfilled') signalled.push(workflowIds[i]!);
  });
  const failure = sent.find(
    (r): r is PromiseRejectedResult =>
      r.status === 'rejected' && !(r.reason instanceof WorkflowNotFoundError),
  );
  if (failure) throw failure.reason;
  return signalled;
}

/**
 * Sends `stop` (plan generation `generation`) to every running node workflow of plan workflow
 * `planWorkflowId`: {@link runningNodeWorkflowIds}, then {@link signalNodeStop}.
 * @returns the node workflow IDs signalled (empty when none runs).
 * @throws the client's error when Temporal cannot be reached (callers retry or log it).
 */
export async function stopNodeWorkflows(
  client: Client,
  planWorkflowId: string,
  stop: NodeStop,
  generation?: number,
): Promise<string[]> {
  return signalNodeStop(client, await runningNodeWorkflowIds(client, planWorkflowId), stop, generation);
}

/**
 * The words a `SignalSent` Event adds for the node workflows that got the stop as well: one
 * clause for all of them (`kubectl describe` stays readable), empty when none did.
 */
export function nodeStopWords(signalled: readonly string[]): string {
  if (signalled.length === 0) return '';
  return ` and directly to ${signalled.length} running node workflow(s)`;
}
