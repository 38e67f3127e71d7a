/**
 * The bench's estimate figure (bench/lib/runs.ts `etaFigures`): status.estimatedCompletion read when
 * half the pods were gone, against the real end.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { etaFigures } from '../../bench/lib/runs.js';

const T0 = Date.parse('2026-12-01T10:00:00Z');

describe('bench: the estimate at half-way', () => {
  it('|estimate − end| / time left, in %', () =>
    assert.deepEqual(
      etaFigures(T0, { atMs: T0 + 100_000, estimate: new Date(T0 + 190_000).toISOString() }, T0 + 200_000),
      { halfAtSeconds: 100, endSeconds: 200, estimatedEndSeconds: 190, errorPercent: 10 },
    ));
  it('an estimate too late counts as much as one too early', () =>
    assert.equal(
      etaFigures(T0, { atMs: T0 + 100_000, estimate: new Date(T0 + 250_000).toISOString() }, T0 + 200_000)
        .errorPercent,
      50,
    ));
  it('no estimate at half-way: no error figure', () =>
    assert.deepEqual(etaFigures(T0, { atMs: T0 + 100_000 }, T0 + 200_000), {
      halfAtSeconds: 100,
      endSeconds: 200,
    }));
});
