/**
 * The rolling-maintenance lines of `drainflow status` and `watch` (docs/guides/rolling-maintenance.md):
 * a node's hook run (`status.nodes[].hook`) and what a node waiting to be handed back needs (a
 * per-node release). Pure: the caller passes the time (ms since epoch).
 */
import { NODE_RELEASE_ANNOTATION, type NodeStatus } from '../api/plan.js';

/** Reason of a drained node waiting for its per-node release (src/drain/hooks.ts RollReason). */
const AWAITING_RELEASE = 'AwaitingRelease';
/** Reason of a node blocked by its failed hook (src/drain/hooks.ts RollReason). */
const HOOK_FAILED = 'HookFailed';

/** Whole seconds from an RFC 3339 time to `nowMs`, at least 0. */
function secondsSince(iso: string, nowMs: number): number {
  return Math.max(0, Math.floor((nowMs - Date.parse(iso)) / 1000));
}

/**
 * The hook line of a node, e.g. `afterDrain hook Running for 12 s (started 2026-12-01T22:00:00.000Z;
 * Job drainflow-system/drainflow-after-n1-ab12)`, with the hook's message after a colon; undefined
 * when the node has run no hook. A ref with a slash is a Job (`namespace/name`), else the child
 * workflow ID.
 */
export function hookLine(n: Pick<NodeStatus, 'hook'>, nowMs: number): string | undefined {
  const h = n.hook;
  if (!h) return undefined;
  const ran = h.started
    ? h.phase === 'Running'
      ? ` for ${secondsSince(h.started, nowMs)} s (started ${h.started}`
      : ` (started ${h.started}`
    : '';
  const ref = h.ref ? `${h.ref.includes('/') ? 'Job' : 'workflow'} ${h.ref}` : '';
  const paren = ran ? `${ran}${ref ? `; ${ref}` : ''})` : ref ? ` (${ref})` : '';
  return `${h.name} hook ${h.phase}${paren}${h.message ? `: ${h.message}` : ''}`;
}

/**
 * What hands a waiting node back, for a plan with `spec.uncordon: AfterEachNode`: a drained node
 * waiting for its per-node release (reason AwaitingRelease), or a node blocked by a failed hook
 * (reason HookFailed: after a failed beforeDrain it is handed back undrained, phase Skipped).
 * Undefined for any other node, or when the plan's uncordon is not AfterEachNode (then a per-node
 * release is refused).
 */
export function releaseHint(
  plan: string,
  n: Pick<NodeStatus, 'name' | 'phase' | 'reason' | 'hook'>,
  uncordon: string | undefined,
): string | undefined {
  if (uncordon !== 'AfterEachNode') return undefined;
  const how = `drainflow release ${plan} --node ${n.name}, or kubectl annotate node ${n.name} ${NODE_RELEASE_ANNOTATION}=true`;
  if (n.reason === AWAITING_RELEASE) return `waiting for its per-node release: ${how}`;
  if (n.reason === HOOK_FAILED && n.phase === 'Blocked')
    return n.hook?.name === 'beforeDrain'
      ? `fix the node, then hand it back undrained (it ends Skipped): ${how}; or abort the plan`
      : `fix the node, then hand it back: ${how}; or abort the plan`;
  return undefined;
}

/**
 * What `drainflow release P --node N` prints once the workflow took the release in, from the
 * node's status in the Update's answer: a node blocked by a failed beforeDrain hook is handed back
 * undrained (phase Skipped), one blocked by a failed afterDrain hook or drained and waiting is
 * handed back now, one whose afterDrain hook runs is handed back by the hook's success, and any
 * other node once it is drained. A node that was unschedulable before the plan stays so.
 */
export function releaseNodeWords(
  plan: string,
  node: string,
  n: Pick<NodeStatus, 'phase' | 'reason' | 'hook'> | undefined,
): string {
  const accepted = `release: node ${node} of plan ${plan} accepted by the workflow (node phase ${n?.phase ?? 'unknown'})`;
  const failedHook = n?.phase === 'Blocked' && n.reason === HOOK_FAILED ? n.hook?.name : undefined;
  const then =
    n?.phase === 'Released' || n?.phase === 'Skipped'
      ? `it has been handed back${n.phase === 'Skipped' ? ' undrained' : ''}`
      : failedHook === 'beforeDrain'
        ? 'its beforeDrain hook failed, so it is handed back undrained now (phase Skipped): uncordoned, no pod evicted'
        : failedHook === 'afterDrain'
          ? 'it is drained and its afterDrain hook failed: it is handed back (uncordoned) now'
          : n?.reason === AWAITING_RELEASE
            ? 'it is drained: it is handed back (uncordoned) now'
            : n?.hook?.name === 'afterDrain' && n.hook.phase === 'Running'
              ? 'its afterDrain hook runs: its success hands the node back'
              : 'it is handed back (uncordoned) once drained';
  return `${accepted}; ${then} (a node unschedulable before the plan stays so)`;
}

/**
 * What becomes of the nodes after `drainflow release P` or `drainflow abort P` was accepted, by
 * spec.uncordon (absent: the default OnDelete): release uncordons with OnRelease only (OnDelete
 * keeps the nodes cordoned until the plan is deleted, Never for good, AfterEachNode hands back each
 * node once drained); abort uncordons what the plan cordoned unless Never. Starts with `; `.
 */
export function handBackWords(action: 'release' | 'abort', uncordon: string | undefined): string {
  const policy = uncordon ?? 'OnDelete';
  const kept = ' (a node unschedulable before the plan stays so)';
  if (action === 'abort')
    return policy === 'Never'
      ? '; the nodes stay cordoned (uncordon Never)'
      : `; the nodes this plan cordoned are uncordoned (uncordon ${policy})${kept}`;
  switch (policy) {
    case 'OnRelease':
      return `; the drained nodes are uncordoned (uncordon OnRelease)${kept}`;
    case 'AfterEachNode':
      return `; every node is handed back (uncordoned) once drained (uncordon AfterEachNode)${kept}`;
    case 'Never':
      return '; the nodes stay cordoned (uncordon Never)';
    default:
      return `; the nodes stay cordoned until the plan is deleted (uncordon ${policy})`;
  }
}
