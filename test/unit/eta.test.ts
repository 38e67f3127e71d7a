/**
 * Table test of the plan's estimated completion (src/drain/eta.ts): the pace kept by the plan
 * (held time apart), the pods left (nodes not started counted as the average node), when there is
 * no estimate and why; its place in the rendered status; and `drainflow status`'s line. No
 * Temporal, no I/O.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Blocker } from '../../src/api/plan.js';
import type { NodePhase, PlanPhase } from '../../src/api/reasons.js';
import { durationWords, etaLine, renderPlan } from '../../src/cli/render.js';
import type { NodeState } from '../../src/contract/progress.js';
import {
  drainTimeMs,
  estimateCompletionMs,
  noEstimateCause,
  podsLeft,
  trackPace,
  type DrainPace,
  type EtaInput,
} from '../../src/drain/eta.js';
import { pendingNode } from '../../src/drain/plan-drain.js';
import { renderPlanStatus } from '../../src/drain/plan-status.js';

const T0 = Date.parse('2026-12-01T10:00:00Z');
const MIN = 60_000;

/** A node in `phase` with `total` pods of which `evicted` are gone. */
const node = (
  name: string,
  phase: NodePhase,
  total: number,
  evicted: number,
  over: Partial<NodeState> = {},
): NodeState => ({ ...pendingNode(name), phase, podsTotal: total, podsEvicted: evicted, ...over });

const pace = (sinceMs: number, heldMs = 0): DrainPace => ({ sinceMs, heldMs });
const PDB_NEVER: Blocker = {
  pod: 'shop/web-0',
  reason: 'DisruptionBudget',
  pdb: 'shop/web',
  kind: 'Never',
  message: 'never',
};

describe('estimateCompletionMs', () => {
  const rows: { name: string; input: EtaInput; want: number | undefined; cause?: string }[] = [
    {
      name: 'one node, half its pods gone in 2 min: 2 min left',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Draining', 60, 30)],
        pace: pace(T0),
        nowMs: T0 + 2 * MIN,
      },
      want: T0 + 4 * MIN,
    },
    {
      name: 'the nodes not started count as the average node (20 nodes of 30 pods, 5 at once, half gone)',
      input: {
        phase: 'Running',
        nodes: [
          ...Array.from({ length: 8 }, (_, i) => node(`d${i}`, 'Drained', 30, 30)),
          ...Array.from({ length: 5 }, (_, i) => node(`r${i}`, 'Draining', 30, 12)),
          ...Array.from({ length: 7 }, (_, i) => pendingNode(`p${i}`)),
        ],
        pace: pace(T0),
        nowMs: T0 + 5 * MIN,
      },
      // 300 gone in 5 min (60/min); left: 5 × 18 + 7 × 30 = 300: 5 min more.
      want: T0 + 10 * MIN,
    },
    {
      name: 'a node Waiting for the claim of another plan: none (it depends on that plan)',
      input: {
        phase: 'Running',
        nodes: [
          node('n1', 'Draining', 10, 5),
          node('n2', 'Waiting', 0, 0, { reason: 'NodeHeldByOtherPlan' }),
        ],
        pace: pace(T0),
        nowMs: T0 + MIN,
      },
      want: undefined,
      cause: 'HeldUp',
    },
    {
      name: 'a node in Cordoned, not counted yet, counts as the average node',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Drained', 10, 10), node('n2', 'Cordoned', 0, 0)],
        pace: pace(T0),
        nowMs: T0 + MIN,
      },
      want: T0 + 2 * MIN,
    },
    {
      name: 'paused time does not count: 1 min drained of 3 min wall time',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Draining', 20, 10)],
        pace: pace(T0, 2 * MIN),
        nowMs: T0 + 3 * MIN,
      },
      want: T0 + 4 * MIN,
    },
    {
      name: 'pods deleted at the deadline, gone without eviction and failed count as done',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Draining', 40, 5, { podsDeleted: 5, podsGoneWithoutEviction: 5, podsFailed: 5 })],
        pace: pace(T0),
        nowMs: T0 + MIN,
      },
      want: T0 + 2 * MIN,
    },
    {
      name: 'rounded to the second',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Draining', 3, 1)],
        pace: pace(T0),
        nowMs: T0 + 1234,
      },
      want: T0 + 4000, // 1 pod per 1.234 s, 2 left: 2.468 s more → 3.702 s, rounded to 4 s
    },
    {
      name: 'nothing gone yet: no pace',
      input: { phase: 'Running', nodes: [node('n1', 'Draining', 30, 0)], pace: pace(T0), nowMs: T0 + MIN },
      want: undefined,
      cause: 'NoPaceYet',
    },
    {
      name: 'no node started yet: no pace',
      input: { phase: 'Running', nodes: [pendingNode('n1')], nowMs: T0 },
      want: undefined,
      cause: 'NoPaceYet',
    },
    {
      name: 'paused: depends on the resume',
      input: { phase: 'Paused', nodes: [node('n1', 'Paused', 30, 10)], pace: pace(T0), nowMs: T0 + MIN },
      want: undefined,
      cause: 'NotRunning',
    },
    ...(['Drained', 'Blocked', 'Aborted', 'Completed', 'Failed', 'Pending'] as PlanPhase[]).map((phase) => ({
      name: `phase ${phase}: none`,
      input: { phase, nodes: [node('n1', 'Drained', 30, 30)], pace: pace(T0), nowMs: T0 + MIN },
      want: undefined,
      cause: 'NotRunning',
    })),
    {
      name: 'every node ended (awaiting the release): none',
      input: { phase: 'Running', nodes: [node('n1', 'Drained', 30, 30)], pace: pace(T0), nowMs: T0 + MIN },
      want: undefined,
      cause: 'NothingLeft',
    },
    {
      name: 'a PodDisruptionBudget that never allows a disruption: none (a person must act)',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Draining', 30, 10, { blockedBy: [PDB_NEVER] }), node('n2', 'Draining', 30, 10)],
        pace: pace(T0),
        nowMs: T0 + MIN,
      },
      want: undefined,
      cause: 'HeldUp',
    },
    {
      name: 'a node Blocked (pods not evictable): none',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Blocked', 30, 10, { reason: 'PodsNotEvictable' })],
        pace: pace(T0),
        nowMs: T0 + MIN,
      },
      want: undefined,
      cause: 'HeldUp',
    },
    {
      name: 'a Blocked node whose drain ended (Skipped) does not hold the estimate',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Skipped', 30, 10, { blockedBy: [PDB_NEVER] }), node('n2', 'Draining', 30, 15)],
        pace: pace(T0),
        nowMs: T0 + MIN,
      },
      // 25 done in 1 min, 15 left.
      want: T0 + MIN + 36_000,
    },
  ];
  for (const r of rows)
    it(r.name, () => {
      assert.equal(estimateCompletionMs(r.input), r.want);
      assert.equal(noEstimateCause(r.input), r.cause);
    });
});

describe('podsLeft', () => {
  it('no node counted yet: 0 (the average is unknown)', () =>
    assert.equal(podsLeft([pendingNode('a'), pendingNode('b')]), 0));
  it('nodes not counted yet count as the average of the last 5 counted (later nodes hold more pods)', () =>
    assert.equal(
      podsLeft([
        ...[10, 10, 20, 20, 20, 20, 20].map((t, i) => node(`d${i}`, 'Drained', t, t)),
        pendingNode('p1'),
        pendingNode('p2'),
      ]),
      40,
    ));
  it('a drained node with no pod counts in the average', () =>
    assert.equal(podsLeft([node('a', 'Drained', 0, 0), node('b', 'Draining', 10, 4), pendingNode('c')]), 11));
});

describe('trackPace', () => {
  it('starts with the first node, then counts held time from hold to resume', () => {
    assert.equal(trackPace(undefined, T0, 0, false), undefined);
    const p = trackPace(undefined, T0, 1, false)!;
    assert.deepEqual(p, { sinceMs: T0, heldMs: 0 });
    trackPace(p, T0 + MIN, 1, true);
    assert.equal(drainTimeMs(p, T0 + 2 * MIN), MIN, 'a hold going on counts up to now');
    trackPace(p, T0 + 3 * MIN, 1, true); // still held: nothing changes
    trackPace(p, T0 + 4 * MIN, 2, false);
    assert.deepEqual(p, { sinceMs: T0, heldMs: 3 * MIN });
    assert.equal(drainTimeMs(p, T0 + 5 * MIN), 2 * MIN);
  });
  it('a plan held when its first node starts (outside its windows) counts from then', () => {
    const p = trackPace(undefined, T0, 1, true)!;
    assert.deepEqual(p, { sinceMs: T0, heldMs: 0, heldSinceMs: T0 });
    assert.equal(drainTimeMs(p, T0 + MIN), 0);
  });
});

describe('status.estimatedCompletion', () => {
  const state = {
    phase: 'Running' as const,
    reason: 'Draining',
    message: 'draining 1 of 1 node(s)',
    observedGeneration: 1,
    nodes: [node('n1', 'Draining', 60, 30)],
    conditions: [],
    pace: pace(T0),
  };
  it('is rendered at the write time', () =>
    assert.equal(
      renderPlanStatus({ state, nowMs: T0 + 2 * MIN }).estimatedCompletion,
      '2026-12-01T10:04:00.000Z',
    ));
  it('is cleared once the plan ends', () =>
    assert.equal(
      renderPlanStatus({ state: { ...state, phase: 'Drained' }, nowMs: T0 + 2 * MIN }).estimatedCompletion,
      undefined,
    ));
});

describe('drainflow status: the estimate line', () => {
  const rows: [string, string | undefined, number, string | undefined][] = [
    [
      'minutes and seconds left',
      '2026-12-01T10:42:10.000Z',
      Date.parse('2026-12-01T10:38:50Z'),
      'estimated completion: about 3m 20s left, at 10:42:10 UTC',
    ],
    [
      'the time has come',
      '2026-12-01T10:42:10.000Z',
      Date.parse('2026-12-01T10:42:30Z'),
      'estimated completion: about now (the estimate said 10:42:10 UTC)',
    ],
    ['no estimate', undefined, T0, undefined],
  ];
  for (const [what, at, now, want] of rows)
    it(what, () => assert.equal(etaLine(at ? { estimatedCompletion: at } : {}, now), want));
  it('durations', () => {
    assert.equal(durationWords(45_400), '45s');
    assert.equal(durationWords(3 * MIN), '3m');
    assert.equal(durationWords(65 * MIN + 30_000), '1h 5m');
    assert.equal(durationWords(2 * 60 * MIN), '2h');
  });
  it('renderPlan shows it while the plan runs, not once it ended', () => {
    const status = {
      phase: 'Running' as const,
      estimatedCompletion: '2026-12-01T10:42:10.000Z',
    };
    const now = Date.parse('2026-12-01T10:38:50Z');
    assert.match(renderPlan({ metadata: { name: 'p', uid: 'u' }, status }, now), /about 3m 20s left/);
    assert.doesNotMatch(
      renderPlan({ metadata: { name: 'p', uid: 'u' }, status: { ...status, phase: 'Drained' } }, now),
      /estimated completion/,
    );
  });
});
