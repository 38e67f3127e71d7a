/**
 * Retry timing: exponential backoff and the cooldown after an Eviction API 429 (DESIGN §4).
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

/**
 * What a 429 told us about when to retry: `retryAfterSeconds` is the server's `Retry-After` in seconds
 * (parsed from the header by `parseRetryAfter` in src/k8s/retry-after.ts), absent when the response had none (the PodDisruptionBudget case).
 */
export interface RetryAfterHint {
  retryAfterSeconds?: number | undefined;
}

/**
 * Seconds to wait after a 429 before the next attempt (DESIGN §4 "the cooldown"): the server's
 * `Retry-After` when it gave one greater than 0 (rounded up to whole seconds), otherwise
 * {@link backoffSeconds}`(attempt, backoff)`.
 *
 * The server's value is honoured as given (not capped by `maxSeconds`): API Priority and Fairness and
 * the eviction subresource send it precisely so that clients do not come back earlier.
 *
 * @param result the 429 outcome, e.g. `{ retryAfterSeconds: 10 }` or `{}`.
 * @param backoff `spec.eviction.retryBackoff` (seconds).
 * @param attempt 1-based number of consecutive 429s/transient errors for this pod.
 * @returns seconds to wait (> 0 unless the backoff itself is 0).
 */
export function cooldownSeconds(result: RetryAfterHint, backoff: RetryBackoff, attempt: number): number {
  const ra = result.retryAfterSeconds;
  if (typeof ra === 'number' && Number.isFinite(ra) && ra > 0) return Math.ceil(ra);
  return backoffSeconds(attempt, backoff);
}
