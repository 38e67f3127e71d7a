/**
 * Continue-as-new of the node workflow: when it is due (Temporal suggests it, the history passed
 * {@link CONTINUE_AS_NEW_EVENTS}, or the run is older than {@link CONTINUE_AS_NEW_AGE_MS}), and
 * the next run's input, which carries the whole state. The caller picks a quiet point (no call in
 * flight, no observation running); handlers are finished first. Deterministic: workflow code.
 */
import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { NodeProgress } from '../../contract/progress.js';
import type { DrainNodeInput } from '../messages.js';
import type { NodeRun } from './run.js';

/** History length (events) after which a run continues as new at its next quiet point. */
export const CONTINUE_AS_NEW_EVENTS = 5000;
/** Age of a run after which it continues as new at its next quiet point, ms (24 h). */
export const CONTINUE_AS_NEW_AGE_MS = 24 * 3600 * 1000;

/** Whether the run should continue as new at its next quiet point. */
export function continueAsNewDue(run: NodeRun): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historyLength >= CONTINUE_AS_NEW_EVENTS ||
    Date.now() - run.runStartMs >= CONTINUE_AS_NEW_AGE_MS
  );
}

/** Continues as new once every handler finished, carrying the state (never returns). */
export async function continueAsNewNow(run: NodeRun): Promise<never> {
  await condition(allHandlersFinished);
  const { input, s } = run;
  const next: DrainNodeInput = {
    plan: input.plan,
    node: input.node,
    drain: run.spec,
    deadlineMs: s.deadlineMs,
    parentWorkflowId: input.parentWorkflowId,
    paused: s.paused,
    carried: s,
  };
  return continueAsNew<(input: DrainNodeInput) => Promise<NodeProgress>>(next);
}
