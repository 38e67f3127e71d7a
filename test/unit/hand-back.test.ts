/** The words of a node's hand-back (src/drain/hand-back.ts), one row per answer of releaseNode. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { handBackWording, type NotUncordoned } from '../../src/drain/hand-back.js';

describe('handBackWording', () => {
  const rows: [{ uncordoned: boolean; left?: NotUncordoned }, RegExp][] = [
    [{ uncordoned: true }, /^uncordoned$/],
    [{ uncordoned: false, left: 'wasUnschedulable' }, /it was before the plan/],
    [{ uncordoned: false, left: 'alreadySchedulable' }, /already schedulable: uncordoned by someone else/],
    [{ uncordoned: false, left: 'notClaimed' }, /no longer claimed by this plan/],
    [{ uncordoned: false, left: 'gone' }, /the node is gone/],
    [{ uncordoned: false, left: 'notAsked' }, /^left cordoned$/],
    [
      { uncordoned: false, left: 'replaced' },
      /deleted and created again under its name: the new node is not this plan's/,
    ],
    // An answer recorded before `left` existed reads as it always did (replayed runs say the same).
    [{ uncordoned: false }, /^left unschedulable: it was before the plan$/],
  ];
  for (const [answer, words] of rows)
    it(`${JSON.stringify(answer)} → ${words}`, () => assert.match(handBackWording(answer), words));
  it('only wasUnschedulable (or an old answer) says "before the plan"', () => {
    for (const left of ['alreadySchedulable', 'notClaimed', 'gone', 'notAsked', 'replaced'] as const)
      assert.doesNotMatch(handBackWording({ uncordoned: false, left }), /before the plan/);
  });
});
