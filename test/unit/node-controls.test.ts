/**
 * Table tests of the node's controls (src/drain/node/controls.ts): pause, resume, abort, release;
 * a pause or resume older than the newest plan generation the node has seen is stale
 * (`isStaleControl`); the words of a node paused before its claim (`pausedBeforeClaim`: held by
 * another plan at the last try → Waiting/NodeHeldByOtherPlan naming it and the pause; not tried yet
 * → Paused/PausedByUser). No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyControl,
  isStaleControl,
  type NodeControlAction,
  pausedBeforeClaim,
} from '../../src/drain/node/controls.js';
import { initialNodeState, type NodeDrainState } from '../../src/drain/node/state.js';
import { anObservation, aPod, DEADLINE, Drain } from '../helpers/node-drain-fixtures.js';

describe('applyControl', () => {
  const cases: { actions: ('pause' | 'resume' | 'abort')[]; paused: boolean; aborted: boolean }[] = [
    { actions: ['pause'], paused: true, aborted: false },
    { actions: ['pause', 'resume'], paused: false, aborted: false },
    { actions: ['abort', 'resume'], paused: false, aborted: true },
    { actions: ['abort', 'pause'], paused: true, aborted: true },
  ];
  for (const c of cases) {
    it(c.actions.join(' → '), () => {
      const s = initialNodeState('n', DEADLINE, false);
      for (const a of c.actions) assert.equal(applyControl(s, a), s);
      assert.deepEqual([s.paused, s.aborted], [c.paused, c.aborted]);
    });
  }
  it('abort wins over pause in the decision', () => {
    const d = new Drain({ paused: true }).observe(anObservation().pods(aPod('app/a')));
    applyControl(d.s, 'abort');
    assert.equal(d.decide().outcome?.phase, 'Aborted');
  });
});

/** One control as the node's `nodeControl` handler gets it: dropped when stale, else applied. */
type Control = [NodeControlAction, number?];

function run(controls: Control[], paused = false) {
  const s = initialNodeState('n1', 0, paused);
  const dropped: string[] = [];
  for (const [action, generation] of controls) {
    if (isStaleControl(s, action, generation)) dropped.push(`${action}@${generation}`);
    else applyControl(s, action, generation);
  }
  return { paused: s.paused, aborted: s.aborted, generation: s.controlGeneration, dropped };
}

describe('isStaleControl / applyControl with generations', () => {
  const cases: { name: string; controls: Control[]; paused?: boolean; want: ReturnType<typeof run> }[] = [
    {
      name: 'the crossing: pause 2 forwarded, resume 3, a late direct pause 2 is dropped',
      controls: [
        ['pause', 2],
        ['resume', 3],
        ['pause', 2],
      ],
      want: { paused: false, aborted: false, generation: 3, dropped: ['pause@2'] },
    },
    {
      name: 'a resume older than the pause seen is dropped too',
      controls: [
        ['pause', 4],
        ['resume', 3],
      ],
      want: { paused: true, aborted: false, generation: 4, dropped: ['resume@3'] },
    },
    {
      name: 'the same generation twice (the direct stop and the plan forward) applies both',
      controls: [
        ['pause', 2],
        ['pause', 2],
      ],
      want: { paused: true, aborted: false, generation: 2, dropped: [] },
    },
    {
      name: 'a control without a generation (windows, Updates, old plans) always applies',
      controls: [['resume', 3], ['pause'], ['resume']],
      want: { paused: false, aborted: false, generation: 3, dropped: [] },
    },
    {
      name: 'nothing seen yet: an old generation applies',
      controls: [['pause', 1]],
      want: { paused: true, aborted: false, generation: 1, dropped: [] },
    },
    {
      name: 'an abort is never stale',
      controls: [
        ['resume', 5],
        ['abort', 2],
      ],
      want: { paused: false, aborted: true, generation: 5, dropped: [] },
    },
    {
      name: 'a release is never stale and does not lower the generation',
      controls: [
        ['resume', 5],
        ['release', 4],
      ],
      want: { paused: false, aborted: false, generation: 5, dropped: [] },
    },
    {
      name: 'a node started paused keeps its pause until a resume that is not stale',
      paused: true,
      controls: [
        ['pause', 6],
        ['resume', 5],
        ['resume', 7],
      ],
      want: { paused: false, aborted: false, generation: 7, dropped: ['resume@5'] },
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(run(c.controls, c.paused), c.want);
    });

  it('a state without a generation stays JSON-plain without the field', () => {
    const s = applyControl(initialNodeState('n1', 0, false), 'pause');
    assert.equal('controlGeneration' in s, false);
    assert.deepEqual(JSON.parse(JSON.stringify(applyControl(s, 'resume', 3))), {
      ...s,
      controlGeneration: 3,
    });
  });
});

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
