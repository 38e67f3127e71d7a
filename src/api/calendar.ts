/**
 * The calendar words of maintenance windows (`spec.windows[]`): the days of the week and IANA time
 * zone names. src/api/windows.ts builds the zod schemas from them; src/drain/windows.ts does the
 * arithmetic.
 *
 * No zod: workflow code imports this module without evaluating the schemas (see src/api/bounds.ts
 * for why that matters). `Intl` only, which is deterministic within one worker's ICU data.
 */
import type { StringFormat } from './plan.js';

/** Days of the week, Monday first, as `spec.windows[].days` names them. */
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
/** One day of the week (see {@link WEEKDAYS}). */
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * The shape of an IANA time zone name (`Europe/Berlin`, `America/Argentina/Buenos_Aires`, `UTC`,
 * `Etc/GMT+1`). The API server can only check the shape; whether the zone exists is checked against
 * the ICU time zone data of the operator's Node.js ({@link isTimeZone}), and a plan naming an
 * unknown zone is marked Failed/InvalidSpec with a Warning Event.
 */
export const TIME_ZONE: StringFormat = {
  name: 'an IANA time zone name',
  allowed:
    "a name such as Europe/Berlin, America/New_York or UTC (letters, digits, '_', '-' and '+' in parts separated by '/')",
  pattern: /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/,
  maxLength: 64,
};

/**
 * Whether `tz` names a time zone the ICU data of this Node.js knows (canonical names, aliases such
 * as `US/Eastern`, and `UTC`). `Intl.supportedValuesOf('timeZone')` lists canonical names only (not
 * `UTC`), so the test is whether `Intl.DateTimeFormat` accepts it (it throws RangeError otherwise).
 */
export function isTimeZone(tz: string): boolean {
  if (!TIME_ZONE.pattern.test(tz) || tz.length > TIME_ZONE.maxLength) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
