/**
 * The node's control rule (src/drain/node-drain.ts `isStaleControl`, `applyControl` with a
 * generation): a pause or resume older than the newest plan generation the node has seen is stale.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyControl,
  initialNodeState,
  isStaleControl,
  type NodeControlAction,
} from '../../src/drain/node-drain.js';

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
