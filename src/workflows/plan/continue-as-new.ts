/**
 * How a plan run ends or continues as new without losing anything a handler did: it first gets
 * quiet ({@link quiesce}), and continues as new ({@link continueAsNewNow}) when the history passes
 * {@link CONTINUE_AS_NEW_EVENTS}, Temporal suggests it, or the run is older than
 * {@link CONTINUE_AS_NEW_AGE_MS}; what a run that never got quiet still holds goes along in
 * `s.pending` and is sent first by the next run.
 *
 * Deterministic: only `@temporalio/workflow` and pure modules.
 */
import { allHandlersFinished, condition, continueAsNew, sleep, workflowInfo } from '@temporalio/workflow';
import type { DrainPlanInput, DrainPlanResult } from '../messages.js';
import { timerSummary } from '../../drain/summaries.js';
import { flushOutbox } from './outbox.js';
import type { PlanRun } from './run.js';
import { publish } from './status-writer.js';

/** History length (events) after which the plan continues as new at its next quiet point. */
export const CONTINUE_AS_NEW_EVENTS = 10000;
/** Age of a run after which it continues as new at its next quiet point, ms (24 h). */
export const CONTINUE_AS_NEW_AGE_MS = 24 * 3600 * 1000;

/**
 * At most this many rounds of sending and waiting before a run ends or continues as new while
 * handlers keep producing Events, forwarded controls or grants (a busy plan gets quiet within one
 * or two); what is left then is carried to the next run (`s.pending`).
 */
const QUIESCE_ROUNDS_MAX = 20;

/**
 * Waits until every message handler finished. An Update handler returns once the status it
 * changed is written; an Update that arrived after the last write (while the workflow waited
 * for its Events, e.g. `drainflow abort` right after the operator relayed spec.abort) waits for
 * another write, so one is made for it: without it that handler and this wait waited for each
 * other for ever (the Update accepted, never completed; the workflow open).
 */
async function handlersFinished(run: PlanRun): Promise<void> {
  const w = run.local.writer;
  for (;;) {
    await condition(() => allHandlersFinished() || w.planGone || w.publishedSeq < w.changeSeq);
    if (allHandlersFinished()) return;
    if (w.planGone) return condition(allHandlersFinished);
    flushOutbox(run);
    await publish(run, true);
    await condition(() => run.background.size === 0);
  }
}

/**
 * Brings the run to a quiet point: Events, forwarded controls and grants (none while `closing`:
 * the next run sends them) sent and answered, no child starting, every handler finished, the
 * status written; and again while handlers of the last workflow task produced more of them, so
 * nothing a handler did is lost when the run ends or continues as new (the check and the end fall
 * in one workflow task: no message can come between). Then stops the grant pump and awaits it.
 */
export async function quiesce(run: PlanRun): Promise<void> {
  const { local } = run;
  for (let round = 0; round < QUIESCE_ROUNDS_MAX; round++) {
    flushOutbox(run);
    await publish(run, true);
    await condition(() => run.background.size === 0 && local.pendingStarts === 0);
    await handlersFinished(run);
    const quiet =
      local.outbox.events.length === 0 &&
      local.outbox.forwards.length === 0 &&
      (local.grants.closing || (!local.grants.due && local.grants.undelivered.length === 0)) &&
      run.background.size === 0 &&
      local.pendingStarts === 0;
    if (quiet) break;
  }
  local.grants.pumping = false;
  await run.pump;
}

/** Ends the run with `result` at a quiet point. */
export async function close(run: PlanRun, result: DrainPlanResult): Promise<DrainPlanResult> {
  await quiesce(run);
  return result;
}

/** Whether the run should continue as new at this quiet point. */
export function continueAsNewDue(run: PlanRun): boolean {
  const wf = workflowInfo();
  return (
    wf.continueAsNewSuggested ||
    wf.historyLength >= (run.input.continueAsNewEvents ?? CONTINUE_AS_NEW_EVENTS) ||
    Date.now() - run.runStartMs >= CONTINUE_AS_NEW_AGE_MS
  );
}

/** Gets quiet, then continues as new with the whole state (and what is left unsent in `s.pending`). */
export async function continueAsNewNow(run: PlanRun): Promise<never> {
  run.local.grants.closing = true;
  // The task that decided to close may have sent grants; the run closes in a later one (a timer's
  // task is never refused), which sends none.
  await sleep(1, { summary: timerSummary.continueAsNewYield() });
  await quiesce(run);
  const { s, local } = run;
  s.continuedRuns++;
  s.pending = {
    events: local.outbox.events.splice(0),
    forwards: local.outbox.forwards.splice(0),
    grants: local.grants.undelivered.splice(0),
  };
  return continueAsNew<(input: DrainPlanInput) => Promise<DrainPlanResult>>({ ...run.input, carried: s });
}
