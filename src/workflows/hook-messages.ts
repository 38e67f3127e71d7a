/**
 * Messages of failed hooks that Temporal's own failure does not word well (imported by workflow
 * code: pure, no I/O).
 */
import type { WorkflowHook } from '../api/plan.js';

/**
 * The message of a `workflow` hook whose child workflow hit its execution timeout
 * (`timeoutSeconds`): `tookATask` false means no worker ever took a workflow task of it (nobody
 * polls its task queue with that workflow type), true that it ran and did not finish in time,
 * undefined that the worker could not tell.
 */
export function hookTimeoutMessage(hook: WorkflowHook, tookATask: boolean | undefined): string {
  const what = `hook workflow ${hook.type} on task queue ${hook.taskQueue}`;
  if (tookATask === false)
    return `no worker took the ${what} within ${hook.timeoutSeconds} s (timeoutSeconds): is a worker polling task queue ${hook.taskQueue} with workflow type ${hook.type} registered?`;
  if (tookATask === true)
    return `the ${what} ran but did not finish within ${hook.timeoutSeconds} s (timeoutSeconds)`;
  return `the ${what} did not finish within ${hook.timeoutSeconds} s (timeoutSeconds)`;
}
