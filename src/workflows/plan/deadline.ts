/**
 * A later deadline (src/drain/plan-extend.ts has the rule): from the `extendDeadline` Update
 * (`drainflow extend`, the Temporal UI) or the operator's relay of a raised
 * spec.drainTimeoutSeconds (signal `drainTimeout`). The new deadline is written into the state,
 * the DeadlineExtended Event and the running nodes' new deadlines go into the outbox, and a plan
 * that was Blocked at its deadline goes back to Running; the main loop then starts the nodes to
 * drain again (./children.ts), whose claims the plan still holds.
 *
 * Deterministic: only `@temporalio/workflow` and pure modules.
 */
import { EventReason } from '../../api/reasons.js';
import type { DrainTimeoutArgs, ExtendDeadlineArgs } from '../../contract/plan-messages.js';
import {
  applyExtension,
  decideExtension,
  requestedDeadline,
  type Extension,
} from '../../drain/plan-extend.js';
import { windowedDeadline } from '../../drain/windows.js';
import { setPhase, wake, type PlanRun } from './run.js';

/** Why the `extendDeadline` Update is refused, or undefined when the plan takes it (its validator). */
export function extendRefusal(run: PlanRun, a: ExtendDeadlineArgs | undefined): string | undefined {
  const at = requestedDeadline(run.s.plan.deadlineMs, a);
  if (typeof at !== 'number') return at.message;
  const x = decideExtension(run.s, at, Date.now(), run.plan.name);
  return 'refused' in x ? x.message : undefined;
}

/** The `extendDeadline` Update, validated: moves the deadline (see the module comment). */
export function extendDeadline(run: PlanRun, a: ExtendDeadlineArgs): void {
  const at = requestedDeadline(run.s.plan.deadlineMs, a);
  if (typeof at !== 'number') return;
  const x = decideExtension(run.s, at, Date.now(), run.plan.name);
  if (!('refused' in x)) apply(run, x, a.by);
}

/**
 * The operator's relay of spec.drainTimeoutSeconds: the deadline `drainTimeoutSeconds` from the
 * plan's start (counted inside the windows when the deadlines are). Not later than the current one:
 * nothing (a repeated relay); refused otherwise: a Normal Event SpecChangeIgnored says why.
 */
export function extendBySpec(run: PlanRun, a: DrainTimeoutArgs | undefined): void {
  const { s } = run;
  if (a?.generation !== undefined && a.generation > s.plan.observedGeneration)
    s.plan.observedGeneration = a.generation;
  const seconds = a?.drainTimeoutSeconds;
  if (seconds === undefined || s.plan.startedAtMs === undefined) return wake(run);
  const at = run.windowedDeadlines
    ? windowedDeadline(run.windows!, s.plan.startedAtMs, seconds * 1000)
    : s.plan.startedAtMs + seconds * 1000;
  const x = decideExtension(s, at, Date.now(), run.plan.name);
  if (!('refused' in x))
    apply(
      run,
      x,
      `spec.drainTimeoutSeconds ${seconds}${a?.generation !== undefined ? ` (generation ${a.generation})` : ''}`,
    );
  else if (x.refused !== 'NotLater')
    run.local.outbox.events.push({
      type: 'Normal',
      reason: EventReason.SpecChangeIgnored,
      message: `spec.drainTimeoutSeconds ${seconds} has no effect: ${x.message}`,
    });
  wake(run);
}

function apply(run: PlanRun, x: Extension, by: string): void {
  const { event, phase } = applyExtension(run.s, x, by, Date.now());
  run.local.outbox.events.push(event);
  for (const node of x.notify)
    run.local.outbox.forwards.push({ node, action: 'deadline', deadlineMs: x.deadlineMs });
  if (phase) setPhase(run, phase.phase, phase.reason, phase.message);
  wake(run);
}
