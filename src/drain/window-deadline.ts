/**
 * A plan whose first maintenance window opens only after its deadline: with
 * `deadlineCountsOutsideWindows` true (the default) the deadline (`drainTimeoutSeconds` from the
 * start) counts the time outside windows, so such a plan would wait, cordon and evict nothing, and
 * end Blocked/DeadlineExceeded. The operator refuses it before it starts (Failed/InvalidSpec, a
 * Warning Event) with what to change; the API server cannot, since the answer depends on when the
 * plan is created.
 *
 * The instant is the plan's creation (metadata.creationTimestamp), so the answer is the same on
 * every reconcile and after an operator restart; the workflow's deadline counts from its start,
 * which follows the creation by the operator's reaction time.
 *
 * PURE: no I/O, no clock (the instant is a parameter).
 */
import type { MaintenancePlanSpec } from '../api/plan.js';
import { windowState, windowsError } from './windows.js';

/**
 * Why a plan created at `createdMs` can never drain inside a window before its deadline, in words
 * naming the fields to change; undefined when a window is open at `createdMs` or opens before
 * the deadline, when the plan has no windows, counts its deadline inside windows only
 * (`deadlineCountsOutsideWindows: false`), or is a Preflight plan (a preview cordons nothing).
 * A window naming an unknown time zone is left to the check that reports it (undefined here).
 */
export function windowAfterDeadline(
  spec: Pick<
    MaintenancePlanSpec,
    'windows' | 'deadlineCountsOutsideWindows' | 'drainTimeoutSeconds' | 'mode'
  >,
  createdMs: number,
): string | undefined {
  const windows = spec.windows;
  if (!windows?.length || spec.deadlineCountsOutsideWindows === false || spec.mode === 'Preflight')
    return undefined;
  if (windowsError(windows)) return undefined;
  const st = windowState(windows, createdMs);
  if (st.open) return undefined;
  const deadlineMs = createdMs + spec.drainTimeoutSeconds * 1000;
  if (st.nextStartMs !== undefined && st.nextStartMs < deadlineMs) return undefined;
  const at = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
  const opens =
    st.nextStartMs !== undefined
      ? `the first maintenance window opens at ${at(st.nextStartMs)}`
      : 'no maintenance window opens within a week';
  const need =
    st.nextStartMs !== undefined ? ` (more than ${Math.ceil((st.nextStartMs - createdMs) / 1000)} s)` : '';
  return `spec.windows: ${opens}, after the plan's deadline at ${at(deadlineMs)} (spec.drainTimeoutSeconds ${spec.drainTimeoutSeconds} s from the plan's creation, the time outside windows counting): the plan would cordon and evict nothing and end DeadlineExceeded; raise spec.drainTimeoutSeconds${need}, or set spec.deadlineCountsOutsideWindows: false to count the deadline inside windows only`;
}
