/**
 * Tables of the maintenance-window arithmetic (src/drain/windows.ts): wall-clock times in IANA time
 * zones (DST change days of Europe/Berlin and America/New_York included), windows over midnight,
 * inside/outside, the next window, merged windows, the windowed deadline, and the time zone checks.
 * The expected instants are written out in UTC by hand from the zones' published rules (Berlin:
 * CET +01:00, CEST +02:00 from 2026-03-29 01:00Z to 2026-10-25 01:00Z; New York: EST −05:00, EDT
 * −04:00 from 2026-03-08 07:00Z to 2026-11-01 06:00Z).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isTimeZone } from '../../src/api/calendar.js';
import { MaintenanceWindowSchema, type MaintenanceWindow } from '../../src/api/windows.js';
import {
  WINDOW_HORIZON_MS,
  occurrences,
  windowState,
  windowedDeadline,
  windowsError,
  zonedTimeToUtc,
} from '../../src/drain/windows.js';

const t = (iso: string): number => Date.parse(iso);
const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z');
const win = (
  w: Partial<MaintenanceWindow> & Pick<MaintenanceWindow, 'days' | 'start' | 'end'>,
): MaintenanceWindow => MaintenanceWindowSchema.parse(w);

describe('zonedTimeToUtc: a wall-clock time in a time zone', () => {
  const cases: [string, string, [number, number, number, number, number], string][] = [
    ['UTC', 'plain', [2026, 12, 1, 19, 5], '2026-12-01T19:05:00Z'],
    ['Europe/Berlin', 'winter (CET)', [2026, 1, 15, 22, 0], '2026-01-15T21:00:00Z'],
    ['Europe/Berlin', 'summer (CEST)', [2026, 7, 15, 22, 0], '2026-07-15T20:00:00Z'],
    ['Europe/Berlin', 'spring day, before the gap', [2026, 3, 29, 1, 30], '2026-03-29T00:30:00Z'],
    [
      'Europe/Berlin',
      'spring day, in the skipped hour: moved forward',
      [2026, 3, 29, 2, 30],
      '2026-03-29T01:30:00Z',
    ],
    ['Europe/Berlin', 'spring day, at the gap end', [2026, 3, 29, 3, 0], '2026-03-29T01:00:00Z'],
    [
      'Europe/Berlin',
      'autumn day, repeated hour: first occurrence',
      [2026, 10, 25, 2, 30],
      '2026-10-25T00:30:00Z',
    ],
    ['Europe/Berlin', 'autumn day, after the repeat', [2026, 10, 25, 3, 30], '2026-10-25T02:30:00Z'],
    ['America/New_York', 'spring day, skipped hour', [2026, 3, 8, 2, 30], '2026-03-08T07:30:00Z'],
    [
      'America/New_York',
      'autumn day, repeated hour: first (EDT)',
      [2026, 11, 1, 1, 30],
      '2026-11-01T05:30:00Z',
    ],
    ['America/New_York', 'autumn day, after', [2026, 11, 1, 2, 30], '2026-11-01T07:30:00Z'],
    ['Asia/Kolkata', 'half-hour offset', [2026, 5, 1, 9, 0], '2026-05-01T03:30:00Z'],
    ['US/Eastern', 'an alias', [2026, 1, 2, 9, 0], '2026-01-02T14:00:00Z'],
    ['Europe/Berlin', 'day overflow (Jan 32 = Feb 1)', [2026, 1, 32, 0, 0], '2026-01-31T23:00:00Z'],
  ];
  for (const [tz, what, [y, m, d, h, min], want] of cases)
    it(`${tz} ${y}-${m}-${d} ${h}:${min}: ${what}`, () => {
      assert.equal(iso(zonedTimeToUtc(tz, y, m, d, h, min)), want);
    });
});

describe('occurrences: how long a window lasts on DST change days', () => {
  const cases: [string, MaintenanceWindow, string, string, string][] = [
    [
      'Berlin Sun 01:00-04:00 on the spring day: 2 h',
      win({ days: ['Sun'], start: '01:00', end: '04:00', timeZone: 'Europe/Berlin' }),
      '2026-03-29T00:00:00Z',
      '2026-03-29T00:00:00Z',
      '2026-03-29T02:00:00Z',
    ],
    [
      'Berlin Sun 01:00-04:00 on the autumn day: 4 h',
      win({ days: ['Sun'], start: '01:00', end: '04:00', timeZone: 'Europe/Berlin' }),
      '2026-10-24T23:00:00Z',
      '2026-10-24T23:00:00Z',
      '2026-10-25T03:00:00Z',
    ],
    [
      'Berlin Sat 22:00-06:00 over midnight into the spring day: 7 h',
      win({ days: ['Sat'], start: '22:00', end: '06:00', timeZone: 'Europe/Berlin' }),
      '2026-03-28T20:00:00Z',
      '2026-03-28T21:00:00Z',
      '2026-03-29T04:00:00Z',
    ],
    [
      'New York Sat 23:00-03:00 over midnight into the autumn day: 5 h',
      win({ days: ['Sat'], start: '23:00', end: '03:00', timeZone: 'America/New_York' }),
      '2026-10-31T12:00:00Z',
      '2026-11-01T03:00:00Z',
      '2026-11-01T08:00:00Z',
    ],
  ];
  for (const [what, w, from, start, end] of cases)
    it(what, () => {
      const first = occurrences(w, t(from), t(from) + 86_400_000)[0]!;
      assert.deepEqual([iso(first.startMs), iso(first.endMs)], [start, end]);
    });

  it('a window wholly in the skipped hour does not open that day', () => {
    const w = win({ days: ['Sun'], start: '02:30', end: '03:00', timeZone: 'Europe/Berlin' });
    const got = occurrences(w, t('2026-03-28T00:00:00Z'), t('2026-04-06T00:00:00Z')).map((i) =>
      iso(i.startMs),
    );
    assert.deepEqual(got, ['2026-04-05T00:30:00Z'], 'only the next Sunday (02:30 CEST)');
  });
});

describe('windowState: inside, outside, next window', () => {
  const weekdays9to5NY = win({
    days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'],
    start: '09:00',
    end: '17:00',
    timeZone: 'America/New_York',
  });
  const friNight = win({ days: ['Fri'], start: '22:00', end: '06:00' }); // UTC, over midnight
  const cases: [
    string,
    MaintenanceWindow[],
    string,
    { open: boolean; currentEnd?: string; nextStart?: string; nextChange: string },
  ][] = [
    [
      'over midnight, after midnight: open until Sat 06:00, next Fri 22:00',
      [friNight],
      '2026-12-05T03:00:00Z',
      {
        open: true,
        currentEnd: '2026-12-05T06:00:00Z',
        nextStart: '2026-12-11T22:00:00Z',
        nextChange: '2026-12-05T06:00:00Z',
      },
    ],
    [
      'over midnight, the hour before: closed, opens Fri 22:00',
      [friNight],
      '2026-12-04T21:00:00Z',
      { open: false, nextStart: '2026-12-04T22:00:00Z', nextChange: '2026-12-04T22:00:00Z' },
    ],
    [
      'at the start: open',
      [friNight],
      '2026-12-04T22:00:00Z',
      {
        open: true,
        currentEnd: '2026-12-05T06:00:00Z',
        nextStart: '2026-12-11T22:00:00Z',
        nextChange: '2026-12-05T06:00:00Z',
      },
    ],
    [
      'at the end: closed',
      [friNight],
      '2026-12-05T06:00:00Z',
      { open: false, nextStart: '2026-12-11T22:00:00Z', nextChange: '2026-12-11T22:00:00Z' },
    ],
    [
      'New York weekdays, Saturday noon: closed until Monday 09:00 EST',
      [weekdays9to5NY],
      '2026-12-05T17:00:00Z',
      { open: false, nextStart: '2026-12-07T14:00:00Z', nextChange: '2026-12-07T14:00:00Z' },
    ],
    [
      'New York weekdays, Friday 16:00 EDT: open until 17:00, next Monday',
      [weekdays9to5NY],
      '2026-06-05T20:00:00Z',
      {
        open: true,
        currentEnd: '2026-06-05T21:00:00Z',
        nextStart: '2026-06-08T13:00:00Z',
        nextChange: '2026-06-05T21:00:00Z',
      },
    ],
    [
      'New York weekdays, the Monday after the spring change: 09:00 EDT',
      [weekdays9to5NY],
      '2026-03-07T12:00:00Z',
      { open: false, nextStart: '2026-03-09T13:00:00Z', nextChange: '2026-03-09T13:00:00Z' },
    ],
    [
      'adjoining windows merge: open until the second one ends',
      [
        win({ days: ['Mon'], start: '08:00', end: '12:00' }),
        win({ days: ['Mon'], start: '12:00', end: '14:00' }),
      ],
      '2026-11-30T10:00:00Z',
      {
        open: true,
        currentEnd: '2026-11-30T14:00:00Z',
        nextStart: '2026-12-07T08:00:00Z',
        nextChange: '2026-11-30T14:00:00Z',
      },
    ],
    [
      'two zones: Berlin closed at 09:00Z, New York opens at 14:00Z',
      [
        win({ days: ['Tue'], start: '09:00', end: '10:00', timeZone: 'Europe/Berlin' }),
        win({ days: ['Tue'], start: '09:00', end: '10:00', timeZone: 'America/New_York' }),
      ],
      '2026-12-01T10:00:00Z',
      { open: false, nextStart: '2026-12-01T14:00:00Z', nextChange: '2026-12-01T14:00:00Z' },
    ],
  ];
  for (const [what, windows, now, want] of cases)
    it(what, () => {
      const s = windowState(windows, t(now));
      assert.deepEqual(
        {
          open: s.open,
          currentEnd: iso(s.currentEndMs),
          nextStart: iso(s.nextStartMs),
          nextChange: iso(s.nextChangeMs),
        },
        { currentEnd: undefined, nextStart: undefined, ...want },
      );
    });

  it('no windows: always open, nothing to wait for but the horizon', () => {
    const now = t('2026-12-01T00:00:00Z');
    assert.deepEqual(windowState([], now), { open: true, nextChangeMs: now + WINDOW_HORIZON_MS });
  });

  it('windows covering every hour: open, no known end, ask again at the horizon', () => {
    const now = t('2026-12-01T00:00:00Z');
    const all = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as MaintenanceWindow['days'];
    const s = windowState(
      [win({ days: all, start: '00:00', end: '12:00' }), win({ days: all, start: '12:00', end: '00:00' })],
      now,
    );
    assert.deepEqual(s, { open: true, nextChangeMs: now + WINDOW_HORIZON_MS });
  });
});

describe('windowedDeadline: only time inside windows counts', () => {
  const daily = win({
    days: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'],
    start: '09:00',
    end: '10:00',
  });
  const cases: [string, MaintenanceWindow[], string, number, string][] = [
    ['no windows: plain addition', [], '2026-11-30T08:00:00Z', 5400, '2026-11-30T09:30:00Z'],
    [
      'from before a window, 90 min: the next day 09:30',
      [daily],
      '2026-11-30T08:00:00Z',
      5400,
      '2026-12-01T09:30:00Z',
    ],
    [
      'from inside, 30 min left: ends with the window',
      [daily],
      '2026-11-30T09:30:00Z',
      1800,
      '2026-11-30T10:00:00Z',
    ],
    [
      'from inside, 31 min: a minute into the next day',
      [daily],
      '2026-11-30T09:30:00Z',
      1860,
      '2026-12-01T09:01:00Z',
    ],
    [
      'Berlin Sundays 01:00-04:00, 3 h: 2 h on the spring day, 1 h the next Sunday from 01:00 CEST',
      [win({ days: ['Sun'], start: '01:00', end: '04:00', timeZone: 'Europe/Berlin' })],
      '2026-03-28T00:00:00Z',
      3 * 3600,
      '2026-04-05T00:00:00Z',
    ],
  ];
  for (const [what, windows, from, seconds, want] of cases)
    it(what, () => assert.equal(iso(windowedDeadline(windows, t(from), seconds * 1000)), want));
});

describe('time zone checks', () => {
  for (const [tz, ok] of [
    ['UTC', true],
    ['Europe/Berlin', true],
    ['America/Argentina/Buenos_Aires', true],
    ['US/Eastern', true],
    ['Etc/GMT+1', true],
    ['Mars/Olympus_Mons', false],
    ['Europe/', false],
    ['', false],
    ['Europe/Berlin ', false],
  ] as const)
    it(`${JSON.stringify(tz)} is ${ok ? '' : 'not '}a time zone`, () => assert.equal(isTimeZone(tz), ok));

  it('windowsError names the window and the zone', () => {
    const w = {
      days: ['Mon'],
      start: '09:00',
      end: '10:00',
      timeZone: 'Mars/Olympus_Mons',
    } as MaintenanceWindow;
    assert.equal(windowsError([win({ days: ['Mon'], start: '09:00', end: '10:00' })]), undefined);
    assert.match(
      windowsError([win({ days: ['Mon'], start: '09:00', end: '10:00' }), w])!,
      /^spec\.windows\[1\]\.timeZone: unknown time zone "Mars\/Olympus_Mons"/,
    );
  });
});

describe('MaintenanceWindowSchema refuses bad windows with the field named', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a bad day', { days: ['Monday'], start: '09:00', end: '10:00' }, /days/],
    ['a day twice', { days: ['Mon', 'Mon'], start: '09:00', end: '10:00' }, /must not name a day twice/],
    ['no days', { days: [], start: '09:00', end: '10:00' }, /days/],
    ['25:00', { days: ['Mon'], start: '25:00', end: '10:00' }, /start.*must be a time of day/s],
    ['9:5', { days: ['Mon'], start: '09:00', end: '9:5' }, /end.*must be a time of day/s],
    ['24:00', { days: ['Mon'], start: '09:00', end: '24:00' }, /end.*must be a time of day/s],
    ['start == end', { days: ['Mon'], start: '09:00', end: '09:00' }, /end.*must differ from start/s],
    [
      'an unknown zone',
      { days: ['Mon'], start: '09:00', end: '10:00', timeZone: 'Mars/Olympus_Mons' },
      /timeZone.*known IANA/s,
    ],
    ['an unknown field', { days: ['Mon'], start: '09:00', end: '10:00', tz: 'UTC' }, /tz/],
  ];
  for (const [what, w, re] of cases)
    it(what, () => {
      const r = MaintenanceWindowSchema.safeParse(w);
      assert.equal(r.success, false);
      assert.match(r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '), re);
    });
  it('defaults the time zone to UTC', () => {
    assert.equal(win({ days: ['Mon'], start: '09:00', end: '10:00' }).timeZone, 'UTC');
  });
});
