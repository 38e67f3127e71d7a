/**
 * The words of drainflow's API in one place: plan and node phases, the final phases, condition
 * types, and every CamelCase reason drainflow writes (plan and node phase reasons, condition
 * reasons, blocker and skip reasons, Event reasons). `docs/reasons.md` lists the same words with
 * what each means; `test/unit/reasons.test.ts` fails when the two differ.
 *
 * Each group is an `as const` object whose keys equal their values, with a type of the same name
 * for its values. A word that shows in several places (e.g. `DeadlineExceeded`: node phase reason,
 * plan phase reason, Event) is a member of each group it belongs to, always with the same spelling.
 * Reasons are CamelCase (Kubernetes API conventions: `metav1.Condition.reason`, `Event.reason`).
 *
 * PURE: constants only, imported by workflow code (the lint determinism guard covers src/api).
 */

/** The values of an `as const` group. */
type ValueOf<T> = T[keyof T];

// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

/** `status.phase` of a MaintenancePlan: where the plan is (the `Phase` printer column). */
export const PlanPhase = {
  /** Created, nodes not yet resolved (reason Starting). */
  Pending: 'Pending',
  /** Cordoning or draining its nodes (or examining them, spec.mode Preflight). */
  Running: 'Running',
  /** No new evictions: paused by the user, or no maintenance window is open. */
  Paused: 'Paused',
  /** The drain settled with nodes not drained (deadline, unevictable pods, a failed hook). */
  Blocked: 'Blocked',
  /** Every node is drained; the nodes stay cordoned until the plan is released or deleted. */
  Drained: 'Drained',
  /** The nodes were handed back (uncordoned) after the drain. */
  Completed: 'Completed',
  /** Aborted by the user; the nodes were handed back. */
  Aborted: 'Aborted',
  /** The plan could not run (bad spec, nodes not found, a node's drain failed). */
  Failed: 'Failed',
  /** spec.mode Preflight: the report is in status.preflight; nothing was cordoned or evicted. */
  Previewed: 'Previewed',
} as const;
/** A value of {@link PlanPhase}. */
export type PlanPhase = ValueOf<typeof PlanPhase>;

/** `status.nodes[].phase`: where one node of a plan is. */
export const NodePhase = {
  /** Not started yet (waiting for a slot of maxUnavailableNodes). */
  Pending: 'Pending',
  /** Held by another plan (reason NodeHeldByOtherPlan); tried again as it is handed back, at the latest after retryBackoff; while the plan is paused, not until resumed. */
  Waiting: 'Waiting',
  /** Cordoned by the plan, no eviction yet. */
  Cordoned: 'Cordoned',
  /** Pods are being evicted. */
  Draining: 'Draining',
  /** No new evictions until resumed (or until a maintenance window opens). */
  Paused: 'Paused',
  /** Something keeps the node from draining; the reason says what. */
  Blocked: 'Blocked',
  /** No pod that must leave is left; the node stays cordoned. */
  Drained: 'Drained',
  /** Drained and handed back (uncordoned unless it was unschedulable before the plan). */
  Released: 'Released',
  /** The drain was aborted. */
  Aborted: 'Aborted',
  /** The node's drain failed (an activity refused for good, its child workflow failed). */
  Failed: 'Failed',
  /** The Node object was deleted during the drain (or deleted and created again: another UID). */
  Deleted: 'Deleted',
  /** Handed back undrained (at its deadline under onDeadline SkipNode, or released after a failed hook). */
  Skipped: 'Skipped',
  /** Examined by a Preflight plan, not cordoned. */
  Previewed: 'Previewed',
} as const;
/** A value of {@link NodePhase}. */
export type NodePhase = ValueOf<typeof NodePhase>;

/** `status.nodes[].hook.phase`: where a node's beforeDrain/afterDrain hook is. */
export const HookPhase = {
  /** The hook's Job or workflow runs. */
  Running: 'Running',
  /** The hook ended well; the node's drain goes on. */
  Succeeded: 'Succeeded',
  /** The hook failed; the node is Blocked/HookFailed until released by hand. */
  Failed: 'Failed',
  /**
   * The plan was aborted (or its workflow cancelled) while the hook ran: its Job was deleted
   * (foreground propagation, its pods first) or its child workflow cancelled before the node was
   * handed back.
   */
  Stopped: 'Stopped',
} as const;
/** A value of {@link HookPhase}. */
export type HookPhase = ValueOf<typeof HookPhase>;

/**
 * Plan phases after which nothing more is evicted (the workflow may still wait to hand the nodes
 * back: Drained and Blocked wait for a release or the plan's deletion). `drainflow watch` stops at
 * them; no maintenance-window status, deadline action or next action is shown in them.
 */
export const FINAL_PLAN_PHASES: ReadonlySet<PlanPhase> = new Set<PlanPhase>([
  PlanPhase.Drained,
  PlanPhase.Completed,
  PlanPhase.Aborted,
  PlanPhase.Failed,
  PlanPhase.Blocked,
  PlanPhase.Previewed,
]);

/**
 * Node phases in which a node's drain has ended: the node is no longer one the deadline policy acts
 * on (status.deadlineAction names only the others).
 */
export const DRAIN_ENDED_NODE_PHASES: ReadonlySet<NodePhase> = new Set<NodePhase>([
  NodePhase.Drained,
  NodePhase.Released,
  NodePhase.Aborted,
  NodePhase.Failed,
  NodePhase.Deleted,
  NodePhase.Skipped,
]);

/**
 * Node phases after which nothing more happens to the node: {@link DRAIN_ENDED_NODE_PHASES} and
 * Previewed (a Preflight plan's node, never drained). `drainflow status` shows no node deadline in them.
 */
export const FINAL_NODE_PHASES: ReadonlySet<NodePhase> = new Set<NodePhase>([
  ...DRAIN_ENDED_NODE_PHASES,
  NodePhase.Previewed,
]);

// ---------------------------------------------------------------------------------------------
// Conditions
// ---------------------------------------------------------------------------------------------

/** `status.conditions[].type` of a MaintenancePlan (metav1.Condition). */
export const ConditionType = {
  /** True while the plan is Pending, Running or Paused. */
  Progressing: 'Progressing',
  /** True in Drained and Completed. */
  Drained: 'Drained',
  /** True in Blocked, or while Running with a node blocked or waiting. */
  Blocked: 'Blocked',
  /** True in Paused. */
  Paused: 'Paused',
  /** True once a preflight report exists (spec.mode Preflight). */
  Previewed: 'Previewed',
  /** Plans with spec.windows, until a final phase: True while a maintenance window is open. */
  InMaintenanceWindow: 'InMaintenanceWindow',
  /**
   * Set once the plan was seen in a claim cycle: True while it waits for a node held by another
   * plan that waits (directly or through others) for a node this plan holds (src/drain/claim-cycle.ts).
   */
  ClaimCycle: 'ClaimCycle',
  /**
   * Set once a PodDisruptionBudget blocked a node of the plan: True while one does, its reason the
   * {@link DisruptionBlockKind} of the first blocker (sorted by node, pod), its message naming the
   * PDB and the pods' owner; False (NoDisruptionBlock) once none does.
   */
  DisruptionBlocked: 'DisruptionBlocked',
  /**
   * Set once the plan proposed a remedy (spec.remedies.rolloutRestart Approve or Auto): True while
   * one is proposed, approved or its rollout runs (reason {@link RemedyReason} of that step), its
   * message naming the Deployment, the node and how to approve; False once each ended (reason of
   * the last one's outcome).
   */
  Remedy: 'Remedy',
} as const;
/** A value of {@link ConditionType}. */
export type ConditionType = ValueOf<typeof ConditionType>;

/**
 * Reasons only conditions carry (a condition that mirrors the plan's phase carries the phase's
 * reason, {@link PlanReason}).
 */
export const ConditionReason = {
  /** Progressing True while the plan is Running or Pending. */
  Draining: 'Draining',
  /** Progressing True while the plan is Paused. */
  Paused: 'Paused',
  /** Drained True: every node of the plan is drained. */
  AllPodsEvicted: 'AllPodsEvicted',
  /** Drained False: not every node is drained. */
  NotDrained: 'NotDrained',
  /** Drained False in phase Aborted. */
  Aborted: 'Aborted',
  /** Blocked True while Running: a node is held up and says no reason of its own. */
  NodeBlocked: 'NodeBlocked',
  /** Blocked False: nothing blocks the plan. */
  NotBlocked: 'NotBlocked',
  /** Paused True: paused by the user. */
  PausedByUser: 'PausedByUser',
  /** Paused False. */
  NotPaused: 'NotPaused',
  /** ClaimCycle True: the plan and the plans named wait for each other's nodes; the message names them and the nodes. */
  WaitsForEachOther: 'WaitsForEachOther',
  /** ClaimCycle False: the cycle seen before is broken (a plan of it ended or handed a node back). */
  NoClaimCycle: 'NoClaimCycle',
  /** DisruptionBlocked False: no PodDisruptionBudget blocks a node of the plan now. */
  NoDisruptionBlock: 'NoDisruptionBlock',
} as const;
/** A value of {@link ConditionReason}. */
export type ConditionReason = ValueOf<typeof ConditionReason>;

/**
 * The Kubernetes node lifecycle conditions drainflow writes on a Node its plan holds
 * (`Node.status.conditions[].type`; KEP-5683 "Node Lifecycle Conditions", well-known
 * `NodeConditionType`s of Kubernetes 1.37). Admin-managed in Kubernetes: an admin-authorized
 * controller sets them True while they hold and clears them (False, or removed). drainflow writes
 * them from `status.nodes[]` while its claim is on the node and removes them at the hand-back
 * (src/drain/node-conditions.ts).
 */
export const NodeConditionType = {
  /** True while a plan holds the node (claimed and cordoned) for maintenance. */
  MaintenancePlanned: 'MaintenancePlanned',
  /** True while the plan drains the node (cordoned, evicting, or held up while the plan runs); False once paused, drained or stopped. */
  DrainInProgress: 'DrainInProgress',
  /** True once the node is drained (no pod that must leave is left); False until then. */
  Drained: 'Drained',
} as const;
/** A value of {@link NodeConditionType}. */
export type NodeConditionType = ValueOf<typeof NodeConditionType>;

/**
 * `reason` of the node lifecycle conditions ({@link NodeConditionType}) drainflow writes. A
 * condition carrying one of these reasons and a message that begins `MaintenancePlan <name>:` is
 * that plan's: only such a condition is ever changed or removed by it.
 */
export const NodeConditionReason = {
  /** MaintenancePlanned True: the plan named in the message claimed and cordoned the node. */
  PlanHoldsNode: 'PlanHoldsNode',
  /** DrainInProgress True: the plan evicts the node's pods (node Cordoned or Draining). */
  DrainRunning: 'DrainRunning',
  /** DrainInProgress True: the drain goes on but something holds it up (node Blocked while the plan runs; the message says what). */
  DrainBlocked: 'DrainBlocked',
  /** DrainInProgress False: the drain is paused (by the user, or no maintenance window is open). */
  DrainPaused: 'DrainPaused',
  /** DrainInProgress False and Drained True: the node is drained. */
  DrainCompleted: 'DrainCompleted',
  /** Drained False: the node is not drained (yet). */
  DrainNotCompleted: 'DrainNotCompleted',
  /** DrainInProgress False: the plan stopped draining the node before it was drained (plan ended Blocked or Failed, node Failed); the node stays cordoned until handed back. */
  DrainStopped: 'DrainStopped',
} as const;
/** A value of {@link NodeConditionReason}. */
export type NodeConditionReason = ValueOf<typeof NodeConditionReason>;

// ---------------------------------------------------------------------------------------------
// Reasons of phases
// ---------------------------------------------------------------------------------------------

/**
 * `status.reason` of a plan (the `Reason` printer column). The workflow records an Event with the
 * reason on every phase change (Warning for Blocked, Failed and a Previewed plan with findings,
 * Normal otherwise), and the Progressing condition carries it once the plan is no longer active.
 * Reasons of the deadline policy, the maintenance windows and preflight are in their own groups.
 */
export const PlanReason = {
  /** Pending: the nodes are being resolved. */
  Starting: 'Starting',
  /**
   * Pending (operator): the plan's workflow is started and no worker has run it yet (the message
   * names the workflow and its task queue); the workflow's first status write replaces it.
   */
  AwaitingWorker: 'AwaitingWorker',
  /** Completed: every node handed back, some by a per-node release after their afterDrain hook failed. */
  HandedBackWithHookFailures: 'HandedBackWithHookFailures',
  /** Failed (operator): the plan's workflow was terminated from Temporal before the plan ended. */
  WorkflowTerminated: 'WorkflowTerminated',
  /** Failed (operator): the plan's workflow failed before the plan ended. */
  WorkflowFailed: 'WorkflowFailed',
  /** Failed (operator): the plan's workflow timed out before the plan ended. */
  WorkflowTimedOut: 'WorkflowTimedOut',
  /**
   * Aborted: the plan's workflow was cancelled from Temporal (UI, `temporal workflow cancel`): it
   * stopped evicting, handed the nodes back as an abort does and closed CANCELED. Failed (operator):
   * a workflow closed CANCELED before it wrote its final status.
   */
  WorkflowCanceled: 'WorkflowCanceled',
  /**
   * Failed (operator): Temporal no longer knows the plan's workflow (a dev server restarted without
   * its database, a namespace deleted and re-created): nothing drains or hands back its nodes any
   * more; `spec.abort: true` or deleting the plan hands them back.
   */
  WorkflowNotFound: 'WorkflowNotFound',
  /** Running: the nodes are being cordoned (cordon AllAtStart, or before the drain starts). */
  Cordoning: 'Cordoning',
  /** Running: nodes are being drained. */
  Draining: 'Draining',
  /** Running: every running node is drained and waits for a per-node release (uncordon AfterEachNode). */
  AwaitingRelease: 'AwaitingRelease',
  /** Running, every running node held up, none saying a reason of its own. */
  NodeBlocked: 'NodeBlocked',
  /** Paused: by the user (spec.paused, `drainflow pause`). */
  PausedByUser: 'PausedByUser',
  /** Drained: every node is drained. */
  AllNodesDrained: 'AllNodesDrained',
  /**
   * Drained: every node is drained or was deleted during the drain, and at least one was deleted
   * (its pods that were never evicted went with it, PodDisruptionBudgets not applied); shown in
   * place of AllNodesDrained (src/drain/projection.ts), with the count of those pods.
   */
  DrainedWithNodesDeleted: 'DrainedWithNodesDeleted',
  /** Completed: every node was drained and handed back one by one (uncordon AfterEachNode). */
  AllNodesHandedBack: 'AllNodesHandedBack',
  /** Completed: the plan was released and the nodes handed back. */
  Released: 'Released',
  /** Aborted: by the user; the nodes were handed back. */
  Aborted: 'Aborted',
  /** Failed: the spec is not valid (the operator's check or the workflow's). */
  InvalidSpec: 'InvalidSpec',
  /** Failed: the nodes could not be resolved (the API server refused). */
  ResolveFailed: 'ResolveFailed',
  /** Failed: spec.nodeNames names a node that does not exist. */
  NodeNotFound: 'NodeNotFound',
  /** Failed: spec.nodeSelector matches no node. */
  NoNodesMatched: 'NoNodesMatched',
  /** Failed: spec.nodeSelector matches more than 5 000 nodes. */
  TooManyNodes: 'TooManyNodes',
  /** Failed: a node's drain failed and says no reason of its own. */
  NodeFailed: 'NodeFailed',
  /** Blocked: a node's hook failed (the node waits for a per-node release). */
  HookFailed: 'HookFailed',
  /** Blocked: the deadline passed with nodes not drained (onDeadline Stop). */
  DeadlineExceeded: 'DeadlineExceeded',
  /** Blocked: the drain settled with pods that cannot be evicted. */
  PodsNotEvictable: 'PodsNotEvictable',
  /**
   * Blocked: the drain settled with nodes whose own workflow was cancelled from Temporal; they stay
   * claimed and cordoned until the plan is released, aborted or deleted.
   */
  NodeDrainCanceled: 'NodeDrainCanceled',
} as const;
/** A value of {@link PlanReason}. */
export type PlanReason = ValueOf<typeof PlanReason>;

/**
 * `status.nodes[].reason`: why a node is in its phase. A plan that is Running with every running
 * node held up shows the first one's reason; NodeHeldByOtherPlan, NodeUncordonedExternally and
 * NodeDeleted are also a Warning Event each, the first time a node reports them
 * (`NEWS_NODE_REASONS`).
 */
export const NodeReason = {
  /** Drained: no pod that must leave is left. */
  Drained: 'Drained',
  /** Draining: evictions under way. */
  Draining: 'Draining',
  /** Blocked: the node's deadline passed before it drained (onDeadline Stop); also a plan phase reason. */
  DeadlineExceeded: 'DeadlineExceeded',
  /** Blocked: a pod cannot be evicted (its blocker says why); cleared when the blocker goes. */
  PodsNotEvictable: 'PodsNotEvictable',
  /** Blocked: someone uncordoned the node; no eviction and no hook start until it is cordoned again (Warning Event). */
  NodeUncordonedExternally: 'NodeUncordonedExternally',
  /**
   * Deleted: the Node object was deleted during the drain, or deleted and created again under its
   * name (another UID: a node this plan did not claim, neither drained nor handed back) (Warning Event).
   */
  NodeDeleted: 'NodeDeleted',
  /** Waiting: another plan holds the node (Warning Event); tried again as soon as that plan hands it back (the worker watches the Node), at the latest after eviction.retryBackoff (5 s doubling up to 120 s by default); while the plan is paused, not tried (nor cordoned) until resumed. */
  NodeHeldByOtherPlan: 'NodeHeldByOtherPlan',
  /** Failed: the node does not exist (any more) when its drain starts; also a plan phase reason. */
  NodeNotFound: 'NodeNotFound',
  /** Paused: no new evictions until resumed (a node not claimed yet: not cordoned until resumed). */
  PausedByUser: 'PausedByUser',
  /**
   * Paused: the node's deadline passed while the plan was paused (by the user, or outside the
   * maintenance windows): nothing is deleted, skipped or ended while paused; onDeadline applies
   * when the plan is resumed.
   */
  PausedPastDeadline: 'PausedPastDeadline',
  /** Aborted: the drain was aborted. */
  Aborted: 'Aborted',
  /**
   * Aborted: the node's workflow was cancelled from Temporal (UI, CLI): no more evictions; the node
   * stays claimed and cordoned until the plan hands it back (release, abort or deletion).
   */
  WorkflowCanceled: 'WorkflowCanceled',
  /** Failed: an activity failed for good (the message is its error). */
  ActivityFailed: 'ActivityFailed',
  /** Failed: the node's child workflow failed or could not start. */
  NodeWorkflowFailed: 'NodeWorkflowFailed',
  /** Blocked: never started, because another node of the plan failed or every slot is held at a deadline. */
  NotStarted: 'NotStarted',
  /** Blocked: handing the node back (uncordon) failed; also a Warning Event of the plan's hand-back. */
  HandBackFailed: 'HandBackFailed',
} as const;
/** A value of {@link NodeReason}. */
export type NodeReason = ValueOf<typeof NodeReason>;

/** Reasons of the rolling steps (node phase reasons; uncordon AfterEachNode, beforeDrain/afterDrain hooks). */
export const RollReason = {
  /** Draining or Cordoned: a hook runs. */
  HookRunning: 'HookRunning',
  /** Blocked: a hook failed; the node waits for a per-node release; also a plan phase reason. */
  HookFailed: 'HookFailed',
  /** Drained: waiting for a per-node release (uncordon AfterEachNode); also a plan phase reason. */
  AwaitingRelease: 'AwaitingRelease',
  /** Released: drained and handed back on its own (uncordon AfterEachNode). */
  HandedBack: 'HandedBack',
  /** Skipped: released by hand after a failed beforeDrain hook, not drained. */
  ReleasedUndrained: 'ReleasedUndrained',
  /** Released: drained and handed back by a per-node release after its afterDrain hook failed. */
  HandedBackAfterHookFailure: 'HandedBackAfterHookFailure',
} as const;
/** A value of {@link RollReason}. */
export type RollReason = ValueOf<typeof RollReason>;

/** Reasons and Event reasons of the deadline policy (`spec.onDeadline`). */
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
  /**
   * Normal Event: the plan's deadline was moved later (the extendDeadline Update, `drainflow
   * extend`, or a raised spec.drainTimeoutSeconds); the message names who, when and the new
   * deadline, and the nodes a plan Blocked at its deadline drains again.
   */
  DeadlineExtended: 'DeadlineExtended',
} as const;
/** A value of {@link DeadlineReason}. */
export type DeadlineReason = ValueOf<typeof DeadlineReason>;

/** Reasons of the maintenance windows (plan phase Paused, condition InMaintenanceWindow). */
export const WindowReason = {
  /** Plan phase Paused and condition InMaintenanceWindow False: no window is open. */
  OutsideMaintenanceWindow: 'OutsideMaintenanceWindow',
  /** Condition InMaintenanceWindow True. */
  InsideMaintenanceWindow: 'InsideMaintenanceWindow',
} as const;
/** A value of {@link WindowReason}. */
export type WindowReason = ValueOf<typeof WindowReason>;

/** Reasons of a preflight: plan phase reasons, condition reasons, Event reasons and blocker reasons. */
export const PreflightReason = {
  /** Plan phase Running (and condition Previewed) while the nodes are examined. */
  Previewing: 'Previewing',
  /** Plan phase Previewed (Normal Event): nothing would block a drain. */
  NoBlockers: 'NoBlockers',
  /** Plan phase Previewed (Warning Event): at least one blocker or dry-run refusal was found. */
  BlockersFound: 'BlockersFound',
  /** Plan phase Previewed (Warning Event): at least one node could not be examined. */
  PreflightIncomplete: 'PreflightIncomplete',

  // ---- blockers found by drainflow's own rules (kubectl's rules are PodReason) ----
  /** The pod's only PodDisruptionBudget allows 0 disruptions now. */
  DisruptionBudget: 'DisruptionBudget',
  /** The pod is selected by more than one PodDisruptionBudget: the eviction subresource refuses it (HTTP 500). */
  MultiplePodDisruptionBudgets: 'MultiplePodDisruptionBudgets',
  /**
   * A PodDisruptionBudget of the pod whose status is not in sync: status.observedGeneration behind
   * metadata.generation (the eviction subresource answers 429 "still being processed"), or the
   * disruption controller's condition DisruptionAllowed False with reason SyncFailed (it then
   * forces disruptionsAllowed to 0).
   */
  PdbNotSynced: 'PdbNotSynced',
  /**
   * A Running pod that is not Ready, guarded by a PodDisruptionBudget with the default
   * unhealthyPodEvictionPolicy IfHealthyBudget whose budget is not healthy (currentHealthy <
   * desiredHealthy) and which allows 0 disruptions: the eviction subresource refuses it.
   */
  UnhealthyPodGuarded: 'UnhealthyPodGuarded',
  /** The pod carries `karpenter.sh/do-not-disrupt: "true"`. */
  DoNotDisrupt: 'DoNotDisrupt',
  /** The node is claimed by another MaintenancePlan: a drain would wait for it. */
  NodeHeldByOtherPlan: 'NodeHeldByOtherPlan',
  /** The node could not be examined (the message says why). */
  PreflightFailed: 'PreflightFailed',
  /** A dry-run eviction got no answer (timeout, transport error). */
  NoAnswer: 'NoAnswer',
  /** Condition Drained of a Preflight plan: False, it never cordons or evicts. */
  PreviewOnly: 'PreviewOnly',

  // ---- warnings: workloads whose pods come back to the node (src/drain/preflight-returning.ts) ----
  /** The pods' controller's pod template sets spec.nodeName to the node: each replacement is created bound to it, past the cordon. */
  NodeNameInTemplate: 'NodeNameInTemplate',
  /** The pods tolerate the cordon (node.kubernetes.io/unschedulable) and may run on this node only. */
  PinnedToNode: 'PinnedToNode',
  /** The pods tolerate the cordon (node.kubernetes.io/unschedulable): the scheduler may put a replacement back. */
  ToleratesCordon: 'ToleratesCordon',
} as const;
/** A value of {@link PreflightReason}. */
export type PreflightReason = ValueOf<typeof PreflightReason>;

// ---------------------------------------------------------------------------------------------
// Reasons of pods
// ---------------------------------------------------------------------------------------------

/**
 * The reason of a pod's classification (kubectl drain's rules and drainflow's pod policy, see
 * `classifyPod` in src/drain/pods.ts). A Block reason is the pod's blocker reason in
 * `status.nodes[].blockedBy` (and a Warning Event the first time); DrainLabelSkip is the reason of
 * a pod in `status.nodes[].skipped`; the others show in logs and in the preflight report.
 * - Skip: NotSelected, PodFinished, MirrorPod, DaemonSetPod (ignoreDaemonSets), DrainLabelSkip.
 * - Wait: Terminating (also the blocker of a pod still terminating at the deadline).
 * - Block: DaemonSetPod, EmptyDirData, NoController, WaitCompleted, DoNotDisrupt.
 * - Evict: Evictable; or the overridden rule, EmptyDirData (deleteEmptyDirData) or NoController
 *   (force), so the status and logs say why a pod kubectl would refuse is evicted anyway.
 */
export const PodReason = {
  /** Skip: the pod does not match spec.podSelection.podSelector. */
  NotSelected: 'NotSelected',
  /** Skip: the pod has finished (phase Succeeded or Failed). */
  PodFinished: 'PodFinished',
  /** Skip: the mirror pod of a static pod (the kubelet owns it). */
  MirrorPod: 'MirrorPod',
  /** Skip (ignoreDaemonSets) or Block: managed by a DaemonSet. */
  DaemonSetPod: 'DaemonSetPod',
  /** Wait: the pod is terminating; waited for, never evicted again. */
  Terminating: 'Terminating',
  /** Block (or Evict with deleteEmptyDirData): the pod has emptyDir volumes whose data an eviction loses. */
  EmptyDirData: 'EmptyDirData',
  /** Block (or Evict with force): the pod has no controller to re-create it. */
  NoController: 'NoController',
  /** Evict: a replicated pod kubectl drain would evict. */
  Evictable: 'Evictable',
  /** Skip: label drainflow.dev/drain (or cluster.x-k8s.io/drain) `skip`. */
  DrainLabelSkip: 'DrainLabelSkip',
  /** Block: label `drain: wait-completed`, until the pod finishes. */
  WaitCompleted: 'WaitCompleted',
  /** Block: annotation `karpenter.sh/do-not-disrupt: "true"` (unless ignoreDoNotDisrupt). */
  DoNotDisrupt: 'DoNotDisrupt',
} as const;
/** A value of {@link PodReason} (the reason of a pod's classification). */
export type PodReason = ValueOf<typeof PodReason>;

/** Reasons of the per-pod policy (skip reasons, blocker kinds), CamelCase. */
export const PodPolicyReason = {
  /** Skip: label `drain: skip`. */
  DrainLabelSkip: PodReason.DrainLabelSkip,
  /** Block: label `drain: wait-completed`, until the pod finishes. */
  WaitCompleted: PodReason.WaitCompleted,
  /** Block: annotation `karpenter.sh/do-not-disrupt: "true"`. */
  DoNotDisrupt: PodReason.DoNotDisrupt,
  /**
   * Counted gone: still terminating past eviction.skipWaitForDeleteTimeoutSeconds (the reason of a
   * pod in status.nodes[].skipped, and a Warning Event).
   */
  DeleteTimeoutPassed: 'DeleteTimeoutPassed',
  /**
   * Skipped: a pod bound to the node after this plan cordoned it that comes back (it tolerates the
   * cordon, is pinned to the node, or its controller put it back after an eviction;
   * src/drain/returning.ts): never evicted again, listed in status.nodes[].skipped; one Warning
   * Event per node and controller; in the preflight report, a pod that tolerates the cordon.
   */
  ReturnsToNode: 'ReturnsToNode',
} as const;
/** A value of {@link PodPolicyReason}. */
export type PodPolicyReason = ValueOf<typeof PodPolicyReason>;

/**
 * Blocker reasons (`status.nodes[].blockedBy[].reason`, and a Warning Event the first time a pod
 * reports one, but DisruptionBudget) that come from the eviction calls rather than from a pod's
 * classification ({@link PodReason}). A refusal the API server explains otherwise carries the
 * Status reason it answered (e.g. `Forbidden`), or `HTTP<code>`.
 */
export const BlockerReason = {
  /** A PodDisruptionBudget allows no disruption now (429, or the budget the drain counts is 0). */
  DisruptionBudget: 'DisruptionBudget',
  /** More than one PodDisruptionBudget selects the pod: the eviction subresource answers 500. */
  MultiplePodDisruptionBudgets: 'MultiplePodDisruptionBudgets',
  /** A 429 not caused by a PodDisruptionBudget (API Priority and Fairness, "still being processed"). */
  TooManyRequests: 'TooManyRequests',
  /** The eviction call got no answer (timeout, transport error); the pod is looked at before it is tried again. */
  CallFailed: 'CallFailed',
  /** 409 from the eviction subresource while the pod still exists; tried again after the backoff. */
  Conflict: 'Conflict',
  /** 403 with cause NamespaceTerminating: the namespace's deletion removes the pod. */
  NamespaceTerminating: 'NamespaceTerminating',
  /** The deadline passed before the pod was evicted. */
  NotEvicted: 'NotEvicted',
  /** The deadline passed while the pod was still terminating. */
  Terminating: PodReason.Terminating,
} as const;
/** A value of {@link BlockerReason}. */
export type BlockerReason = ValueOf<typeof BlockerReason>;

/**
 * Why a PodDisruptionBudget blocks a pod of a node (`status.nodes[].blockedBy[].kind`, the reason of
 * the plan's DisruptionBlocked condition, and the preflight report's blockers); src/drain/pdb-diagnosis.ts
 * decides it from the PDB, the pods it selects and their owner.
 */
export const DisruptionBlockKind = {
  /** The budget frees on its own: N more pods behind the PDB must become Ready (replacements starting). */
  Transient: 'Transient',
  /**
   * The PDB can never allow a disruption without a person: maxUnavailable 0, minAvailable at or above
   * the pods expected (100%, or a single replica behind minAvailable 1), or no scale to compute it from.
   */
  Never: 'Never',
  /** Fewer pods are healthy than the PDB wants because of pods on other nodes (named, with their state). */
  UnhealthyElsewhere: 'UnhealthyElsewhere',
  /** Pods behind the PDB are Pending and unschedulable: the scheduler's message is quoted. */
  ReplacementsUnschedulable: 'ReplacementsUnschedulable',
  /** The budget was spent by evictions this plan did not make (another plan or tool). */
  SpentByOthers: 'SpentByOthers',
} as const;
/** A value of {@link DisruptionBlockKind}. */
export type DisruptionBlockKind = ValueOf<typeof DisruptionBlockKind>;

/**
 * The safe remedy of a Never block (`status.nodes[].blockedBy[].remedy`, src/drain/remedy.ts
 * decides): RolloutRestart, the pods' owner is a Deployment whose own rollout never lowers
 * availability, so a rollout restart moves the pod by surge; None, there is no safe one.
 */
export const RemedyKind = {
  RolloutRestart: 'RolloutRestart',
  None: 'None',
} as const;
/** A value of {@link RemedyKind}. */
export type RemedyKind = ValueOf<typeof RemedyKind>;

/**
 * The steps of a remedy by surge (spec.remedies.rolloutRestart): the reasons of the Remedy
 * condition and of the Events of each step, recorded by the plan workflow.
 */
export const RemedyReason = {
  /** Warning (Approve) or Normal (Auto): a rollout restart of the Deployment is proposed; the message says how to approve it, or when Auto applies it. */
  RemedyProposed: 'RemedyProposed',
  /** Normal: the proposal was approved (the message names who: a user through the approveRemedy Update, or Auto after afterSeconds). */
  RemedyApproved: 'RemedyApproved',
  /** Normal: the Deployment's pod template annotation kubectl.kubernetes.io/restartedAt was set; the Deployment rolls by surge. */
  RolloutRestarted: 'RolloutRestarted',
  /** Normal: after the restart, the pod left the node (the Deployment's rollout replaced it). */
  RemedySucceeded: 'RemedySucceeded',
  /** Warning: the restart could not be requested (the message quotes the API server). */
  RemedyFailed: 'RemedyFailed',
  /** Normal: the block cleared before the remedy was applied (or the node's drain ended): the proposal is withdrawn. */
  RemedyWithdrawn: 'RemedyWithdrawn',
} as const;
/** A value of {@link RemedyReason}. */
export type RemedyReason = ValueOf<typeof RemedyReason>;

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

/**
 * Reasons of the Events recorded on a plan that are no phase, node or blocker reason (those are
 * recorded too: the plan's phase changes, NEWS_NODE_REASONS, blocker reasons, and the Events of
 * {@link DeadlineReason} and {@link PodPolicyReason}).
 */
export const EventReason = {
  /** Normal (operator): the plan's Temporal workflow was started. */
  WorkflowStarted: 'WorkflowStarted',
  /** Normal (operator): a spec change was sent to the workflow as a signal. */
  SignalSent: 'SignalSent',
  /** Normal (operator): the plan was deleted; its workflow was aborted to hand the nodes back. */
  CleanupStarted: 'CleanupStarted',
  /** Normal (operator): the plan's workflow has closed; the finalizer is removed. */
  CleanupFinished: 'CleanupFinished',
  /** Normal (operator): nodes a closed workflow still claimed were handed back. */
  NodesHandedBack: 'NodesHandedBack',
  /**
   * Normal (operator): the plan's workflow closed (terminated, failed, timed out, cancelled) and had
   * left node or hook workflows running; they were cancelled (terminated when the cancel was not
   * honoured in time) before its nodes were handed back.
   */
  ChildWorkflowsStopped: 'ChildWorkflowsStopped',
  /** Warning (operator): the plan's workflow closed before the plan ended; the plan is marked Failed. */
  WorkflowClosed: 'WorkflowClosed',
  /**
   * Warning (operator): Temporal no longer knows the workflow the plan records (the message names it);
   * the plan is marked Failed/WorkflowNotFound.
   */
  WorkflowNotFound: 'WorkflowNotFound',
  /**
   * Warning (operator, on a Node): the node carried the claim of a plan that no longer exists (deleted
   * without drainflow's cleanup, or replaced by a copy with a new UID); the operator ended that plan's
   * workflow and handed the node back (uncordoned only when the plan had cordoned it).
   */
  OrphanHandedBack: 'OrphanHandedBack',
  /** Warning (operator): a node a closed workflow still claimed could not be handed back; retried. */
  NodeHandBackFailed: 'NodeHandBackFailed',
  /** Warning (operator): the spec is not valid; the plan is set Failed/InvalidSpec. */
  InvalidSpec: 'InvalidSpec',
  /** Warning (plan workflow): handing a node back at the end of the plan failed. */
  HandBackFailed: 'HandBackFailed',
  /**
   * Warning (plan workflow), once per cycle: the plan waits for a node held by another plan that
   * waits (directly or through others) for a node this plan holds; the message names the plans and
   * nodes. Neither can go on until one of them ends.
   */
  ClaimCycle: 'ClaimCycle',
  /**
   * Warning (plan workflow), once per PodDisruptionBudget and {@link DisruptionBlockKind} but
   * Transient, when a node first reports the block (not at the deadline): the message names the
   * kind, the PDB, the pods' owner and what a person can do.
   */
  DisruptionBlocked: 'DisruptionBlocked',
  /**
   * Warning (operator): the operator could not reach Temporal to look at the plan's running
   * workflow (the message names the address and the error); once per plan per outage.
   */
  TemporalUnavailable: 'TemporalUnavailable',
  /** Normal (operator): the operator reached Temporal again after a TemporalUnavailable. */
  TemporalAvailable: 'TemporalAvailable',
  /**
   * Warning (operator): the plan was deleted and its finalizer waits for the workflow to run the
   * abort, but no worker polls the workflow's task queue (the message names the workflow, the queue
   * and `drainflow run --worker --task-queue Q`); once per deletion.
   */
  AwaitingWorker: 'AwaitingWorker',
  /**
   * Normal (operator): a spec flag (paused, release, abort) changed on a plan that has ended
   * (Completed, Aborted, Failed with its workflow closed, Previewed) where it has no effect; once per
   * spec generation.
   */
  SpecChangeIgnored: 'SpecChangeIgnored',
} as const;
/** A value of {@link EventReason}. */
export type EventReason = ValueOf<typeof EventReason>;
