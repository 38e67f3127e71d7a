/**
 * Shared fixtures of the table tests of a node's deadline (test/unit/on-deadline.test.ts,
 * test/unit/node-deadline.test.ts): a fixed clock, a deadline 600 s after it, and the node
 * drain settings with a deadline policy.
 */
import type { OnDeadline } from '../../src/api/plan.js';
import type { NodeDrainSettings } from '../../src/drain/node/state.js';

/** The tests' "now", ms since epoch. */
export const NOW = 1_700_000_000_000;
/** One second, ms. */
export const S = 1000;
/** The node's deadline: 600 s after {@link NOW}. */
export const DEADLINE = NOW + 600 * S;
/** eviction.retryBackoff's default, seconds. */
export const BACKOFF = { initialSeconds: 5, maxSeconds: 120 };

/** Settings with 4 evictions per node, the default backoff, `onDeadline` (absent: Stop) and `extra`. */
export const deadlineSettings = (
  onDeadline?: OnDeadline,
  extra: Partial<NodeDrainSettings> = {},
): NodeDrainSettings => ({
  maxConcurrentPerNode: 4,
  retryBackoff: BACKOFF,
  ...(onDeadline ? { onDeadline } : {}),
  ...extra,
});
