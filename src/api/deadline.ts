/**
 * Bounds of the deadline policy (`spec.onDeadline`); its reasons are `DeadlineReason` in
 * src/api/reasons.ts. Pure constants, safe to import from workflow code.
 */

/** Pods named in one PodsWillBeDeleted Event at most (then "and N more"). */
export const WARNING_POD_CAP = 10;

/** Nodes named in status.deadlineAction at most. */
export const DEADLINE_ACTION_NODE_CAP = 20;
