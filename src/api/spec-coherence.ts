/**
 * Spec fields that are each valid alone but say nothing, or something drainflow would not do,
 * together; refused when the plan is created (by zod in parseSpec and by the CRD's CEL rules,
 * which say the same words) instead of being accepted and silently ignored:
 *
 * - `deadlineCountsOutsideWindows: false` without `windows`: without windows there is no time
 *   outside them, so false changes nothing; the user most likely meant to give windows.
 * - `hooks` with `mode: Preflight`: a preview cordons, evicts and runs nothing, so its hooks
 *   would never run while the plan reads as if they were part of it.
 * - a hook's `timeoutSeconds` longer than `drainTimeoutSeconds`: the plan's deadline stops new
 *   evictions and new hooks, not a hook already running (it runs to its end or its own
 *   timeout), so such a hook could keep the node, and the plan, past the whole plan's deadline.
 *   `timeoutSeconds` defaults to 600, so a plan with `drainTimeoutSeconds` under 600 sets it.
 *
 * Every field involved is fixed at creation (the CRD's `self == oldSelf` rules), so the CRD checks
 * these on creation only (`optionalOldSelf`): a plan stored before the rules existed can still be
 * paused, aborted and released.
 *
 * Pure: no I/O. Used by src/api/plan.ts's schema; workflow code does not evaluate it.
 */

/** Messages of {@link specCoherenceIssues} (the CRD's rules in scripts/gen-crd.ts say the same). */
export const COHERENCE_MESSAGES = {
  countsOutsideWithoutWindows:
    'false needs spec.windows: without maintenance windows there is no time outside them, so false would change nothing (give the windows, or leave the field out)',
  hooksInPreview:
    'must not be set with mode Preflight: a preview cordons, evicts and runs nothing, so no hook would run (leave hooks out of the preview)',
  hookLongerThanPlan:
    "must be at most spec.drainTimeoutSeconds (timeoutSeconds defaults to 600): the plan's deadline does not stop a hook already running, so a hook allowed more time than the whole plan could hold the node past the plan's deadline",
} as const;

/** The spec fields {@link specCoherenceIssues} reads (defaults applied or not). */
export interface CoherenceInput {
  drainTimeoutSeconds?: number;
  deadlineCountsOutsideWindows?: boolean;
  windows?: readonly unknown[];
  mode?: string;
  hooks?: Partial<
    Record<
      'beforeDrain' | 'afterDrain',
      { job?: { timeoutSeconds?: number }; workflow?: { timeoutSeconds?: number } } | undefined
    >
  >;
}

/** Default of a hook's timeoutSeconds and of drainTimeoutSeconds (as the zod schemas default them). */
const HOOK_TIMEOUT_DEFAULT = 600;
const PLAN_TIMEOUT_DEFAULT = 3600;

/**
 * The issues of {@link COHERENCE_MESSAGES} in `spec`, each with the path of the field to change.
 * @returns an empty list when the fields agree.
 */
export function specCoherenceIssues(spec: CoherenceInput): { path: string[]; message: string }[] {
  const out: { path: string[]; message: string }[] = [];
  if (spec.deadlineCountsOutsideWindows === false && !spec.windows?.length)
    out.push({
      path: ['deadlineCountsOutsideWindows'],
      message: COHERENCE_MESSAGES.countsOutsideWithoutWindows,
    });
  if (spec.mode === 'Preflight' && spec.hooks !== undefined)
    out.push({ path: ['hooks'], message: COHERENCE_MESSAGES.hooksInPreview });
  const planSeconds = spec.drainTimeoutSeconds ?? PLAN_TIMEOUT_DEFAULT;
  for (const name of ['beforeDrain', 'afterDrain'] as const) {
    const hook = spec.hooks?.[name];
    for (const kind of ['job', 'workflow'] as const) {
      const h = hook?.[kind];
      if (h && (h.timeoutSeconds ?? HOOK_TIMEOUT_DEFAULT) > planSeconds)
        out.push({
          path: ['hooks', name, kind, 'timeoutSeconds'],
          message: COHERENCE_MESSAGES.hookLongerThanPlan,
        });
    }
  }
  return out;
}
