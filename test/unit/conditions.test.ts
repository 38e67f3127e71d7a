import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Blocker, Condition } from '../../src/api/plan.js';
import {
  DEFAULT_BLOCKER_CAP,
  findCondition,
  setCondition,
  sortAndCapBlockers,
  statusEquals,
} from '../../src/drain/conditions.js';

const T0 = '2024-05-01T12:00:00Z';
const T1 = '2024-05-01T12:05:00Z';

const progressing: Condition = {
  type: 'Progressing',
  status: 'True',
  observedGeneration: 1,
  lastTransitionTime: T0,
  reason: 'Draining',
  message: 'draining node-1',
};

describe('setCondition', () => {
  it('adds a new condition with lastTransitionTime = now', () => {
    assert.deepEqual(
      setCondition(undefined, { type: 'Blocked', status: 'False', reason: 'NotBlocked', message: '' }, T0),
      [{ type: 'Blocked', status: 'False', lastTransitionTime: T0, reason: 'NotBlocked', message: '' }],
    );
  });
  it('keeps lastTransitionTime when status is unchanged, updating reason, message, observedGeneration', () => {
    const got = setCondition(
      [progressing],
      {
        type: 'Progressing',
        status: 'True',
        reason: 'Evicting',
        message: 'evicting 3 pods',
        observedGeneration: 2,
      },
      T1,
    );
    assert.deepEqual(got, [
      {
        type: 'Progressing',
        status: 'True',
        observedGeneration: 2,
        lastTransitionTime: T0,
        reason: 'Evicting',
        message: 'evicting 3 pods',
      },
    ]);
  });
  it('changes lastTransitionTime when status changes', () => {
    const got = setCondition(
      [progressing],
      { type: 'Progressing', status: 'False', reason: 'Drained', message: 'done', observedGeneration: 1 },
      T1,
    );
    assert.deepEqual(got, [
      {
        type: 'Progressing',
        status: 'False',
        observedGeneration: 1,
        lastTransitionTime: T1,
        reason: 'Drained',
        message: 'done',
      },
    ]);
  });
  it('Unknown -> True is a transition', () => {
    const unknown: Condition = { ...progressing, status: 'Unknown' };
    assert.equal(setCondition([unknown], { ...progressing, status: 'True' }, T1)[0]?.lastTransitionTime, T1);
  });
  it('sorts by type and leaves other conditions untouched', () => {
    const paused: Condition = {
      type: 'Paused',
      status: 'False',
      lastTransitionTime: T0,
      reason: 'NotPaused',
      message: '',
    };
    const got = setCondition(
      [progressing, paused],
      { type: 'Drained', status: 'False', reason: 'Draining', message: 'x' },
      T1,
    );
    assert.deepEqual(
      got.map((c) => [c.type, c.lastTransitionTime]),
      [
        ['Drained', T1],
        ['Paused', T0],
        ['Progressing', T0],
      ],
    );
    assert.deepEqual(got[1], paused);
  });
  it('does not mutate its input', () => {
    const input = [progressing];
    const snapshot = structuredClone(input);
    setCondition(input, { type: 'Progressing', status: 'False', reason: 'R', message: 'm' }, T1);
    assert.deepEqual(input, snapshot);
  });
  it('drops observedGeneration when the update has none', () => {
    const got = setCondition(
      [progressing],
      { type: 'Progressing', status: 'True', reason: 'R', message: 'm' },
      T1,
    );
    assert.equal('observedGeneration' in got[0]!, false);
  });
  it('setting the same condition twice yields an equal status', () => {
    const upd = { type: 'Blocked', status: 'True' as const, reason: 'DisruptionBudget', message: 'pdb' };
    const once = setCondition([progressing], upd, T0);
    const twice = setCondition(once, upd, T1);
    assert.deepEqual(twice, once);
    assert.equal(statusEquals(once, twice), true);
  });
});

describe('findCondition', () => {
  it('finds by type', () => {
    assert.equal(findCondition([progressing], 'Progressing'), progressing);
  });
  it('returns undefined when absent or when there are no conditions', () => {
    assert.equal(findCondition([progressing], 'Paused'), undefined);
    assert.equal(findCondition(undefined, 'Paused'), undefined);
  });
});

function blocker(pod: string, reason: string, pdb?: string, message = 'm'): Blocker {
  return pdb === undefined ? { pod, reason, message } : { pod, pdb, reason, message };
}

describe('sortAndCapBlockers', () => {
  it('sorts by pod, then pdb (absent first), then reason, then message', () => {
    const input = [
      blocker('b/x', 'NoController'),
      blocker('a/y', 'DisruptionBudget', 'a/pdb-2'),
      blocker('a/y', 'DisruptionBudget', 'a/pdb-1'),
      blocker('a/y', 'MultiplePDBs'),
      blocker('a/y', 'EmptyDirData'),
      blocker('a/x', 'Z', undefined, 'b'),
      blocker('a/x', 'Z', undefined, 'a'),
    ];
    const got = sortAndCapBlockers(input);
    assert.deepEqual(
      got.blockers.map((b) => [b.pod, b.pdb ?? '-', b.reason, b.message]),
      [
        ['a/x', '-', 'Z', 'a'],
        ['a/x', '-', 'Z', 'b'],
        ['a/y', '-', 'EmptyDirData', 'm'],
        ['a/y', '-', 'MultiplePDBs', 'm'],
        ['a/y', 'a/pdb-1', 'DisruptionBudget', 'm'],
        ['a/y', 'a/pdb-2', 'DisruptionBudget', 'm'],
        ['b/x', '-', 'NoController', 'm'],
      ],
    );
    assert.equal(got.omitted, 0);
  });
  it('caps at 20 by default and counts the omitted', () => {
    assert.equal(DEFAULT_BLOCKER_CAP, 20);
    const input = Array.from({ length: 25 }, (_, i) =>
      blocker(`ns/pod-${String(24 - i).padStart(2, '0')}`, 'NoController'),
    );
    const got = sortAndCapBlockers(input);
    assert.equal(got.blockers.length, 20);
    assert.equal(got.omitted, 5);
    assert.equal(got.blockers[0]?.pod, 'ns/pod-00');
    assert.equal(got.blockers[19]?.pod, 'ns/pod-19');
  });
  it('honours a custom cap, including 0 and negative', () => {
    const input = [blocker('c', 'R'), blocker('a', 'R'), blocker('b', 'R')];
    assert.deepEqual(sortAndCapBlockers(input, 2), {
      blockers: [blocker('a', 'R'), blocker('b', 'R')],
      omitted: 1,
    });
    assert.deepEqual(sortAndCapBlockers(input, 0), { blockers: [], omitted: 3 });
    assert.deepEqual(sortAndCapBlockers(input, -1), { blockers: [], omitted: 3 });
    assert.deepEqual(sortAndCapBlockers([], 5), { blockers: [], omitted: 0 });
  });
  it('gives the same result for any input order and does not mutate the input', () => {
    const input = [blocker('b', 'R'), blocker('a', 'R', 'p'), blocker('a', 'Q')];
    const copy = structuredClone(input);
    assert.deepEqual(sortAndCapBlockers(input), sortAndCapBlockers([...input].reverse()));
    assert.deepEqual(input, copy);
  });
});

describe('statusEquals', () => {
  it('ignores key order', () => {
    assert.equal(statusEquals({ a: 1, b: { c: 'x', d: [1, 2] } }, { b: { d: [1, 2], c: 'x' }, a: 1 }), true);
  });
  it('ignores undefined properties', () => {
    assert.equal(statusEquals({ a: 1, nextActionAt: undefined }, { a: 1 }), true);
    assert.equal(statusEquals({ a: 1 }, { a: 1, b: { c: undefined } }), false);
    assert.equal(statusEquals({ a: 1, b: {} }, { a: 1, b: { c: undefined } }), true);
  });
  it('detects array order changes', () => {
    assert.equal(statusEquals({ nodes: ['a', 'b'] }, { nodes: ['b', 'a'] }), false);
    assert.equal(statusEquals([{ n: 1 }, { n: 2 }], [{ n: 2 }, { n: 1 }]), false);
  });
  it('detects changed, added and removed values', () => {
    assert.equal(statusEquals({ a: 1 }, { a: 2 }), false);
    assert.equal(statusEquals({ a: 1 }, { a: 1, b: 0 }), false);
    assert.equal(statusEquals({ a: 1, b: 0 }, { a: 1 }), false);
    assert.equal(statusEquals({ a: [1] }, { a: [1, 2] }), false);
    assert.equal(statusEquals({ a: '1' }, { a: 1 }), false);
    assert.equal(statusEquals({ a: null }, { a: undefined }), false);
    assert.equal(statusEquals({ a: [] }, { a: {} }), false);
    assert.equal(statusEquals({ a: {} }, { a: null }), false);
  });
  it('compares primitives and null', () => {
    assert.equal(statusEquals(null, null), true);
    assert.equal(statusEquals('x', 'x'), true);
    assert.equal(statusEquals(true, false), false);
    assert.equal(statusEquals(undefined, undefined), true);
  });
  it('treats undefined array items as null, like JSON', () => {
    assert.equal(statusEquals([undefined], [null]), true);
  });
  it('compares Dates by their JSON form', () => {
    assert.equal(statusEquals({ t: new Date(T0) }, { t: '2024-05-01T12:00:00.000Z' }), true);
    assert.equal(statusEquals({ t: new Date(T0) }, { t: new Date(T1) }), false);
  });
  it('treats a whole status rebuilt in another key order as equal', () => {
    const a = {
      phase: 'Running',
      conditions: [progressing],
      nodes: [
        { name: 'n1', phase: 'Draining', podsTotal: 3, podsEvicted: 1, blockedBy: [blocker('a/b', 'R')] },
      ],
      evictionProgress: {
        total: 3,
        evicted: 1,
        pending: 2,
        failed: 0,
        attempts: 2,
        tooManyRequests: 1,
        nextActionAt: T1,
      },
    };
    const b = {
      evictionProgress: {
        nextActionAt: T1,
        tooManyRequests: 1,
        attempts: 2,
        failed: 0,
        pending: 2,
        evicted: 1,
        total: 3,
        lastError: undefined,
      },
      nodes: [
        {
          blockedBy: [{ message: 'm', reason: 'R', pod: 'a/b' }],
          podsEvicted: 1,
          podsTotal: 3,
          phase: 'Draining',
          name: 'n1',
        },
      ],
      conditions: [{ ...progressing }],
      phase: 'Running',
    };
    assert.equal(statusEquals(a, b), true);
    assert.equal(
      statusEquals(a, { ...b, evictionProgress: { ...b.evictionProgress, nextActionAt: undefined } }),
      false,
    );
  });
});
