/**
 * The remedy by surge (spec.remedies.rolloutRestart): the loop's step that asks the pure
 * `decideRemedies` (src/drain/remedy.ts) what to do with the Never blocks its running nodes report,
 * records each step in the state (`PlanRunState.remedies`) with its Event, and runs the restart
 * activity; and the approval an Update records.
 *
 * Durable: the restart's annotation value comes from the approval recorded in the state, and the
 * activity writes nothing when the Deployment already carries it, so a crash between approval,
 * restart and its answer neither repeats nor loses the step.
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow`.
 */
import { DEFAULT_REMEDY_AFTER_SECONDS } from '../../api/bounds.js';
import type { ApproveRemedyArgs } from '../../contract/plan-messages.js';
import { runningNodes } from '../../drain/plan-drain.js';
import {
  decideRemedies,
  openRemedy,
  recordRemedy,
  recordRestart,
  remedyBlocks,
  type RemedyAction,
  type RemedyRecord,
} from '../../drain/remedy.js';
import {
  approvedEvent,
  endedEvent,
  proposedEvent,
  restartedEvent,
  type RemedyEvent,
} from '../../drain/remedy-words.js';
import { activitySummary } from '../../drain/summaries.js';
import { remedy } from './activities.js';
import { errorMessage, held, wake, type PlanRun } from './run.js';

function emit(run: PlanRun, e: RemedyEvent | undefined): void {
  if (e) run.local.outbox.events.push(e);
}

/** Records an approval (the approveRemedy Update, validated before). */
export function approveRemedy(run: PlanRun, a: ApproveRemedyArgs): void {
  const records = (run.s.remedies ??= []);
  const open = openRemedy(records, a.workload);
  if (open && !open.approved)
    emit(run, approvedEvent(recordRemedy(records, { do: 'approve', ...a }, Date.now())!));
  wake(run);
}

/**
 * Decides and runs the remedies' next steps (a restart is awaited: one GET and at most one PATCH).
 * @returns when to decide again (Auto's due time), ms since epoch.
 */
export async function stepRemedies(run: PlanRun): Promise<number | undefined> {
  const { s, spec } = run;
  const policy = spec.remedies?.rolloutRestart ?? 'Never';
  if (policy === 'Never' && !s.remedies?.length) return undefined;
  const records = (s.remedies ??= []);
  const running = new Set(runningNodes(s));
  const nowMs = Date.now();
  const d = decideRemedies(records, remedyBlocks(s.plan.nodes.filter((n) => running.has(n.name))), {
    policy,
    afterSeconds: spec.remedies?.afterSeconds ?? DEFAULT_REMEDY_AFTER_SECONDS,
    nowMs,
    held: held(run),
    stopped: s.aborted || nowMs >= (s.plan.deadlineMs ?? Infinity),
    blockedPods: Object.fromEntries(s.plan.nodes.map((n) => [n.name, n.blockedBy.map((b) => b.pod)])),
  });
  for (const a of d.actions) {
    if (a.do === 'restart') await restart(run, records, a);
    else {
      const r = recordRemedy(records, a, nowMs);
      if (r)
        emit(
          run,
          a.do === 'propose'
            ? proposedEvent(r, run.plan.name)
            : a.do === 'approve'
              ? approvedEvent(r)
              : endedEvent(r),
        );
    }
  }
  if (d.actions.length) wake(run);
  return d.wakeAtMs;
}

async function restart(
  run: PlanRun,
  records: RemedyRecord[],
  a: Extract<RemedyAction, { do: 'restart' }>,
): Promise<void> {
  const [namespace = '', name = ''] = a.workload.split('/');
  const res = await remedy.restartDeployment
    .executeWithOptions({ summary: activitySummary.rolloutRestart(a.workload) }, [
      { namespace, name, restartedAt: a.restartedAt },
    ])
    .catch((err: unknown) => ({ outcome: 'Failed' as const, message: errorMessage(err) }));
  const nowMs = Date.now();
  if (res.outcome === 'Failed') {
    const r = recordRemedy(
      records,
      { do: 'end', workload: a.workload, result: 'Failed' },
      nowMs,
      res.message,
    );
    if (r) emit(run, endedEvent(r));
  } else {
    const r = recordRestart(records, a.workload, a.restartedAt, res.outcome === 'Restarted', nowMs);
    if (r) emit(run, restartedEvent(r));
  }
}
