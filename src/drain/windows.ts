/**
 * Maintenance-window arithmetic (`spec.windows`): whether a window is open at an instant, when the
 * open one closes, when the next one opens, and a deadline that counts time inside windows only.
 * Times are ms since the epoch (UTC instants); a window's wall-clock times are read in its IANA time
 * zone.
 *
 * PURE and DETERMINISTIC, so the plan workflow calls it directly (no activity, no side effect):
 * - The only source of time-zone knowledge is `Intl.DateTimeFormat` with an explicit `timeZone`,
 *   asked about an explicit instant. It never reads the process's default zone, the clock or the
 *   system's tz database: official Node.js builds answer from the full ICU data compiled into the
 *   binary, tzdata included (`process.versions.tz`: 2026e in Node 24.22.3), so the same Node.js
 *   build gives the same answers on every worker, on every replay.
 * - What could differ is a worker on a Node.js with other tzdata, and only for instants where a zone's
 *   rules changed between the two releases (rare: a government moving its DST dates at short
 *   notice). Replaying a history across such a change may see a window open where it was recorded
 *   closed and take another branch: a nondeterminism error, the workflow task retried until a worker
 *   with the recorded data runs it. Computing the windows in an activity would make replay immune,
 *   at the cost of one activity per boundary and one more moving part; instead run one Node.js build
 *   across a namespace's workers and treat its upgrade (which may bring new tzdata) like a change of
 *   workflow code: between plans with windows, or with the old workers kept for the open ones.
 *
 * DST change days (the rules of `Temporal.ZonedDateTime`'s `compatible` disambiguation): a wall-clock
 * time in the skipped hour (spring forward) means the instant the same distance after the gap's start
 * (Europe/Berlin 2026-03-29 02:30 → 03:30 CEST); a time in the repeated hour (fall back) means its
 * first occurrence (2026-10-25 02:30 → 02:30 CEST, 00:30Z). So a window 01:00–04:00 lasts 2 h on the
 * spring day and 4 h on the autumn day, as a wall clock would tell. A window whose end falls at or
 * before its start after these rules (it lies wholly in the skipped hour) does not open that day.
 */
import { WEEKDAYS, isTimeZone, type Weekday } from '../api/calendar.js';
import type { MaintenanceWindow } from '../api/windows.js';

const DAY_MS = 86_400_000;
/** How far ahead {@link windowState} looks for the next window, ms (a week and a day: every window recurs weekly). */
export const WINDOW_HORIZON_MS = 8 * DAY_MS;
/** How far ahead {@link windowedDeadline} counts, ms (ten years): a deadline further out is put there. */
export const MAX_WINDOWED_DEADLINE_MS = 3653 * DAY_MS;

/** Where an instant stands against the windows (see {@link windowState}). */
export interface WindowState {
  /** A window is open at the instant. */
  open: boolean;
  /** When open: when the open window (merged with any window overlapping or adjoining it) closes; absent when not within the horizon. */
  currentEndMs?: number;
  /** When the next window opens (after the current one when open); absent when none within the horizon. */
  nextStartMs?: number;
  /** When to ask again: the next boundary, or the end of the horizon. Always after the instant. */
  nextChangeMs: number;
}

/** One occurrence of a window: the instants it opens and closes, `startMs < endMs`. */
export interface Interval {
  startMs: number;
  endMs: number;
}

/** Wall-clock fields of an instant in a time zone. */
interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** A formatter for `tz` (cached: building one is the slow part; the cache only holds immutable objects). */
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The wall clock in `tz` at instant `ms`. */
function wallClock(ms: number, tz: string): WallClock {
  const out: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(ms)) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return {
    year: out.year!,
    month: out.month!,
    day: out.day!,
    hour: out.hour! % 24,
    minute: out.minute!,
    second: out.second!,
  };
}

/** The UTC offset of `tz` at instant `ms`, ms (local minus UTC; +3600000 for CET). */
export function offsetMs(ms: number, tz: string): number {
  const w = wallClock(ms, tz);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of wall-clock time `hour:minute` on local date `year-month-day` in `tz`, with the
 * `compatible` rules of the module comment on DST change days. Date fields may overflow (day 32 is
 * the next month's first), as in `Date.UTC`.
 */
export function zonedTimeToUtc(
  tz: string,
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  // The offsets a day before and after: a zone changes its offset at most once within two days.
  const before = offsetMs(wall - DAY_MS, tz);
  const after = offsetMs(wall + DAY_MS, tz);
  const matches = [...new Set([before, after])]
    .map((o) => wall - o)
    .filter((t) => offsetMs(t, tz) === wall - t)
    .sort((a, b) => a - b);
  // Repeated hour: both match, the earlier is the first occurrence. Skipped hour: none matches;
  // reading the wall time with the offset before the gap lands the same distance after it.
  return matches[0] ?? wall - before;
}

/** The weekday of a civil date (proleptic Gregorian; pure arithmetic on `Date.UTC`). */
function weekdayOf(year: number, month: number, day: number): Weekday {
  const sundayFirst = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  return WEEKDAYS[(sundayFirst + 6) % 7]!;
}

function parseTime(hhmm: string): { hour: number; minute: number } {
  const [h, m] = hhmm.split(':').map(Number);
  return { hour: h!, minute: m! };
}

/**
 * The occurrences of one window that may overlap `[fromMs, toMs)`: for every local date in its
 * zone from the day before `fromMs` to the day after `toMs` whose weekday is in `days`. Sorted by
 * start; an occurrence that is empty after the DST rules is left out.
 */
export function occurrences(w: MaintenanceWindow, fromMs: number, toMs: number): Interval[] {
  const tz = w.timeZone;
  const s = parseTime(w.start);
  const e = parseTime(w.end);
  const overMidnight = e.hour * 60 + e.minute <= s.hour * 60 + s.minute;
  const first = wallClock(fromMs, tz);
  const days = new Set(w.days);
  const out: Interval[] = [];
  // Walk civil dates (noon UTC of each date keeps Date.UTC arithmetic away from any edge).
  const firstDate = Date.UTC(first.year, first.month - 1, first.day, 12) - DAY_MS;
  for (let d = firstDate; d <= toMs + 2 * DAY_MS; d += DAY_MS) {
    const c = new Date(d);
    const [y, m, day] = [c.getUTCFullYear(), c.getUTCMonth() + 1, c.getUTCDate()];
    if (!days.has(weekdayOf(y, m, day))) continue;
    const startMs = zonedTimeToUtc(tz, y, m, day, s.hour, s.minute);
    const endMs = zonedTimeToUtc(tz, y, m, day + (overMidnight ? 1 : 0), e.hour, e.minute);
    if (endMs <= startMs || endMs <= fromMs || startMs >= toMs) continue;
    out.push({ startMs, endMs });
  }
  return out;
}

/** The occurrences of all windows within `[fromMs, toMs)`, merged where they overlap or adjoin, sorted. */
export function mergedOccurrences(
  windows: readonly MaintenanceWindow[],
  fromMs: number,
  toMs: number,
): Interval[] {
  const all = windows.flatMap((w) => occurrences(w, fromMs, toMs)).sort((a, b) => a.startMs - b.startMs);
  const out: Interval[] = [];
  for (const i of all) {
    const last = out.at(-1);
    if (last && i.startMs <= last.endMs) last.endMs = Math.max(last.endMs, i.endMs);
    else out.push({ ...i });
  }
  return out;
}

/**
 * Where instant `nowMs` stands against `windows`: open or not, when the open window closes, when the
 * next one opens, and when to ask again ({@link WindowState}). No windows: always open, nothing to
 * wait for (`nextChangeMs` is the horizon's end).
 * @throws RangeError when a window names a time zone this Node.js does not know (callers check
 *   {@link windowsError} first).
 */
export function windowState(windows: readonly MaintenanceWindow[], nowMs: number): WindowState {
  const horizon = nowMs + WINDOW_HORIZON_MS;
  if (windows.length === 0) return { open: true, nextChangeMs: horizon };
  const merged = mergedOccurrences(windows, nowMs, horizon);
  const i = merged.findIndex((x) => x.endMs > nowMs);
  if (i < 0) return { open: false, nextChangeMs: horizon };
  const cur = merged[i]!;
  if (cur.startMs > nowMs) return { open: false, nextStartMs: cur.startMs, nextChangeMs: cur.startMs };
  // Open. An end at the horizon may continue beyond it (adjoining windows): not a known end.
  const endKnown = cur.endMs < horizon;
  const next = merged[i + 1];
  return {
    open: true,
    ...(endKnown ? { currentEndMs: cur.endMs } : {}),
    ...(next ? { nextStartMs: next.startMs } : {}),
    nextChangeMs: Math.min(cur.endMs, horizon),
  };
}

/**
 * The instant at which `budgetMs` of time inside `windows` has passed since `fromMs` (time outside
 * them does not count): the deadline of `spec.deadlineCountsOutsideWindows: false`. No windows:
 * `fromMs + budgetMs`. At most {@link MAX_WINDOWED_DEADLINE_MS} after `fromMs`.
 */
export function windowedDeadline(
  windows: readonly MaintenanceWindow[],
  fromMs: number,
  budgetMs: number,
): number {
  if (windows.length === 0) return fromMs + budgetMs;
  const limit = fromMs + MAX_WINDOWED_DEADLINE_MS;
  let left = budgetMs;
  let t = fromMs;
  while (t < limit) {
    const to = Math.min(t + 28 * DAY_MS, limit);
    for (const i of mergedOccurrences(windows, t, to)) {
      const start = Math.max(i.startMs, t);
      const end = Math.min(i.endMs, to);
      if (end <= start) continue;
      if (end - start >= left) return start + left;
      left -= end - start;
    }
    t = to;
  }
  return limit;
}

/**
 * What is wrong with `windows` that the CRD cannot tell (an unknown time zone), in words naming
 * the field (`spec.windows[1].timeZone: ...`); undefined when nothing is.
 */
export function windowsError(windows: readonly MaintenanceWindow[]): string | undefined {
  const bad = windows.findIndex((w) => !isTimeZone(w.timeZone));
  if (bad < 0) return undefined;
  return `spec.windows[${bad}].timeZone: unknown time zone "${windows[bad]!.timeZone}" (the IANA time zone data of this worker's Node.js does not name it)`;
}
