/**
 * The node claim of a MaintenancePlan, shared by the worker's activities (cordonNode, releaseNode)
 * and the operator's deletion cleanup: which annotations make up a claim, whose claim a node
 * carries, and which nodes carry a plan's claim.
 *
 * A claim is four annotations on the Node, written by the `cordonNode` activity in one
 * resourceVersion-guarded merge patch and removed by `releaseNode` the same way:
 *
 * | annotation                                   | value                                              |
 * | -------------------------------------------- | -------------------------------------------------- |
 * | {@link NODE_CLAIM_ANNOTATION}                | the plan's `metadata.name`                         |
 * | {@link NODE_CLAIM_UID_ANNOTATION}            | the plan's `metadata.uid` (absent on old claims)   |
 * | {@link NODE_WAS_UNSCHEDULABLE_ANNOTATION}    | `'true'`/`'false'`: `spec.unschedulable` before it |
 * | {@link NODE_CLAIM_NODE_UID_ANNOTATION}       | the Node's own `metadata.uid` at the claim          |
 *
 * Nodes are identified by UID: a Node deleted and created again under the same name gets a new
 * `metadata.uid` from the API server, and is another node. A claim copied onto it (a Node re-created
 * from a saved manifest, annotations and `spec.unschedulable` included) names the uid of a Node that
 * is gone, and is no claim: no plan cordoned this node, none hands it back or drains it.
 *
 * Annotations are not selectable server-side (no annotation selector exists), so finding a plan's
 * nodes means listing every Node and filtering here.
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import {
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_NODE_UID_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
} from '../api/plan.js';
import type { PlanRef } from '../contract/names.js';

// The three annotations are defined once, with the API's other names (src/api/plan.ts).
export {
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_NODE_UID_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
};

/** Page size of the Node lists of {@link allNodes}. */
const LIST_PAGE_SIZE = 500;

/**
 * Every Node, one page (`GET /api/v1/nodes?limit=500`, following `continue`) at a time, so a large
 * cluster is never held whole. Needs `list nodes`.
 * @throws the client's ApiException when a page fails.
 */
export async function* allNodes(core: CoreV1Api): AsyncIterable<V1Node> {
  let cont: string | undefined;
  do {
    const page = await core.listNode({ limit: LIST_PAGE_SIZE, _continue: cont });
    yield* page.items;
    cont = page.metadata?._continue || undefined;
  } while (cont);
}

/**
 * Whether the node carries a claim copied from another Node object: {@link NODE_CLAIM_NODE_UID_ANNOTATION}
 * names another uid than the node's own `metadata.uid` (the claimed Node was deleted and this one
 * created under its name from a manifest that kept the annotations). A claim without that
 * annotation is not taken as copied.
 */
export function copiedClaim(node: V1Node): boolean {
  const claimed = node.metadata?.annotations?.[NODE_CLAIM_NODE_UID_ANNOTATION];
  return claimed !== undefined && claimed !== '' && claimed !== node.metadata?.uid;
}

/**
 * Whose claim the node carries, seen from `plan`: `'none'` (no or empty {@link NODE_CLAIM_ANNOTATION},
 * or a claim copied from a Node that is gone: {@link copiedClaim}), `'self'` (the name matches and
 * the uid annotation matches or is absent: a claim without the uid annotation counts by name),
 * `'other'` (another name, or this name with another uid: a plan deleted and re-created under the
 * same name is another plan).
 */
export function heldBy(node: V1Node, plan: PlanRef): 'none' | 'self' | 'other' {
  const ann = node.metadata?.annotations ?? {};
  const name = ann[NODE_CLAIM_ANNOTATION];
  if (name === undefined || name === '' || copiedClaim(node)) return 'none';
  const uid = ann[NODE_CLAIM_UID_ANNOTATION];
  return name === plan.name && (uid === undefined || uid === plan.uid) ? 'self' : 'other';
}

/** Whether `node`'s claim names `holder`, another plan than `plan` ({@link heldBy} `'other'`). */
export function showsHolder(node: V1Node | undefined, plan: PlanRef, holder: string): boolean {
  return (
    node !== undefined &&
    heldBy(node, plan) === 'other' &&
    node.metadata?.annotations?.[NODE_CLAIM_ANNOTATION] === holder
  );
}

/**
 * Whether a plan waiting for `node` (held by the plan named `holder` when it last tried to claim it)
 * may try again: `'NodeNotFound'` when the node does not exist (`undefined`), `'Released'` when its
 * claim no longer names `holder` as another plan ({@link showsHolder} is false: no claim, this
 * plan's, or a third plan's, which the claim attempt then names), `undefined` while `holder` still
 * holds it.
 *
 * `confirmed`: whether the view can be trusted to say the claim is gone. A watch cache may not yet
 * show a claim written a moment ago (the holder's own claim, which the waiting plan's cordon just
 * read from the API server); until the cache has shown the holder's claim once, or long enough has
 * passed for it to catch up, a node without that claim is not taken as released.
 *
 * @param node the Node as last seen, `undefined` when it does not exist.
 * @param plan the waiting plan.
 * @param holder the holder's name ({@link NODE_CLAIM_ANNOTATION}) that made `plan` wait.
 * @param confirmed see above; default true.
 */
export function claimWaitOutcome(
  node: V1Node | undefined,
  plan: PlanRef,
  holder: string,
  confirmed = true,
): 'Released' | 'NodeNotFound' | undefined {
  if (node === undefined) return 'NodeNotFound';
  if (showsHolder(node, plan, holder)) return undefined;
  return confirmed ? 'Released' : undefined;
}

/**
 * The nodes carrying `plan`'s claim ({@link heldBy} `'self'`), sorted by name, from {@link allNodes}.
 * @throws the client's ApiException when the list fails (the caller retries).
 */
export async function listClaimedNodes(core: CoreV1Api, plan: PlanRef): Promise<V1Node[]> {
  const out: V1Node[] = [];
  for await (const n of allNodes(core)) if (heldBy(n, plan) === 'self') out.push(n);
  return out.sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
}
