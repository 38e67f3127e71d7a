/**
 * The node drain takes in controls: pause, resume, abort, release from the plan (or a stop from
 * the operator), drops stale ones, and says what a node paused before its claim is doing.
 * PURE: imported by workflow code.
 */
import { NodePhase, NodeReason } from '../../api/reasons.js';
import type { NodeDrainState } from './state.js';
import { PAUSED_BEFORE_CLAIM_MESSAGE, heldWhilePausedMessage } from './words.js';

/** An action of the `nodeControl` signal (src/contract/node-messages.ts). */
export type NodeControlAction = 'pause' | 'resume' | 'abort' | 'release';

/**
 * Whether a `pause` or `resume` relayed for plan generation `generation` is stale: older than the
 * newest generation the node has seen ({@link NodeDrainState.controlGeneration}). The rule of the
 * plan workflow (`control` in src/workflows/plan.ts) for the node: the operator
 * signals stops to the node workflows directly too (src/operator/node-stops.ts), so a standby
 * replica's late relay of an old pause may reach a node after the plan forwarded the leader's newer
 * resume; the newer spec wins. A control without a generation (maintenance windows, `drainflow`
 * Updates) is never stale, nor is an abort
 * or a release (they only ever stop more).
 */
export function isStaleControl(
  s: Pick<NodeDrainState, 'controlGeneration'>,
  action: NodeControlAction,
  generation: number | undefined,
): boolean {
  return (
    (action === 'pause' || action === 'resume') &&
    generation !== undefined &&
    s.controlGeneration !== undefined &&
    generation < s.controlGeneration
  );
}

/**
 * Applies pause, resume, abort or release (signals from the plan, or a stop from the operator).
 * Abort wins over everything; release only concerns a rolling node. A `generation` newer than
 * {@link NodeDrainState.controlGeneration} becomes it. Applies stale controls too: the caller
 * drops them first ({@link isStaleControl}).
 */
export function applyControl(
  s: NodeDrainState,
  action: NodeControlAction,
  generation?: number,
): NodeDrainState {
  if (generation !== undefined && (s.controlGeneration === undefined || generation > s.controlGeneration))
    s.controlGeneration = generation;
  if (action === 'pause') s.paused = true;
  else if (action === 'resume') s.paused = false;
  else if (action === 'release') {
    if (s.roll) s.roll.released = true;
  } else s.aborted = true;
  return s;
}

/**
 * Words a node paused before this plan claimed it: no claim (cordon) is tried while paused, since a
 * cordon takes the node's capacity away and a pause stops new work (the claim loop of
 * src/workflows/node.ts). On resume the claim is tried at once.
 *
 * - Refused at its last try because another plan held it ({@link NodeDrainState.heldBy}): phase
 *   Waiting, reason NodeHeldByOtherPlan, a message naming that plan and the pause (the other plan
 *   may have handed it back since; the node does not look while paused).
 * - Not tried yet (started paused: outside a maintenance window, after a continue-as-new): phase
 *   Paused, reason PausedByUser (shown as OutsideMaintenanceWindow while the windows hold the plan).
 */
export function pausedBeforeClaim(s: NodeDrainState): NodeDrainState {
  if (s.heldBy !== undefined) {
    s.phase = NodePhase.Waiting;
    s.reason = NodeReason.NodeHeldByOtherPlan;
    s.message = heldWhilePausedMessage(s.node, s.heldBy);
  } else {
    s.phase = NodePhase.Paused;
    s.reason = NodeReason.PausedByUser;
    s.message = PAUSED_BEFORE_CLAIM_MESSAGE;
  }
  return s;
}
