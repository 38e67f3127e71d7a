/**
 * The words of a node paused before its claim (src/drain/node-drain.ts `pausedBeforeClaim`): held by
 * another plan at the last try → Waiting/NodeHeldByOtherPlan naming it and the pause; not tried yet
 * → Paused/PausedByUser.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialNodeState, pausedBeforeClaim, type NodeDrainState } from '../../src/drain/node-drain.js';

describe('pausedBeforeClaim', () => {
  const cases: { name: string; before: Partial<NodeDrainState>; want: [string, string, string] }[] = [
    {
      name: 'started paused, never tried: Paused, not cordoned until resumed',
      before: {},
      want: ['Paused', 'PausedByUser', 'paused before the node was claimed: not cordoned until resumed'],
    },
    {
      name: 'held by another plan at the last try: Waiting, naming that plan and the pause',
      before: {
        phase: 'Waiting',
        reason: 'NodeHeldByOtherPlan',
        message: 'node n1 is held by plan uid-a',
        heldBy: 'uid-a',
        claimRounds: 2,
      },
      want: [
        'Waiting',
        'NodeHeldByOtherPlan',
        'node n1 was held by plan uid-a at the last try; paused: not claimed (cordoned) until resumed, then tried again at once',
      ],
    },
    {
      name: 'continued as new while paused and held: the same words from the carried state',
      before: {
        phase: 'Waiting',
        reason: 'NodeHeldByOtherPlan',
        message:
          'node n1 was held by plan uid-a at the last try; paused: not claimed (cordoned) until resumed, then tried again at once',
        heldBy: 'uid-a',
      },
      want: [
        'Waiting',
        'NodeHeldByOtherPlan',
        'node n1 was held by plan uid-a at the last try; paused: not claimed (cordoned) until resumed, then tried again at once',
      ],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const s = { ...initialNodeState('n1', 0, true), ...c.before };
      pausedBeforeClaim(s);
      assert.deepEqual([s.phase, s.reason, s.message], c.want);
      assert.equal(s.claimed, false, 'nothing claimed');
      assert.equal(s.claimRounds, c.before.claimRounds ?? 0, 'the backoff is kept');
    });
});
