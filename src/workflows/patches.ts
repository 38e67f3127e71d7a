/**
 * Patch epochs: one marker in a run's history for every change its workflow type was patched for
 * up to a release, instead of one per change.
 *
 * Why: the first `patched(id)` of a run that returns true records a MarkerRecorded event and an
 * upsert of the `TemporalChangeVersion` search attribute, two history events per change. A node run
 * asked about ten changes, so about 20 of the 85 events of a one-pod node drain were patch
 * bookkeeping, and every run after a continue-as-new repeats them.
 *
 * How: {@link patchesSince} asks `patched(epoch)` once, at the start of every run. A run recorded
 * with the epoch marker takes every change the epoch lists as applied without asking (no marker).
 * A run recorded before the epoch existed has no epoch marker, so it asks each change as it did and
 * replays as recorded. A change made after an epoch is not in its list: `since(id)` asks
 * `patched(id)` for it (its own marker) until a later epoch lists it. A later epoch is asked first
 * and the earlier one only when it is false, so a new run records one marker.
 *
 * Pure Temporal workflow API (`patched`): deterministic as long as the epoch is asked at the same
 * point of every run (the start of the workflow function).
 */
import { patched } from '@temporalio/workflow';

/** Whether the change `id` applies to this run: see the module comment. */
export type Since = (id: string) => boolean;

/**
 * Asks the epoch `epochId` now (one `patched()` call) and returns {@link Since} for this run.
 * @param covered every change id the epoch stands for (all of them applied in runs recorded with it).
 */
export function patchesSince(epochId: string, covered: readonly string[]): Since {
  const epoch = patched(epochId);
  const set = new Set(covered);
  return (id) => (epoch && set.has(id)) || patched(id);
}

/**
 * The node workflow's epoch 1 (src/workflows/node.ts and node-roll.ts): every change it was patched
 * for up to and including `abandon-observations` and `grant-blockers`.
 */
export const NODE_EPOCH_1 = {
  id: 'node-epoch-1',
  covered: [
    'level-triggered-node',
    'on-deadline',
    'pod-policy',
    'terminating-words',
    'deleted-node-counts',
    'refused-not-evicted',
    'refusal-ends-at-new-version',
    'grant-blockers',
    'per-node-release',
    'hooks',
    'pdb-budget',
    'pdb-reporters',
    'reported-pdb-versions',
    'grants-only',
    'eviction-task-queue',
    'abandon-observations',
    'delete-fatal',
    'hooks-held',
    'hook-failure-report',
    'release-wait-uncordoned',
    'release-wait-node-deleted',
  ],
} as const;

/**
 * The node workflow's changes made after {@link NODE_EPOCH_1}: each is asked with its own
 * `patched(id)` (through `since(id)`) where it first matters, until a later epoch lists it.
 *
 * - `stale-node-controls`: a pause or resume older than the newest generation seen is ignored.
 * - `deadline-fresh-view`: at the deadline the node decides from an observation made after it.
 * - `aborted-evicted-counts`: an aborted node counts its evicted pods still terminating.
 * - `claim-watch`: a node held by another plan waits for the hand-back (`waitClaimReleased`) and
 *   tries to claim it at once, not only at its next backoff try; asked when a node first finds
 *   itself held.
 * - `paused-no-claim`: a node paused before it claimed its node tries no claim (no cordon) and does
 *   not wait for a hand-back until resumed; asked when a paused node would first try to claim.
 */
export const NODE_CHANGES_SINCE_EPOCH_1 = [
  'stale-node-controls',
  'deadline-fresh-view',
  'aborted-evicted-counts',
  'claim-watch',
  'paused-no-claim',
] as const;

/** The plan workflow's epoch 1 (src/workflows/plan.ts): every change up to `grant-delivery-activity`. */
export const PLAN_EPOCH_1 = {
  id: 'plan-epoch-1',
  covered: [
    'plan-loop',
    'on-deadline',
    'windows',
    'per-node-release',
    'plan-words',
    'pdb-reporters',
    'deletions-event',
    'stale-controls',
    'refusing-node-ends-refusal',
    'grant-delivery-activity',
    'grants-before-status',
    'late-update-publish',
    'pdb-budget',
    'preflight',
    'plan-age-timer',
  ],
} as const;

/**
 * The plan workflow's changes made after {@link PLAN_EPOCH_1}: each is asked with its own
 * `patched(id)` (through `since(id)`) where it first matters, until a later epoch lists it.
 *
 * - `forward-generations`: controls are forwarded to the nodes with the generation they came with.
 * - `node-start-generation`: a node started after a control starts with the plan's newest generation.
 * - `paused-hides-blockers`: a paused node's status lists no blockers; asked at the first status write
 *   with a paused node that lists some.
 */
export const PLAN_CHANGES_SINCE_EPOCH_1 = [
  'forward-generations',
  'node-start-generation',
  'paused-hides-blockers',
] as const;
