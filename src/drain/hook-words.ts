/**
 * The words of a node whose hook (spec.hooks) waits before it starts because someone else
 * uncordoned the node ({@link hookGateStep} in ./hooks.ts). The rule only returns them and never
 * compares them, so a wording change is no change of what a node does.
 *
 * PURE: imported by workflow code.
 */

/** Which hook (./hooks.ts `HookName`, repeated here so that this module imports nothing). */
type Hook = 'beforeDrain' | 'afterDrain';

/**
 * Blocked/NodeUncordonedExternally before hook `hook` of `node` in plan `plan` started: the hook
 * waits for the node to be cordoned again, and what the admin can do.
 */
export function hookWaitsForCordonMessage(node: string, plan: string, hook: Hook): string {
  return `node ${node} was uncordoned by someone else before its ${hook} hook started: the hook waits until the node is cordoned again (kubectl cordon ${node}), then starts; to give the node up instead, abort the plan (drainflow abort ${plan}); at the plan's deadline the node ends without the hook`;
}

/**
 * The end of a node whose hook `hook` never started: the deadline passed while someone else kept
 * the node uncordoned. beforeDrain: nothing was evicted; afterDrain: the node was drained.
 */
export function hookGateDeadlineMessage(node: string, hook: Hook): string {
  return hook === 'beforeDrain'
    ? `deadline passed while node ${node} was uncordoned by someone else, before its beforeDrain hook started: nothing evicted`
    : `drained; deadline passed while node ${node} was uncordoned by someone else, before its afterDrain hook started (the hook did not run)`;
}

/**
 * The end of a node deleted before its hook `hook` started; `replacedBy`: the uid of the Node
 * created again under its name (another node, not this plan's).
 */
export function hookGateDeletedMessage(node: string, hook: Hook, replacedBy?: string): string {
  const what =
    replacedBy === undefined
      ? 'was deleted'
      : `was deleted and created again under its name (now uid ${replacedBy}: another node, not claimed by this plan, so it is not drained, cordoned or uncordoned by it)`;
  return `node ${node} ${what} before its ${hook} hook started`;
}
