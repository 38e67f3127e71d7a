/**
 * Table tests of the node drain's state (src/drain/node/state.ts: `initialNodeState`) and of how
 * one pod record moves (src/drain/node/pod-record.ts: a gone pod is dropped and counted as this
 * drain's eviction or deletion, or as gone without one). No Temporal, no I/O.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodePhase } from '../../src/api/reasons.js';
import { dropGone } from '../../src/drain/node/pod-record.js';
import { initialNodeState, type PodRecord } from '../../src/drain/node/state.js';

describe('initialNodeState', () => {
  for (const paused of [false, true])
    it(`paused ${paused}: nothing claimed, nothing observed`, () =>
      assert.deepEqual(initialNodeState('n1', 5000, paused), {
        node: 'n1',
        phase: NodePhase.Pending,
        claimed: false,
        cordonedByPlan: false,
        claimRounds: 0,
        paused,
        aborted: false,
        deadlineMs: 5000,
        pods: {},
        pdbs: {},
        observeSeq: 0,
        podsGone: 0,
        attempts: 0,
        tooManyRequests: 0,
      }));
});

describe('dropGone', () => {
  const rows: [string, Partial<PodRecord>, { deletedGone?: number; goneWithoutEviction?: number }][] = [
    ['evicted (201)', { evicted: true }, {}],
    ['deleted at the deadline', { deleted: true }, { deletedGone: 1 }],
    ['a call that may have taken effect', { mayHaveEvicted: true }, {}],
    ['its eviction in flight', { state: 'Evicting' }, {}],
    ['its deletion in flight', { state: 'Deleting' }, {}],
    ['never evicted', {}, { goneWithoutEviction: 1 }],
  ];
  for (const [name, rec, want] of rows)
    it(name, () => {
      const s = initialNodeState('n1', 5000, false);
      s.pods.u = {
        key: 'app/a',
        namespace: 'app',
        name: 'a',
        uid: 'u',
        pdbs: [],
        state: 'Terminating',
        attempts: 0,
        refusals: 0,
        notBeforeMs: 0,
        ...rec,
      };
      dropGone(s, 'u');
      assert.deepEqual(
        {
          pods: s.pods,
          podsGone: s.podsGone,
          deletedGone: s.deletedGone,
          goneWithoutEviction: s.goneWithoutEviction,
        },
        { pods: {}, podsGone: 1, ...{ deletedGone: undefined, goneWithoutEviction: undefined }, ...want },
      );
    });
});
