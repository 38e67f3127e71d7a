/**
 * The calendar words of maintenance windows (`spec.windows[]`): the days of the week and IANA time
 * zone names. src/api/windows.ts builds the zod schemas from them; src/drain/windows.ts does the
 * arithmetic.
 *
 * No zod: workflow code imports this module without evaluating the schemas (see src/api/bounds.ts
 * for why that matters). `Intl` only, which is deterministic within one worker's ICU data.
 */
import { TIME_ZONE } from './formats.js';

/** Days of the week, Monday first, as `spec.windows[].days` names them. */
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
/** One day of the week (see {@link WEEKDAYS}). */
export type Weekday = (typeof WEEKDAYS)[number];

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
