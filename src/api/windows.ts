/**
 * The maintenance-window part of the MaintenancePlan API (`spec.windows`,
 * `spec.deadlineCountsOutsideWindows`, `status.window`): the zod schemas that src/api/plan.ts merges
 * into the spec and status, and the words (reasons) the plan workflow uses for them.
 *
 * A window is a weekly recurring interval of wall-clock time in an IANA time zone: it opens on each
 * of `days` at `start` and closes at `end` the same day, or, when `end` is earlier than `start`, the
 * next day (a window over midnight is named by the day it starts). The arithmetic (DST, next start)
 * is in src/drain/windows.ts.
 *
 * Pure: zod and `Intl` only (safe to import from workflow code).
 */
import { z } from 'zod';
import { ConditionType } from './reasons.js';
import type { StringFormat } from './plan.js';

/** Days of the week, Monday first, as `spec.windows[].days` names them. */
export const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;
/** One day of the week (see {@link WEEKDAYS}). */
export type Weekday = (typeof WEEKDAYS)[number];

/** Most windows of one plan (a bound the API server needs to estimate the cost of the CEL rules). */
export const MAX_WINDOWS = 32;

/** A wall-clock time `HH:MM` on the 24-hour clock, 00:00 to 23:59, two digits each. */
export const TIME_OF_DAY: StringFormat = {
  name: 'a time of day',
  allowed: 'HH:MM on the 24-hour clock, two digits each, from 00:00 to 23:59',
  pattern: /^([01][0-9]|2[0-3]):[0-5][0-9]$/,
  maxLength: 5,
};

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

/** A zod string of a {@link StringFormat}, refused with a message naming what is allowed. */
function formatted(f: StringFormat): z.ZodString {
  return z
    .string()
    .max(f.maxLength)
    .regex(f.pattern, { message: `must be ${f.name}: ${f.allowed}` });
}

export const MaintenanceWindowSchema = z
  .object({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1)
      .max(7)
      .refine((d) => new Set(d).size === d.length, { message: 'must not name a day twice' })
      .describe(
        'Days the window opens on: Mon, Tue, Wed, Thu, Fri, Sat, Sun (each once). A window over midnight (end earlier than start) is named by the day it starts.',
      ),
    start: formatted(TIME_OF_DAY).describe('Wall-clock time the window opens, HH:MM (24-hour) in timeZone.'),
    end: formatted(TIME_OF_DAY).describe(
      'Wall-clock time the window closes, HH:MM (24-hour) in timeZone; earlier than start: the next day. Must differ from start.',
    ),
    timeZone: formatted(TIME_ZONE)
      .refine(isTimeZone, { message: 'must be a known IANA time zone name (e.g. Europe/Berlin, UTC)' })
      .default('UTC')
      .describe(
        'IANA time zone of start and end, e.g. Europe/Berlin (default UTC). On a DST change day a start or end in the skipped hour moves forward by the gap; one in the repeated hour means its first occurrence.',
      ),
  })
  .strict()
  .refine((w) => w.start !== w.end, { message: 'end must differ from start', path: ['end'] });
/** One `spec.windows[]` item (defaults applied). */
export type MaintenanceWindow = z.infer<typeof MaintenanceWindowSchema>;

/** The spec fields of maintenance windows (merged into the MaintenancePlan spec). */
export const WindowFields = {
  windows: z
    .array(MaintenanceWindowSchema)
    .max(MAX_WINDOWS)
    .optional()
    .describe(
      `Maintenance windows (at most ${MAX_WINDOWS}): cordons, evictions and node drains start only while one is open; when the last open one closes the plan pauses (calls in flight finish, the nodes being drained stay cordoned) and resumes when the next opens. Absent or empty: always open.`,
    ),
  deadlineCountsOutsideWindows: z
    .boolean()
    .default(true)
    .describe(
      'With windows: whether the time outside the windows counts toward drainTimeoutSeconds and nodeDrainTimeoutSeconds. false: the deadlines count time inside windows only (a deadline is pushed back by the time spent outside windows, so it always falls inside one).',
    ),
};

export const WindowStatusSchema = z
  .object({
    open: z.boolean().describe('Whether a maintenance window is open now.'),
    currentEnd: z
      .string()
      .optional()
      .describe('RFC 3339 time the open window closes (absent when closed, or not within a week).'),
    nextStart: z.string().optional().describe('RFC 3339 time the next window opens.'),
  })
  .strict();
/** status.window: where the plan stands against its maintenance windows. */
export type WindowStatus = z.infer<typeof WindowStatusSchema>;

/** Condition type telling whether a maintenance window is open (plans with spec.windows only). */
export const WINDOW_CONDITION = ConditionType.InMaintenanceWindow;
