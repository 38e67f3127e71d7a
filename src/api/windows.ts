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
 * Pure: zod and `Intl` only. Workflow code takes the calendar words from src/api/calendar.ts and
 * only types from here (a test keeps zod out of the workflow bundle).
 */
import { z } from 'zod';
import { TIME_OF_DAY, TIME_ZONE, type StringFormat } from './formats.js';
import { WEEKDAYS, isTimeZone } from './calendar.js';

/** Most windows of one plan (a bound the API server needs to estimate the cost of the CEL rules). */
export const MAX_WINDOWS = 32;

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
