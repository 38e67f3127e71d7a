/**
 * Stops the workflows a plan's workflow started and left running when it closed behind the
 * plan's back (terminated, failed, timed out, cancelled from Temporal).
 *
 * Why they outlive it: the plan starts its node workflows with ParentClosePolicy ABANDON (they must
 * survive its continue-as-new), so Temporal leaves them running when the plan's run is terminated.
 * A node workflow left running keeps evicting, waits for a release that never comes, or runs a
 * hook (a reboot Job or workflow) on a node that was handed back meanwhile; when it ends it hands
 * the node back a second time. Hook workflows are children of their node workflow with the default
 * policy TERMINATE, so they end with it; a hook still running afterwards is stopped here as well.
 *
 * How they are found: by a visibility query on their deterministic IDs (every node workflow's ID
 * is `<plan workflow ID>-node-<node>`, every hook's `<node workflow ID>-<hook>`), so one list call
 * finds them whatever the plan's size. Visibility is eventually consistent (the local dev server
 * answers at once; a cluster's Elasticsearch within about a second), so the search runs again after
 * the stop and until nothing is found.
 *
 * How they are stopped: cancelled first (activities in flight are cancelled, so an eviction call is
 * aborted), and terminated when still running after {@link CANCEL_GRACE_MS}.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import { queryLiteral } from '../contract/names.js';

/** How long cancelled child workflows get to close before they are terminated, ms. */
export const CANCEL_GRACE_MS = 5000;
/** Times the search runs again after a stop (visibility lags the closes). */
const MAX_SWEEPS = 3;

/**
 * The visibility query of the running workflows a plan's workflow `planWorkflowId` started: its
 * node workflows and their hook workflows.
 */
export function childrenQuery(planWorkflowId: string): string {
  return `WorkflowId STARTS_WITH ${queryLiteral(`${planWorkflowId}-node-`)} AND ExecutionStatus = "Running"`;
}

/** What {@link stopPlanChildren} did: the workflow IDs, each with how it ended. */
export interface StoppedChildren {
  cancelled: string[];
  terminated: string[];
}

/**
 * Cancels every running node and hook workflow of plan workflow `planWorkflowId`, waits up to
 * {@link CANCEL_GRACE_MS} for them to close, terminates those still running (reason `why`), and
 * searches again until none is left (at most {@link MAX_SWEEPS} times).
 * @returns the IDs cancelled (and closed in time) and those terminated; both empty when none ran.
 * @throws the client's error when Temporal cannot be reached (the caller's queue retries).
 */
export async function stopPlanChildren(
  client: Client,
  planWorkflowId: string,
  why: string,
  log: Logger,
): Promise<StoppedChildren> {
  const cancelled = new Set<string>();
  const terminated = new Set<string>();
  for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    const running: string[] = [];
    for await (const wf of client.workflow.list({ query: childrenQuery(planWorkflowId) }))
      if (!cancelled.has(wf.workflowId) && !terminated.has(wf.workflowId)) running.push(wf.workflowId);
    if (running.length === 0) break;
    await Promise.all(running.map((id) => ignoreGone(client.workflow.getHandle(id).cancel())));
    const until = Date.now() + CANCEL_GRACE_MS;
    let open = running;
    while (open.length > 0 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 250));
      open = (
        await Promise.all(open.map(async (id) => ((await isRunning(client, id)) ? id : undefined)))
      ).filter((id): id is string => id !== undefined);
    }
    for (const id of running) if (!open.includes(id)) cancelled.add(id);
    await Promise.all(
      open.map(async (id) => {
        await ignoreGone(client.workflow.getHandle(id).terminate(why));
        terminated.add(id);
      }),
    );
    log.warn(
      { planWorkflowId, cancelled: running.filter((id) => !open.includes(id)), terminated: open },
      'stopped workflows the closed plan workflow had left running',
    );
  }
  return { cancelled: [...cancelled], terminated: [...terminated] };
}

/**
 * Whether the latest run of workflow `id` is running (false when Temporal does not know it).
 * @throws what describing the workflow throws, but NotFound (e.g. Temporal unavailable).
 */
export async function isRunning(client: Client, id: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(id).describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Awaits `p`, ignoring the error of a workflow that closed or is unknown meanwhile. */
async function ignoreGone(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    throw err;
  }
}
