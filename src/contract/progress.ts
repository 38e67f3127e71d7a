/**
 * A node drain's progress as the plan keeps it: what the node workflow last reported
 * ({@link NodeProgress}, signal `nodeProgress` of src/contract/node-messages.ts) and the plan
 * workflow's state projects into `status.nodes[]` (src/drain/projection.ts).
 *
 * Ground floor (src/contract): pure types, imports only API types.
 */
import type { Blocker, HookStatus, NodeStatus, SkippedPod } from '../api/plan.js';

/** Per-node state the plan workflow keeps (what the node workflow last reported). */
export interface NodeState {
  name: string;
  phase: NodeStatus['phase'];
  /** CamelCase reason of the node phase (e.g. NodeHeldByOtherPlan, DeadlineExceeded). */
  reason?: string;
  message?: string;
  /** Phase Waiting, reason NodeHeldByOtherPlan: the name of the plan whose claim the node carries. */
  heldBy?: string;
  podsTotal: number;
  podsEvicted: number;
  /** Pods that waiting will not evict (Block decisions, Failed evictions). */
  podsFailed: number;
  blockedBy: Blocker[];
  /** Eviction API calls sent. */
  attempts: number;
  /** Eviction API calls answered 429. */
  tooManyRequests: number;
  /** ms since epoch of the next eviction attempt while cooling down. */
  nextActionAtMs?: number;
  lastError?: string;
  /** Pods deleted without the Eviction API at the deadline (onDeadline DeletePods). */
  podsDeleted?: number;
  /** Pods that left without this drain's eviction (deleted by someone else, finished, already terminating). */
  podsGoneWithoutEviction?: number;
  /** Deadline of this node's drain, ms since epoch, when spec.nodeDrainTimeoutSeconds makes it earlier than the plan's. */
  deadlineMs?: number;
  /** The order group being drained now (spec.podOrder), when the node reports one. */
  orderGroup?: number;
  /** Pods left alone by choice (opt-out label, skip-wait-for-delete timeout), sorted, capped. */
  skipped?: SkippedPod[];
  /** The node's last hook run (spec.hooks). */
  hook?: HookStatus;
}

/**
 * Progress of one node, sent by the node workflow to the plan workflow after each change: the
 * node's {@link NodeState} (keyed by `node` instead of `name`) plus the claim it holds.
 */
export interface NodeProgress extends Omit<NodeState, 'name'> {
  node: string;
  /** Whether this plan cordoned the node (false when it was unschedulable before). */
  cordonedByPlan?: boolean;
  /** Whether this plan holds the claim on the node. */
  claimed?: boolean;
  /** The claimed Node's `metadata.uid`, once claimed (a Node created again under the name is another). */
  nodeUid?: string;
  /** Whether this is the node drain's last report (its workflow is ending). */
  final?: boolean;
}
