/**
 * Claim cycles between plans (src/drain/claim-cycle.ts): the waits a plan's status shows, the
 * cycle through a plan in a wait-for graph (table), its key and words, and the state a check
 * leaves (one Warning per cycle, the condition True while it holds, False once it is over).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyClaimCycle,
  claimCycleCondition,
  claimCycleKey,
  claimCycleMessage,
  findClaimCycle,
  statusWaits,
  type WaitEdge,
} from '../../src/drain/claim-cycle.js';

const w = (plan: string, node: string, heldBy: string): WaitEdge => ({ plan, node, heldBy });

describe('findClaimCycle', () => {
  const table: [string, string, WaitEdge[], WaitEdge[] | undefined][] = [
    ['no waits', 'a', [], undefined],
    ['a waits for b, b waits for nothing', 'a', [w('a', 'n2', 'b')], undefined],
    [
      'a and b each hold a node the other waits for',
      'a',
      [w('a', 'n2', 'b'), w('b', 'n1', 'a')],
      [w('a', 'n2', 'b'), w('b', 'n1', 'a')],
    ],
    [
      'the same cycle seen from b starts at b',
      'b',
      [w('a', 'n2', 'b'), w('b', 'n1', 'a')],
      [w('b', 'n1', 'a'), w('a', 'n2', 'b')],
    ],
    [
      'three plans in a ring',
      'a',
      [w('b', 'n3', 'c'), w('a', 'n2', 'b'), w('c', 'n1', 'a')],
      [w('a', 'n2', 'b'), w('b', 'n3', 'c'), w('c', 'n1', 'a')],
    ],
    [
      'a cycle of b and c that a only waits on: not through a',
      'a',
      [w('a', 'n1', 'b'), w('b', 'n2', 'c'), w('c', 'n3', 'b')],
      undefined,
    ],
    [
      'the shortest cycle through a wins',
      'a',
      [w('a', 'n1', 'b'), w('a', 'n4', 'd'), w('b', 'n2', 'c'), w('c', 'n3', 'a'), w('d', 'n5', 'a')],
      [w('a', 'n4', 'd'), w('d', 'n5', 'a')],
    ],
    [
      'two nodes of one plan wait for the same holder: the first in order names the cycle',
      'a',
      [w('a', 'n2', 'b'), w('a', 'n3', 'b'), w('b', 'n1', 'a')],
      [w('a', 'n2', 'b'), w('b', 'n1', 'a')],
    ],
    ['a wait on itself is no cycle', 'a', [w('a', 'n1', 'a')], undefined],
  ];
  for (const [name, self, edges, want] of table)
    it(name, () => assert.deepEqual(findClaimCycle(self, edges), want));
});

describe('statusWaits', () => {
  it('keeps Waiting/NodeHeldByOtherPlan nodes with a holder other than the plan', () => {
    assert.deepEqual(
      statusWaits('a', [
        { name: 'n1', phase: 'Drained' },
        { name: 'n2', phase: 'Waiting', reason: 'NodeHeldByOtherPlan', heldBy: 'b' },
        { name: 'n3', phase: 'Waiting', reason: 'NodeHeldByOtherPlan' },
        { name: 'n4', phase: 'Waiting', reason: 'NodeHeldByOtherPlan', heldBy: 'a' },
        { name: 'n5', phase: 'Paused', reason: 'NodeHeldByOtherPlan', heldBy: 'c' },
      ]),
      [w('a', 'n2', 'b')],
    );
  });
});

describe('claim cycle state, words and condition', () => {
  const cycle = [w('a', 'n2', 'b'), w('b', 'n1', 'a')];
  it('words name every plan and node, and what the admin can do', () => {
    assert.equal(
      claimCycleMessage(cycle),
      'claim cycle: plan a waits for node n2, held by plan b; plan b waits for node n1, held by plan a: these plans wait for each other until one of them ends or its deadline passes; abort or release one of them (e.g. drainflow abort b)',
    );
    assert.equal(claimCycleKey(cycle), 'a>n2>b|b>n1>a');
  });
  it('one Warning per cycle; the condition True while it holds, False once over; none before any', () => {
    assert.equal(claimCycleCondition(undefined, 1), undefined);
    assert.deepEqual(applyClaimCycle(undefined, undefined), { next: undefined, changed: false });
    const first = applyClaimCycle(undefined, cycle);
    assert.equal(first.warning, claimCycleMessage(cycle));
    assert.equal(first.changed, true);
    assert.deepEqual(claimCycleCondition(first.next, 3), {
      type: 'ClaimCycle',
      status: 'True',
      reason: 'WaitsForEachOther',
      message: claimCycleMessage(cycle),
      observedGeneration: 3,
    });
    const again = applyClaimCycle(first.next, cycle);
    assert.equal(again.warning, undefined, 'the same cycle warns once');
    assert.equal(again.changed, false);
    const over = applyClaimCycle(again.next, undefined);
    assert.equal(over.changed, true);
    assert.equal(claimCycleCondition(over.next, 3)!.status, 'False');
    assert.equal(claimCycleCondition(over.next, 3)!.reason, 'NoClaimCycle');
    const back = applyClaimCycle(over.next, cycle);
    assert.equal(back.warning, undefined, 'a cycle that comes back under the same key does not warn again');
    assert.equal(back.changed, true);
    const other = applyClaimCycle(back.next, [w('a', 'n3', 'c'), w('c', 'n1', 'a')]);
    assert.ok(other.warning, 'another cycle warns');
  });
});
