/**
 * The activity that tells why a `workflow` hook (spec.hooks.*.workflow) timed out: whether any
 * worker ever took a workflow task of the hook's child workflow. A child that timed out without one
 * was never picked up (no worker polls its task queue, or none registers its type there), which
 * Temporal's failure alone (a TimeoutFailure of the execution timeout) does not say.
 *
 * Reads the child's history through the worker's own Temporal client (`Context.current().client`).
 */
import { Context } from '@temporalio/activity';
import proto from '@temporalio/proto';

/** The activity of workflow hooks, apart from DrainActivities so fakes of the drain contract need not implement it. */
export interface HookWorkflowActivities {
  /**
   * Whether the workflow `workflowId` (its latest run) has a WorkflowTaskStarted event: some worker
   * polled its task queue and took a task. @throws when the history cannot be read (retryable).
   */
  hookWorkflowTaskStarted(input: { workflowId: string }): Promise<{ taskStarted: boolean }>;
}

const TASK_STARTED = proto.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED;

/** Builds {@link HookWorkflowActivities} (uses the client of the worker running the activity). */
export function createHookWorkflowActivities(): HookWorkflowActivities {
  return {
    async hookWorkflowTaskStarted({ workflowId }) {
      const history = await Context.current().client.workflow.getHandle(workflowId).fetchHistory();
      return { taskStarted: (history.events ?? []).some((e) => e.eventType === TASK_STARTED) };
    },
  };
}
