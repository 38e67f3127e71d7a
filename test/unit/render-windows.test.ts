/**
 * The maintenance-window line of `drainflow watch` / `status` (src/cli/render.ts): open with its
 * end and the next start, closed with the next start, and a user pause shown next to a closed
 * window.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MaintenancePlanStatus } from '../../src/api/plan.js';
import { renderPlan, windowLine } from '../../src/cli/render.js';

const NOW = Date.parse('2026-12-01T20:00:00Z');
const plan = (status: MaintenancePlanStatus) => ({ metadata: { name: 'p', uid: 'u' }, status });

describe('the maintenance-window line', () => {
  const cases: [string, MaintenancePlanStatus['window'], string | undefined][] = [
    ['no windows', undefined, undefined],
    [
      'open, with its end and the next start',
      { open: true, currentEnd: '2026-12-01T20:10:00.000Z', nextStart: '2026-12-02T19:00:00.000Z' },
      'maintenance window open until 2026-12-01T20:10:00.000Z (in 600 s); next opens 2026-12-02T19:00:00.000Z',
    ],
    ['open, no end within a week', { open: true }, 'maintenance window open'],
    [
      'closed, the next start counted down',
      { open: false, nextStart: '2026-12-01T21:00:00.000Z' },
      'outside the maintenance windows: next opens 2026-12-01T21:00:00.000Z (in 3600 s)',
    ],
    [
      'closed, none within a week',
      { open: false },
      'outside the maintenance windows: none opens within a week',
    ],
  ];
  for (const [what, window, want] of cases)
    it(what, () => assert.equal(windowLine(window ? { window } : {}, NOW), want));

  it('a user pause outside the windows shows both', () => {
    const text = renderPlan(
      plan({
        phase: 'Paused',
        reason: 'PausedByUser',
        message: 'no new evictions until resumed',
        window: { open: false, nextStart: '2026-12-01T21:00:00.000Z' },
      }),
      NOW,
    );
    assert.match(text, /Paused \(PausedByUser\)/);
    assert.match(text, /outside the maintenance windows: next opens 2026-12-01T21:00:00.000Z \(in 3600 s\)/);
  });

  it('not shown once the plan is in a final phase', () => {
    const text = renderPlan(plan({ phase: 'Drained', window: { open: true } }), NOW);
    assert.doesNotMatch(text, /maintenance window/);
  });
});
