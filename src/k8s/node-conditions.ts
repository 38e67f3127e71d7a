/**
 * Writes a plan's node lifecycle conditions (src/drain/node-conditions.ts) on a Node: read, decide,
 * one strategic merge patch of `nodes/{n}/status` guarded by the Node's resourceVersion and uid
 * (409 Conflict → read again and re-decide, src/k8s/patch.ts).
 *
 * The guard is what keeps the operator's writes and the hand-back apart: the operator writes only
 * on a Node whose read showed the plan's claim, so a hand-back between its read and its write (which
 * removes the claim, then the conditions) makes its write a conflict, and the fresh read shows no
 * claim: nothing is written back.
 *
 * The patch names only the plan's condition types (merged by `type`): the kubelet's (or kwok's)
 * `Ready`, `MemoryPressure` etc. and any other writer's conditions stay as they are.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { PlanRef } from '../contract/names.js';
import { nodeConditionChanges, type WantedNodeCondition } from '../drain/node-conditions.js';
import { heldBy } from './node-claim.js';
import { CONFLICT, retryOnConflict } from './patch.js';
import type { KubernetesPort } from './port.js';

/** What {@link syncNodeConditions} did. */
export type ConditionsWrite =
  /** The Node carries what it should: nothing written. */
  | 'unchanged'
  /** One patch set or removed conditions. */
  | 'written'
  /** No such Node, or another Node under the name than `nodeUid`: nothing written. */
  | 'gone';

/**
 * Makes `node` carry `wanted` while `plan` holds it ({@link heldBy} `'self'`), and none of the
 * plan's conditions otherwise (a node the plan does not hold never gets its conditions; its own
 * ones left over are removed). With `wanted` `[]` it removes the plan's conditions (the hand-back).
 *
 * @param wanted what the node carries while held (src/drain/node-conditions.ts).
 * @param nodeUid the claimed Node's uid, when known: another Node under the name is left alone.
 * @param seen the Node as a write just answered it: the first attempt decides on it instead of
 *   reading the Node again (a conflict reads it).
 * @param now the clock, for the condition times (tests pass one).
 * @throws TransientKubernetesError when conflicts persist or on transport errors / 5xx;
 *   PermanentKubernetesError on other 4xx (e.g. 403 without `nodes/status patch`).
 */
export async function syncNodeConditions(
  port: Pick<KubernetesPort, 'readNode' | 'patchNodeStatus'>,
  node: string,
  plan: PlanRef,
  wanted: readonly WantedNodeCondition[],
  opts: { nodeUid?: string; seen?: V1Node; now?: () => Date } = {},
): Promise<ConditionsWrite> {
  const clock = opts.now ?? (() => new Date());
  return retryOnConflict<ConditionsWrite>(`node ${node} conditions`, async (attempt) => {
    const current = attempt === 1 && opts.seen ? opts.seen : await port.readNode(node);
    if (!current) return 'gone';
    const uid = current.metadata?.uid;
    if (opts.nodeUid !== undefined && uid !== opts.nodeUid) return 'gone';
    const held = heldBy(current, plan) === 'self';
    const now = clock()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
    const { set, remove } = nodeConditionChanges(
      current.status?.conditions ?? [],
      held ? wanted : [],
      plan.name,
      now,
    );
    if (set.length === 0 && remove.length === 0) return 'unchanged';
    const patched = await port.patchNodeStatus(node, {
      metadata: { uid, resourceVersion: current.metadata?.resourceVersion },
      status: { conditions: [...set, ...remove.map((type) => ({ type, $patch: 'delete' }))] },
    });
    if (patched === 'gone') return 'gone';
    if (patched === 'conflict') return CONFLICT;
    return 'written';
  });
}
