/**
 * Retry timing: exponential backoff.
 *
 * PURE and DETERMINISTIC: imported by Temporal workflow code. No jitter (a workflow must compute the
 * same timer on replay), no clock reads: the current time is a parameter.
 */
import type { RetryBackoff } from '../api/plan.js';

/**
 * Exponential backoff in seconds for the `attempt`-th retry: `initialSeconds * 2^(attempt-1)`, capped at
 * `maxSeconds`. `attempt` starts at 1 (values below 1 or non-integers are treated as `max(1, floor(attempt))`).
 * No jitter: workflows need determinism.
 *
 * With the defaults `{initialSeconds: 5, maxSeconds: 120}`: 5, 10, 20, 40, 80, 120, 120, …
 *
 * @param attempt 1-based retry number.
 * @param backoff `spec.eviction.retryBackoff` (seconds).
 * @returns seconds to wait, in `[0, maxSeconds]`.
 */
export function backoffSeconds(attempt: number, backoff: RetryBackoff): number {
  const n = Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
  const max = Math.max(0, backoff.maxSeconds);
  const initial = Math.max(0, backoff.initialSeconds);
  // 2^1024 overflows to Infinity; Math.min then yields the cap.
  const raw = initial * 2 ** (n - 1);
  return Math.min(max, Number.isNaN(raw) ? max : raw);
}
