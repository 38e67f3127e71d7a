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
 * (see {@link parseRetryAfter}), absent when the response had none (the PodDisruptionBudget case).
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

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// RFC 9110 §5.6.7 HTTP-date forms.
// IMF-fixdate:  Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = /^([A-Za-z]{3}), (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
// rfc850-date (obsolete):  Sunday, 06-Nov-94 08:49:37 GMT
const RFC850_DATE = /^([A-Za-z]{6,9}), (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) GMT$/;
// asctime-date (obsolete):  Sun Nov  6 08:49:37 1994
const ASCTIME_DATE = /^([A-Za-z]{3}) ([A-Za-z]{3}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/;

/** Epoch ms of a UTC date-time, or undefined when a field is out of range (e.g. 31 Feb, hour 24). */
function utcMs(
  year: number,
  monthName: string,
  day: number,
  h: number,
  m: number,
  s: number,
): number | undefined {
  const month = MONTHS.indexOf(monthName);
  if (month < 0 || h > 23 || m > 59 || s > 60 || day < 1) return undefined;
  const ms = Date.UTC(year, month, day, h, m, Math.min(s, 59));
  // Reject days that roll over into the next month (Date.UTC normalises them).
  if (new Date(ms).getUTCDate() !== day) return undefined;
  return ms;
}

/**
 * Parses an HTTP-date (RFC 9110 §5.6.7: IMF-fixdate, or the obsolete rfc850-date and asctime-date forms)
 * into epoch ms, or `undefined` when it is not one. Strict: a `Date.parse`-style lenient parse would
 * accept things the RFC does not. For a two-digit rfc850 year, a year more than 50 years after `nowMs`
 * is taken as the most recent past year with those digits (RFC 9110 §5.6.7).
 */
export function parseHttpDate(value: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m) {
    if (!DAY_NAMES.includes(m[1]!)) return undefined;
    return utcMs(Number(m[4]), m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = RFC850_DATE.exec(value);
  if (m) {
    if (!LONG_DAY_NAMES.includes(m[1]!)) return undefined;
    const nowYear = new Date(nowMs).getUTCFullYear();
    const yy = Number(m[4]);
    let year = Math.floor(nowYear / 100) * 100 + yy;
    if (year > nowYear + 50) year -= 100;
    return utcMs(year, m[3]!, Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  }
  m = ASCTIME_DATE.exec(value);
  if (m) {
    if (!DAY_NAMES.includes(m[1]!)) return undefined;
    return utcMs(Number(m[7]), m[2]!, Number(m[3]!.trim()), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  return undefined;
}

/**
 * Parses a `Retry-After` header value (RFC 9110 §10.2.3: `Retry-After = HTTP-date / delay-seconds`,
 * `delay-seconds = 1*DIGIT`) into seconds to wait from `nowMs`.
 *
 * - delay-seconds (`"10"`): that number; surrounding whitespace is tolerated, signs, fractions and
 *   anything else are not.
 * - HTTP-date (`"Sun, 06 Nov 1994 08:49:37 GMT"`, see {@link parseHttpDate}): seconds from `nowMs` to
 *   that time, rounded up; `0` when it is already past.
 *
 * @param headerValue the header's value, `undefined` when the response had none.
 * @param nowMs the current time, ms since the epoch (in a workflow: `Date.now()` of the workflow, which
 *   is deterministic there; never read here).
 * @returns whole seconds `>= 0`, or `undefined` when absent or malformed.
 */
export function parseRetryAfter(headerValue: string | undefined, nowMs: number): number | undefined {
  if (headerValue === undefined) return undefined;
  const v = headerValue.trim();
  if (v === '') return undefined;
  if (/^\d+$/.test(v)) {
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  }
  const at = parseHttpDate(v, nowMs);
  if (at === undefined) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
