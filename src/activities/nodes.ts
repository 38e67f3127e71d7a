/**
 * The node activities: {@link DrainActivities.resolveNodes}, and the node claim's two writes,
 * {@link DrainActivities.cordonNode} and {@link DrainActivities.releaseNode} (the claim's
 * annotations are described in src/k8s/node-claim.ts). Used by the worker and, for the deletion
 * hand-back without a workflow, by the operator.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { NODE_RELEASE_ANNOTATION, type LabelSelector } from '../api/plan.js';
import { matchesLabelSelector } from '../drain/selector.js';
import {
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_NODE_UID_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  copiedClaim,
  heldBy,
} from '../k8s/node-claim.js';
import { syncNodeConditions } from '../k8s/node-conditions.js';
import { CONFLICT, retryOnConflict } from '../k8s/patch.js';
import type { KubernetesPort } from '../k8s/port.js';
import type { NotUncordoned } from '../drain/hand-back.js';
import type { CordonResult, DrainActivities, ResolvedNodes } from './types.js';

/** The node activities. */
export type NodeActivities = Pick<DrainActivities, 'resolveNodes' | 'cordonNode' | 'releaseNode'>;

/**
 * Builds the node activities over `port`.
 *
 * @param port the Kubernetes calls (src/k8s/port.ts).
 * @param log where claims and releases are logged.
 */
export function createNodeActivities(port: KubernetesPort, log: Logger): NodeActivities {
  return {
    /**
     * Lists all nodes (paged) and keeps those named in `nodeNames` or matching `nodeSelector`
     * (metav1.LabelSelector semantics; an absent selector selects nothing, `{}` selects every node).
     *
     * @returns the existing nodes in plan order: the `nodeNames` in their order, then the nodes only
     *   `nodeSelector` matches, sorted by name; each once. Plus the `nodeNames` that do not exist
     *   (sorted). The plan starts its nodes in this order.
     * @throws TransientKubernetesError on transport errors / 5xx; PermanentKubernetesError on 4xx.
     */
    async resolveNodes(input) {
      const names = new Set(input.nodeNames ?? []);
      const found = new Set<string>();
      const existing = new Set<string>();
      for await (const node of port.listNodes()) {
        const name = node.metadata?.name;
        if (!name) continue;
        existing.add(name);
        if (names.has(name)) found.add(name);
        if (
          input.nodeSelector !== undefined &&
          matchesLabelSelector(node.metadata?.labels, input.nodeSelector as LabelSelector)
        ) {
          found.add(name);
        }
      }
      const named = (input.nodeNames ?? []).filter((n) => found.has(n));
      const namedSet = new Set(named);
      const result: ResolvedNodes = {
        nodes: [...named, ...[...found].filter((n) => !namedSet.has(n)).sort()],
        missing: [...names].filter((n) => !existing.has(n)).sort(),
      };
      return result;
    },

    /**
     * Claims and cordons a node with one merge patch guarded by the node's resourceVersion (409 Conflict
     * → re-read and retry, see src/k8s/patch.ts). First claim: sets {@link NODE_CLAIM_ANNOTATION} =
     * plan name, {@link NODE_CLAIM_UID_ANNOTATION} = plan uid, {@link NODE_WAS_UNSCHEDULABLE_ANNOTATION} =
     * `'true'|'false'` (spec.unschedulable before), {@link NODE_CLAIM_NODE_UID_ANNOTATION} = the
     * Node's `metadata.uid` and `spec.unschedulable: true`. Already claimed by this plan: re-cordons
     * if someone uncordoned it and returns the recorded `wasUnschedulable`. Claimed by another plan
     * (other name, or same name with another uid): changes nothing. `nodeUid` given and the Node now
     * under that name has another uid (deleted and created again): `NodeReplaced`, nothing written.
     * The patch carries the Node's `metadata.uid` too (immutable: the API server refuses a patch of
     * another object), beside the resourceVersion guard.
     *
     * @throws TransientKubernetesError when conflicts persist or on transport errors / 5xx.
     */
    async cordonNode({ plan, node, nodeUid }) {
      return retryOnConflict<CordonResult>(`cordon node ${node}`, async (attempt) => {
        const current = await port.readNode(node);
        if (!current) return { outcome: 'NodeNotFound' };
        const uid = current.metadata?.uid ?? '';
        if (nodeUid !== undefined && uid !== nodeUid) {
          log.info(
            { node, plan: plan.name, claimed: nodeUid, now: uid },
            'cordonNode: node re-created, not claimed',
          );
          return { outcome: 'NodeReplaced', nodeUid: uid };
        }
        const ann = current.metadata?.annotations ?? {};
        const holder = heldBy(current, plan);
        if (holder === 'other') {
          return { outcome: 'HeldByOtherPlan', heldBy: ann[NODE_CLAIM_ANNOTATION] ?? '' };
        }
        const rv = current.metadata?.resourceVersion;
        let result: CordonResult;
        let patch: object | undefined;
        if (holder === 'self') {
          result = {
            outcome: 'Cordoned',
            wasUnschedulable: ann[NODE_WAS_UNSCHEDULABLE_ANNOTATION] === 'true',
            nodeUid: uid,
          };
          if (
            current.spec?.unschedulable !== true ||
            ann[NODE_CLAIM_UID_ANNOTATION] === undefined ||
            ann[NODE_CLAIM_NODE_UID_ANNOTATION] === undefined
          ) {
            patch = {
              metadata: {
                uid,
                resourceVersion: rv,
                annotations: { [NODE_CLAIM_UID_ANNOTATION]: plan.uid, [NODE_CLAIM_NODE_UID_ANNOTATION]: uid },
              },
              spec: { unschedulable: true },
            };
          }
        } else {
          const wasUnschedulable = current.spec?.unschedulable === true;
          result = { outcome: 'Cordoned', wasUnschedulable, nodeUid: uid };
          patch = {
            metadata: {
              uid,
              resourceVersion: rv,
              annotations: {
                [NODE_CLAIM_ANNOTATION]: plan.name,
                [NODE_CLAIM_UID_ANNOTATION]: plan.uid,
                [NODE_WAS_UNSCHEDULABLE_ANNOTATION]: String(wasUnschedulable),
                [NODE_CLAIM_NODE_UID_ANNOTATION]: uid,
              },
            },
            spec: { unschedulable: true },
          };
        }
        if (patch === undefined) return result;
        const patched = await port.patchNode(node, patch);
        if (patched === 'gone') return { outcome: 'NodeNotFound' };
        if (patched === 'conflict') {
          log.debug({ node, attempt }, 'cordonNode: node changed since read, retrying');
          return CONFLICT;
        }
        log.info(
          { node, plan: plan.name, wasUnschedulable: result.wasUnschedulable },
          'node claimed and cordoned',
        );
        return result;
      });
    },

    /**
     * Removes this plan's claim from a node with one resourceVersion-guarded merge patch (conflicts
     * retried), and sets `spec.unschedulable` back to unset when `uncordon` is true and the node was
     * not unschedulable before the plan ({@link NODE_WAS_UNSCHEDULABLE_ANNOTATION} != `'true'`).
     * A node that is missing or not claimed by this plan (name and uid) is left alone, and so is a
     * Node created again under the claimed node's name (`left: 'replaced'`): its `metadata.uid` is not
     * `nodeUid`, or its claim was copied from the Node that is gone ({@link copiedClaim}). The patch
     * carries the Node's `metadata.uid` beside the resourceVersion guard.
     *
     * Then removes the plan's node lifecycle conditions (`MaintenancePlanned`, `DrainInProgress`,
     * `Drained`: src/k8s/node-conditions.ts) with a second guarded patch, of `nodes/{n}/status` —
     * also when the claim was already gone (a retry, or handed back by the operator) — but not from
     * a Node that is gone or was created again.
     *
     * @returns `uncordoned: true` when this call made the node schedulable again.
     * @throws TransientKubernetesError when conflicts persist or on transport errors / 5xx.
     */
    async releaseNode({ plan, node, uncordon, nodeUid }) {
      let seen: V1Node | undefined;
      const released = await retryOnConflict(`release node ${node}`, async () => {
        const current = await port.readNode(node);
        if (!current) return { uncordoned: false, left: 'gone' as const };
        const uid = current.metadata?.uid;
        if ((nodeUid !== undefined && uid !== nodeUid) || copiedClaim(current)) {
          log.info({ node, plan: plan.name, claimed: nodeUid, now: uid }, 'node re-created: not handed back');
          return { uncordoned: false, left: 'replaced' as const };
        }
        seen = current;
        if (heldBy(current, plan) !== 'self') return { uncordoned: false, left: 'notClaimed' as const };
        const ann = current.metadata?.annotations ?? {};
        const doUncordon = uncordon && ann[NODE_WAS_UNSCHEDULABLE_ANNOTATION] !== 'true';
        const patch: { metadata: object; spec?: object } = {
          metadata: {
            uid,
            resourceVersion: current.metadata?.resourceVersion,
            annotations: {
              [NODE_CLAIM_ANNOTATION]: null,
              [NODE_CLAIM_UID_ANNOTATION]: null,
              [NODE_WAS_UNSCHEDULABLE_ANNOTATION]: null,
              [NODE_CLAIM_NODE_UID_ANNOTATION]: null,
              // A per-node release (uncordon AfterEachNode) is used up by the hand-back.
              [NODE_RELEASE_ANNOTATION]: null,
            },
          },
        };
        // `null` deletes the field, as `kubectl uncordon` leaves it (unschedulable is omitempty).
        if (doUncordon) patch.spec = { unschedulable: null };
        const patched = await port.patchNode(node, patch);
        if (patched === 'gone') return { uncordoned: false, left: 'gone' as const };
        if (patched === 'conflict') return CONFLICT;
        seen = patched;
        const uncordoned = doUncordon && current.spec?.unschedulable === true;
        log.info({ node, plan: plan.name, uncordoned }, 'node released');
        if (uncordoned) return { uncordoned };
        const left: NotUncordoned = !uncordon
          ? 'notAsked'
          : ann[NODE_WAS_UNSCHEDULABLE_ANNOTATION] === 'true'
            ? 'wasUnschedulable'
            : 'alreadySchedulable';
        return { uncordoned, left };
      });
      // The claim is gone (removed just now, or before: a retry of this activity, a hand-back by the
      // operator): the node lifecycle conditions go with it, in the same activity, so that they are
      // gone at the hand-back even while the operator, which writes them, is down.
      if (released.left !== 'gone' && released.left !== 'replaced') {
        const write = await syncNodeConditions(port, node, plan, [], {
          ...(nodeUid !== undefined ? { nodeUid } : {}),
          ...(seen !== undefined ? { seen } : {}),
        });
        if (write === 'written') log.info({ node, plan: plan.name }, 'node lifecycle conditions removed');
      }
      return released;
    },
  };
}
