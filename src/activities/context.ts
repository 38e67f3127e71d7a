/**
 * The Temporal activity context (heartbeats, cancellation), optional: outside a worker (CLI
 * preflight, the operator's in-process hand-back, tests) the activities work the same, minus
 * heartbeats and cancellation.
 */
import { Context } from '@temporalio/activity';

/** The current activity context, or `undefined` when not running inside a Temporal activity. */
export function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}
