/**
 * Words of the deadline policy (`spec.onDeadline`): the CamelCase reasons of node and plan phases
 * and of the Events it records. Pure constants, safe to import from workflow code.
 */

/** Reasons and Event reasons of the deadline policy. */
export const DeadlineReason = {
  /** Node phase Skipped: still blocked at its deadline, handed back (onDeadline SkipNode). */
  SkippedAtDeadline: 'SkippedAtDeadline',
  /** Plan phase Blocked: the drain settled and at least one node was skipped at its deadline. */
  NodesSkipped: 'NodesSkipped',
  /** Node phase Drained: the pods left at the deadline were deleted (onDeadline DeletePods). */
  PodsDeletedAtDeadline: 'PodsDeletedAtDeadline',
  /**
   * Plan phase Drained: every node is drained, and pods were deleted at a deadline (onDeadline
   * DeletePods) instead of evicted; shown in place of AllNodesDrained (src/drain/projection.ts).
   */
  DrainedWithDeletions: 'DrainedWithDeletions',
  /** Node phase Draining: the deadline passed, deletions are under way (onDeadline DeletePods). */
  DeletingPods: 'DeletingPods',
  /** Warning Event, one per pod: deleted without the Eviction API at the deadline. */
  PodDeletedAtDeadline: 'PodDeletedAtDeadline',
  /** Warning Event: the advance notice of a DeletePods deadline, naming the pods. */
  PodsWillBeDeleted: 'PodsWillBeDeleted',
  /** Warning Event: a node was skipped at its deadline. */
  NodeSkipped: 'NodeSkipped',
  /** A pod's delete call was refused (not 404): a blocker of the node. */
  DeleteFailed: 'DeleteFailed',
} as const;

/** Pods named in one PodsWillBeDeleted Event at most (then "and N more"). */
export const WARNING_POD_CAP = 10;

/** Nodes named in status.deadlineAction at most. */
export const DEADLINE_ACTION_NODE_CAP = 20;
