/**
 * The `Retry-After` header of an API server answer (RFC 9110 §10.2.3): delay-seconds or an
 * HTTP-date, turned into seconds to wait. Read by the eviction activity on a 429; the workflows
 * only see the resulting `retryAfterSeconds` of the eviction result (src/drain/node/answers.ts).
 *
 * Pure (no clock reads: the current time is a parameter), but lives with the Kubernetes client
 * because only the answers of API calls carry the header.
 */

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
