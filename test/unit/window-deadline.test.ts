/**
 * A plan whose first maintenance window opens after its deadline (src/drain/window-deadline.ts),
 * table-tested against the real window arithmetic (src/drain/windows.ts) at fixed instants.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseSpec, type MaintenancePlanSpecInput } from '../../src/api/plan.js';
import { windowAfterDeadline } from '../../src/drain/window-deadline.js';

/** Friday 2026-12-04 10:00 UTC; the Saturday window below opens 15 h (54,000 s) later. */
const FRIDAY_10 = Date.parse('2026-12-04T10:00:00Z');
const SATURDAY_NIGHT = [{ days: ['Sat' as const], start: '01:00', end: '05:00' }];
const spec = (over: Partial<MaintenancePlanSpecInput>) => parseSpec({ nodeNames: ['a'], ...over });

describe('first window after the deadline', () => {
  it('refused: the default 3600 s deadline, the window 15 h away, with the times and what to change', () =>
    assert.equal(
      windowAfterDeadline(spec({ windows: SATURDAY_NIGHT }), FRIDAY_10),
      "spec.windows: the first maintenance window opens at 2026-12-05T01:00:00Z, after the plan's deadline at 2026-12-04T11:00:00Z (spec.drainTimeoutSeconds 3600 s from the plan's creation, the time outside windows counting): the plan would cordon and evict nothing and end DeadlineExceeded; raise spec.drainTimeoutSeconds (more than 54000 s), or set spec.deadlineCountsOutsideWindows: false to count the deadline inside windows only",
    ));
  it('refused: a deadline exactly at the opening (nothing can start at the deadline)', () =>
    assert.match(
      windowAfterDeadline(spec({ windows: SATURDAY_NIGHT, drainTimeoutSeconds: 54000 }), FRIDAY_10) ?? '',
      /more than 54000 s/,
    ));
  const accepted: [string, Partial<MaintenancePlanSpecInput>, number][] = [
    [
      'the window opens one second before the deadline',
      { windows: SATURDAY_NIGHT, drainTimeoutSeconds: 54001 },
      FRIDAY_10,
    ],
    ['a window open at creation', { windows: SATURDAY_NIGHT }, Date.parse('2026-12-05T02:00:00Z')],
    [
      'the deadline counted inside windows only',
      { windows: SATURDAY_NIGHT, deadlineCountsOutsideWindows: false },
      FRIDAY_10,
    ],
    ['no windows (always open)', {}, FRIDAY_10],
    ['a Preflight plan (it cordons nothing)', { windows: SATURDAY_NIGHT, mode: 'Preflight' }, FRIDAY_10],
    [
      'an unknown time zone (reported by its own check)',
      { windows: [{ ...SATURDAY_NIGHT[0]!, timeZone: 'Mars/Olympus' }] },
      FRIDAY_10,
    ],
  ];
  for (const [what, over, at] of accepted)
    it(`accepted: ${what}`, () => {
      // An unknown zone does not parse through zod: build that spec by hand.
      const s =
        over.windows?.[0]?.timeZone === 'Mars/Olympus'
          ? { ...spec({}), windows: over.windows as never }
          : spec(over);
      assert.equal(windowAfterDeadline(s, at), undefined);
    });
});
