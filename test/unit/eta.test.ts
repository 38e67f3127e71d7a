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
  PACE_SAMPLES,
  estimateCompletionMs,
  noEstimateCause,
  pacePerMs,
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

/** A pace whose oldest sample says `done` pods were gone at `atMs`. */
const pace = (atMs: number, done = 0): DrainPace => ({ samples: [{ atMs, done }], firstAtMs: atMs });
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
      name: 'the pace counts from the oldest sample (the start-up before the first pod left does not count)',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Draining', 40, 20)],
        pace: pace(T0, 10),
        nowMs: T0 + MIN,
      },
      // 10 gone in the minute since the sample: 20 left take 2 min.
      want: T0 + 3 * MIN,
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
      name: 'rounded up to the second',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Draining', 3, 1)],
        pace: pace(T0),
        nowMs: T0 + 1234,
      },
      want: T0 + 4000, // 1 pod per 1.234 s, 2 left: 2.468 s more → 3.702 s, rounded up to 4 s
    },
    {
      name: 'nothing gone yet: no pace',
      input: { phase: 'Running', nodes: [node('n1', 'Draining', 30, 0)], nowMs: T0 + MIN },
      want: undefined,
      cause: 'NoPaceYet',
    },
    {
      name: 'nothing gone since the first sample: no pace',
      input: { phase: 'Running', nodes: [node('n1', 'Draining', 30, 5)], pace: pace(T0, 5), nowMs: T0 + MIN },
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
      name: 'a drained node waiting for its per-node release (uncordon AfterEachNode): none',
      input: {
        phase: 'Running',
        nodes: [node('n1', 'Drained', 30, 30, { reason: 'AwaitingRelease' }), pendingNode('n2')],
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
  it('starts with the first pod gone, then samples at least 2 s apart', () => {
    assert.equal(trackPace(undefined, T0, 0, false), undefined, 'nothing gone: no pace yet');
    let p = trackPace(undefined, T0, 3, false)!;
    assert.deepEqual(p, { samples: [{ atMs: T0, done: 3 }], firstAtMs: T0 });
    p = trackPace(p, T0 + 1000, 5, false)!;
    assert.equal(p.samples.length, 1, 'too soon after the last sample');
    p = trackPace(p, T0 + 2000, 5, false)!;
    assert.deepEqual(p.samples.at(-1), { atMs: T0 + 2000, done: 5 });
    p = trackPace(p, T0 + 5000, 5, false)!;
    assert.equal(p.samples.length, 2, 'nothing gone since the last sample');
    assert.equal(pacePerMs(p, 9, T0 + 6000), 6 / 6000);
  });
  it('keeps at most 12 samples, spaced by a 12th of the time since the first', () => {
    let p: DrainPace | undefined;
    for (let i = 0; i < 200; i++) p = trackPace(p, T0 + i * 10_000, i + 1, false);
    assert.equal(p!.samples.length, PACE_SAMPLES);
    const first = p!.samples[0]!;
    // 1990 s since the first sample: the recent half or two thirds of it are covered.
    assert.ok(first.atMs - T0 >= 500_000 && first.atMs - T0 <= 1_200_000, `oldest at ${first.atMs - T0} ms`);
  });
  it('a hold clears the samples; the pace starts again after it', () => {
    let p = trackPace(undefined, T0, 3, false);
    p = trackPace(p, T0 + 5000, 8, false);
    p = trackPace(p, T0 + 6000, 8, true);
    assert.deepEqual(p, { samples: [] });
    assert.equal(pacePerMs(p, 8, T0 + 7000), undefined);
    p = trackPace(p, T0 + 60_000, 8, false);
    assert.deepEqual(p, { samples: [{ atMs: T0 + 60_000, done: 8 }], firstAtMs: T0 + 60_000 });
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
