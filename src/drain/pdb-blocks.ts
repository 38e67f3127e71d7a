/**
 * The plan's view of PodDisruptionBudget blocks: the DisruptionBlocked condition and one Warning
 * Event per PDB and kind, from the blockers its nodes report (`blockedBy[].kind`, set by the node's
 * diagnosis, src/drain/pdb-diagnosis.ts). A Never block is announced with the first report that
 * carries it, not at the deadline.
 *
 * PURE and DETERMINISTIC: imported by the plan workflow.
 */
import type { Blocker } from '../api/plan.js';
import { ConditionReason, ConditionType, DisruptionBlockKind, EventReason } from '../api/reasons.js';
import type { NodeState } from '../contract/progress.js';
import type { ConditionUpdate } from './conditions.js';

/** A blocker of a node that carries a kind. */
export interface DisruptionBlock {
  node: string;
  blocker: Blocker & { kind: DisruptionBlockKind; pdb: string };
}

/** Event keys remembered at most (`pdb|kind`); older ones may be announced again. */
const ANNOUNCED_CAP = 2000;

/** Every blocker with a kind, nodes in the plan's order, blockers as the node sorted them. */
export function disruptionBlocks(nodes: readonly Pick<NodeState, 'name' | 'blockedBy'>[]): DisruptionBlock[] {
  const out: DisruptionBlock[] = [];
  for (const n of nodes)
    for (const b of n.blockedBy ?? [])
      if (b.kind !== undefined && b.pdb !== undefined)
        out.push({ node: n.name, blocker: b as DisruptionBlock['blocker'] });
  return out;
}

/** What the condition and the Event say of a block: the node, the pod, then the blocker's words. */
export function disruptionBlockMessage(b: DisruptionBlock): string {
  return `node ${b.node}: pod ${b.blocker.pod}: ${b.blocker.message}`;
}

/**
 * The Warning Events due for a node's report: one per PDB and kind not announced yet (Transient,
 * the normal wait, has none). Records their keys in `announced` (capped).
 */
export function disruptionWarnings(
  node: Pick<NodeState, 'name' | 'blockedBy'>,
  announced: string[],
): { type: 'Warning'; reason: string; message: string }[] {
  const out: { type: 'Warning'; reason: string; message: string }[] = [];
  for (const b of disruptionBlocks([node])) {
    if (b.blocker.kind === DisruptionBlockKind.Transient) continue;
    const key = `${b.blocker.pdb}|${b.blocker.kind}`;
    if (announced.includes(key)) continue;
    announced.push(key);
    if (announced.length > ANNOUNCED_CAP) announced.splice(0, announced.length - ANNOUNCED_CAP);
    out.push({ type: 'Warning', reason: EventReason.DisruptionBlocked, message: disruptionBlockMessage(b) });
  }
  return out;
}

/**
 * The DisruptionBlocked condition: True while a node reports a blocker with a kind (reason: the
 * kind of the first, message: {@link disruptionBlockMessage}); False once none does; absent (undefined)
 * until the first block.
 */
export function disruptionCondition(
  nodes: readonly Pick<NodeState, 'name' | 'blockedBy'>[],
  seenBefore: boolean,
): ConditionUpdate | undefined {
  const first = disruptionBlocks(nodes)[0];
  if (first)
    return {
      type: ConditionType.DisruptionBlocked,
      status: 'True',
      reason: first.blocker.kind,
      message: disruptionBlockMessage(first),
    };
  if (!seenBefore) return undefined;
  return {
    type: ConditionType.DisruptionBlocked,
    status: 'False',
    reason: ConditionReason.NoDisruptionBlock,
    message: 'no PodDisruptionBudget blocks a node of the plan',
  };
}
