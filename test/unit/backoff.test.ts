import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { backoffSeconds } from '../../src/drain/backoff.js';
import { parseHttpDate, parseRetryAfter } from '../../src/k8s/retry-after.js';

const DEFAULTS = { initialSeconds: 5, maxSeconds: 120 };
// 1994-11-06T08:49:37Z, the RFC 9110 example date.
const RFC_EXAMPLE_MS = Date.UTC(1994, 10, 6, 8, 49, 37);

describe('backoffSeconds', () => {
  it('defaults give 5, 10, 20, 40, 80, 120, 120', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7].map((a) => backoffSeconds(a, DEFAULTS)),
      [5, 10, 20, 40, 80, 120, 120],
    );
  });
  it('stays at the cap for huge attempts (no overflow to Infinity/NaN)', () => {
    assert.equal(backoffSeconds(2000, DEFAULTS), 120);
    assert.equal(backoffSeconds(Number.MAX_SAFE_INTEGER, DEFAULTS), 120);
  });
  it('treats attempts below 1, fractions and NaN as attempt 1 / floor', () => {
    assert.equal(backoffSeconds(0, DEFAULTS), 5);
    assert.equal(backoffSeconds(-3, DEFAULTS), 5);
    assert.equal(backoffSeconds(Number.NaN, DEFAULTS), 5);
    assert.equal(backoffSeconds(2.9, DEFAULTS), 10);
  });
  it('caps at max when initial exceeds it', () => {
    assert.equal(backoffSeconds(1, { initialSeconds: 300, maxSeconds: 60 }), 60);
  });
  it('uses custom bounds', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((a) => backoffSeconds(a, { initialSeconds: 1, maxSeconds: 5 })),
      [1, 2, 4, 5],
    );
  });
});

describe('parseRetryAfter', () => {
  const now = RFC_EXAMPLE_MS;
  const cases: Array<[string | undefined, number | undefined]> = [
    [undefined, undefined],
    ['', undefined],
    ['   ', undefined],
    ['10', 10],
    ['0', 0],
    [' 7 ', 7],
    ['007', 7],
    ['120', 120],
    ['1.5', undefined],
    ['-1', undefined],
    ['+5', undefined],
    ['10s', undefined],
    ['0x10', undefined],
    ['1e3', undefined],
    // IMF-fixdate, 120 s after now.
    ['Sun, 06 Nov 1994 08:51:37 GMT', 120],
    // Equal to now and in the past: 0.
    ['Sun, 06 Nov 1994 08:49:37 GMT', 0],
    ['Sun, 06 Nov 1994 08:00:00 GMT', 0],
    // One day later.
    ['Mon, 07 Nov 1994 08:49:37 GMT', 86400],
    // Obsolete RFC 850 form (two-digit year) and asctime form, 60 s after now.
    ['Sunday, 06-Nov-94 08:50:37 GMT', 60],
    ['Sun Nov  6 08:50:37 1994', 60],
    ['Sun Nov 06 08:50:37 1994', 60],
    // Not HTTP-dates.
    ['Sun, 06 Nov 1994 08:51:37 UTC', undefined],
    ['1994-11-06T08:51:37Z', undefined],
    ['Sun, 31 Feb 1994 08:51:37 GMT', undefined],
    ['Sun, 06 Foo 1994 08:51:37 GMT', undefined],
    ['Xyz, 06 Nov 1994 08:51:37 GMT', undefined],
    ['Sun, 06 Nov 1994 24:00:00 GMT', undefined],
    ['Sun, 6 Nov 1994 08:51:37 GMT', undefined],
  ];
  for (const [value, want] of cases) {
    it(`${JSON.stringify(value)} -> ${String(want)}`, () => {
      assert.equal(parseRetryAfter(value, now), want);
    });
  }
  it('rounds a sub-second remainder up', () => {
    assert.equal(parseRetryAfter('Sun, 06 Nov 1994 08:49:40 GMT', now + 500), 3);
  });
});

describe('parseHttpDate', () => {
  it('parses the three RFC 9110 forms to the same instant', () => {
    const want = Date.UTC(1994, 10, 6, 8, 49, 37);
    assert.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', 0), want);
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', Date.UTC(2000, 0, 1)), want);
    assert.equal(parseHttpDate('Sun Nov  6 08:49:37 1994', 0), want);
  });
  it('interprets a two-digit rfc850 year relative to now (RFC 9110 §5.6.7)', () => {
    const now = Date.UTC(2024, 0, 1);
    assert.equal(parseHttpDate('Friday, 01-Jan-27 00:00:00 GMT', now), Date.UTC(2027, 0, 1));
    // 2094 would be more than 50 years ahead, so it is 1994.
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', now), Date.UTC(1994, 10, 6, 8, 49, 37));
  });
  it('accepts 29 Feb only in leap years', () => {
    assert.equal(parseHttpDate('Thu, 29 Feb 2024 00:00:00 GMT', 0), Date.UTC(2024, 1, 29));
    assert.equal(parseHttpDate('Wed, 29 Feb 2023 00:00:00 GMT', 0), undefined);
  });
});
