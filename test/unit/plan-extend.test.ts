/**
 * Table test of what a later deadline does (src/drain/plan-extend.ts): the request read
 * (`requestedDeadline`), the rule (`decideExtension`: refused, or which nodes drain again and which
 * running nodes get the new deadline) and its writing into the state (`applyExtension`).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodePhase, PlanPhase } from '../../src/api/reasons.js';
import {
  applyExtension,
  decideExtension,
  requestedDeadline,
  type Extension,
  type ExtensionRefusal,
} from '../../src/drain/plan-extend.js';
import {
  initialPlanRunState,
  pendingNode,
  type PlanRunState,
  type PlanStage,
} from '../../src/drain/plan-drain.js';
import { drainSettled, mergeNodeProgress, nodesToStart } from '../../src/drain/plan-drain.js';
import type { NodeProgress } from '../../src/contract/progress.js';
import { durationSeconds, resumeBlockedHint } from '../../src/cli/plans.js';
import { extendNodeDeadline } from '../../src/drain/node/deadline.js';
import { initialNodeState, type NodeDrainState } from '../../src/drain/node/state.js';

const NOW = 1_700_000_000_000;
const DEADLINE = NOW - 60_000; // passed a minute ago
const LATER = NOW + 1800_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A plan of `nodes` at `stage` in `phase`/`reason`, its deadline {@link DEADLINE}. */
function plan(stage: PlanStage, phase: PlanPhase, reason: string, nodes: string[]): PlanRunState {
  return initialPlanRunState(
    stage,
    {
      phase,
      reason,
      message: '',
      observedGeneration: 1,
      deadlineMs: DEADLINE,
      nodes: nodes.map(pendingNode),
      conditions: [],
    },
    { paused: false, aborted: false, released: false },
  );
}

/** Node `name` started and ended in `phase`/`reason`, still claimed unless `claimed` is false. */
function ended(
  s: PlanRunState,
  name: string,
  phase: NodePhase,
  reason?: string,
  claimed = true,
): PlanRunState {
  s.started.push(name);
  s.finished.push(name);
  Object.assign(
    s.plan.nodes.find((n) => n.name === name)!,
    { phase, reason },
  );
  if (claimed) s.claimed[name] = { cordonedByPlan: true, nodeUid: `uid-${name}` };
  return s;
}

function running(s: PlanRunState, name: string, ownDeadlineMs?: number): PlanRunState {
  s.started.push(name);
  s.claimed[name] = { cordonedByPlan: true };
  const n = s.plan.nodes.find((x) => x.name === name)!;
  n.phase = 'Draining';
  if (ownDeadlineMs !== undefined) n.deadlineMs = ownDeadlineMs;
  return s;
}

/** Blocked at its deadline: n1 drained, n2 stopped at the deadline (claimed), n3 never started. */
function blockedAtDeadline(): PlanRunState {
  const s = plan('Settled', 'Blocked', 'DeadlineExceeded', ['n1', 'n2', 'n3']);
  ended(s, 'n1', 'Drained', 'Drained');
  ended(s, 'n2', 'Blocked', 'DeadlineExceeded');
  Object.assign(s.plan.nodes[2]!, { phase: 'Blocked', reason: 'DeadlineExceeded' });
  s.settledAtMs = DEADLINE;
  s.plan.completedAtMs = DEADLINE;
  return s;
}

describe('requestedDeadline', () => {
  const table: Array<[string, Parameters<typeof requestedDeadline>[1], number | RegExp]> = [
    ['--by 30m', { addSeconds: 1800, by: 'alice' }, DEADLINE + 1800_000],
    ['--to RFC 3339', { deadline: iso(LATER), by: 'alice' }, LATER],
    [
      '--to with an offset',
      { deadline: '2026-12-08T18:00:00+01:00', by: 'a' },
      Date.parse('2026-12-08T17:00:00Z'),
    ],
    ['zero seconds', { addSeconds: 0, by: 'a' }, /addSeconds must be a positive number/],
    ['negative seconds', { addSeconds: -60, by: 'a' }, /addSeconds must be a positive number/],
    ['both', { addSeconds: 60, deadline: iso(LATER), by: 'a' }, /exactly one of addSeconds/],
    ['neither', { by: 'a' }, /exactly one of addSeconds/],
    ['not RFC 3339', { deadline: 'tomorrow', by: 'a' }, /deadline must be an RFC 3339 time/],
    ['no zone', { deadline: '2026-12-08T18:00:00', by: 'a' }, /deadline must be an RFC 3339 time/],
    ['nobody', { addSeconds: 60, by: ' ' }, /by must name who/],
  ];
  for (const [name, args, want] of table)
    it(name, () => {
      const got = requestedDeadline(DEADLINE, args);
      if (typeof want === 'number') assert.equal(got, want);
      else {
        assert.equal((got as ExtensionRefusal).refused, 'BadRequest');
        assert.match((got as ExtensionRefusal).message, want);
      }
    });
});

describe('decideExtension', () => {
  const refusals: Array<[string, () => PlanRunState, number, ExtensionRefusal['refused'], RegExp]> = [
    [
      'not resolved yet',
      () => plan('Resolve', 'Pending', 'Starting', []),
      LATER,
      'NotExtendable',
      /has not resolved its nodes/,
    ],
    [
      'aborted',
      () => Object.assign(plan('Drain', 'Running', 'Draining', ['n1']), { aborted: true }),
      LATER,
      'NotExtendable',
      /is aborted/,
    ],
    [
      'released',
      () => Object.assign(blockedAtDeadline(), { released: true }),
      LATER,
      'NotExtendable',
      /is released/,
    ],
    [
      'Drained',
      () => ended(plan('Settled', 'Drained', 'AllNodesDrained', ['n1']), 'n1', 'Drained'),
      LATER,
      'NotExtendable',
      /is Drained: only a Running plan or one Blocked at its deadline/,
    ],
    [
      'Blocked with skipped nodes (handed back already)',
      () =>
        ended(
          plan('Settled', 'Blocked', 'NodesSkipped', ['n1']),
          'n1',
          'Skipped',
          'SkippedAtDeadline',
          false,
        ),
      LATER,
      'NotExtendable',
      /is Blocked \(NodesSkipped\), not at its deadline/,
    ],
    ['Paused', () => plan('Drain', 'Paused', 'PausedByUser', ['n1']), LATER, 'NotExtendable', /is Paused/],
    ['not later', blockedAtDeadline, DEADLINE, 'NotLater', /is not later than the current one/],
    ['later, but past already', blockedAtDeadline, NOW - 1000, 'NotExtendable', /has passed already/],
  ];
  for (const [name, state, at, kind, why] of refusals)
    it(`refused: ${name}`, () => {
      const got = decideExtension(state(), at, NOW, 'p') as ExtensionRefusal;
      assert.equal(got.refused, kind);
      assert.match(got.message, why);
    });

  const takes: Array<[string, () => PlanRunState, Omit<Extension, 'deadlineMs' | 'previousMs'>]> = [
    [
      'Blocked at its deadline: back to Running, the stopped node drains again (n3 never started starts)',
      blockedAtDeadline,
      { resume: true, restart: ['n2'], notify: [] },
    ],
    [
      'Running: running nodes on the plan deadline get the new one; one with its own deadline keeps it',
      () => {
        const s = plan('Drain', 'Running', 'Draining', ['n1', 'n2', 'n3']);
        s.plan.deadlineMs = NOW + 60_000;
        running(s, 'n1');
        running(s, 'n2', NOW + 30_000);
        return s;
      },
      { resume: false, restart: [], notify: ['n1'] },
    ],
    [
      'Running: a node stopped at its own deadline (nodeDrainTimeoutSeconds) and still held drains again',
      () => {
        const s = plan('Drain', 'Running', 'Draining', ['n1', 'n2']);
        s.plan.deadlineMs = NOW + 60_000;
        ended(s, 'n1', 'Blocked', 'DeadlineExceeded');
        running(s, 'n2');
        return s;
      },
      { resume: false, restart: ['n1'], notify: ['n2'] },
    ],
  ];
  for (const [name, state, want] of takes)
    it(name, () => {
      const s = state();
      const got = decideExtension(s, LATER, NOW, 'p') as Extension;
      assert.deepEqual(got, { deadlineMs: LATER, previousMs: s.plan.deadlineMs, ...want });
    });
});

describe('applyExtension', () => {
  it('a plan Blocked at its deadline: stage Drain, n2 and n3 not started again, claims kept, Running, one Normal Event', () => {
    const s = blockedAtDeadline();
    const x = decideExtension(s, LATER, NOW, 'p') as Extension;
    const { event, phase } = applyExtension(s, x, 'alice', NOW);
    assert.equal(s.stage, 'Drain');
    assert.equal(s.plan.deadlineMs, LATER);
    assert.equal(s.settledAtMs, undefined);
    assert.equal(s.plan.completedAtMs, undefined);
    assert.deepEqual(s.started, ['n1']);
    assert.deepEqual(s.finished, ['n1']);
    assert.deepEqual(s.claimed.n2, { cordonedByPlan: true, nodeUid: 'uid-n2' }, 'the claim is kept');
    assert.equal(s.plan.nodes[1]!.phase, 'Pending');
    assert.equal(s.plan.nodes[0]!.phase, 'Drained', 'a drained node stays drained');
    assert.deepEqual(phase, {
      phase: 'Running',
      reason: 'Draining',
      message: `deadline extended to ${iso(LATER)}: draining again n2, n3`,
    });
    assert.deepEqual(event, {
      type: 'Normal',
      reason: 'DeadlineExtended',
      message: `deadline extended to ${iso(LATER)} (was ${iso(DEADLINE)}) by alice at ${iso(NOW)}; node(s) n2, n3 drain again, their claims kept (still cordoned)`,
    });
    // The stage machine then starts both (maxUnavailableNodes 2), and the drain is not settled.
    assert.deepEqual(nodesToStart(s, 2, NOW), ['n2', 'n3']);
    assert.equal(drainSettled(s, NOW), false);
  });

  it("a node drained again keeps its earlier drain's counts: the new drain's report adds to them", () => {
    const s = blockedAtDeadline();
    Object.assign(s.plan.nodes[1]!, { podsTotal: 5, podsEvicted: 3, attempts: 7, tooManyRequests: 4 });
    applyExtension(s, decideExtension(s, LATER, NOW, 'p') as Extension, 'alice', NOW);
    assert.deepEqual(Object.keys(s.earlierDrains ?? {}), ['n2'], 'n3 counted nothing: no entry');
    assert.deepEqual(
      [s.plan.nodes[1]!.phase, s.plan.nodes[1]!.podsEvicted, s.plan.nodes[1]!.attempts],
      ['Pending', 3, 7],
      'Pending again, its counts still shown',
    );
    // The new drain of n2 sees the 2 pods left, evicts 1 with 2 calls (one answered 429).
    mergeNodeProgress(s, {
      node: 'n2',
      phase: 'Draining',
      podsTotal: 2,
      podsEvicted: 1,
      podsFailed: 0,
      attempts: 2,
      tooManyRequests: 1,
      blockedBy: [],
    } as NodeProgress);
    const n2 = s.plan.nodes[1]!;
    assert.deepEqual(
      [n2.podsTotal, n2.podsEvicted, n2.attempts, n2.tooManyRequests],
      [5, 4, 9, 5],
      'totals over both drains',
    );
  });

  it('a Running plan: only the deadline moves, no phase', () => {
    const s = plan('Drain', 'Running', 'Draining', ['n1']);
    s.plan.deadlineMs = NOW + 60_000;
    running(s, 'n1');
    const x = decideExtension(s, LATER, NOW, 'p') as Extension;
    const { event, phase } = applyExtension(s, x, 'bob', NOW);
    assert.equal(phase, undefined);
    assert.equal(s.plan.deadlineMs, LATER);
    assert.deepEqual(s.started, ['n1']);
    assert.match(event.message, /by bob at/);
    assert.doesNotMatch(event.message, /drain again/);
  });
});

describe('drainflow extend --by and resume on a plan Blocked at its deadline (src/cli/plans.ts)', () => {
  const durations: Array<[string, number | undefined]> = [
    ['30m', 1800],
    ['1h30m', 5400],
    ['90s', 90],
    ['2h', 7200],
    ['0m', undefined],
    ['', undefined],
    ['30', undefined],
    ['-5m', undefined],
    ['1m1h', undefined],
  ];
  for (const [text, want] of durations)
    it(`--by ${JSON.stringify(text)} → ${String(want)}`, () => assert.equal(durationSeconds(text), want));

  it('resume on a plan Blocked at its deadline says how to extend; on any other plan nothing', () => {
    assert.match(
      resumeBlockedHint('p', { phase: 'Blocked', reason: 'DeadlineExceeded' })!,
      /resume gives it no more time.*drainflow extend p --by 30m/,
    );
    assert.equal(resumeBlockedHint('p', { phase: 'Blocked', reason: 'PodsNotEvictable' }), undefined);
    assert.equal(resumeBlockedHint('p', { phase: 'Paused', reason: 'PausedByUser' }), undefined);
  });
});

describe('extendNodeDeadline (a running node told the plan deadline moved)', () => {
  const node = (over: Partial<NodeDrainState> = {}): NodeDrainState =>
    Object.assign(initialNodeState('n1', NOW + 60_000, false), over);
  const table: Array<[string, NodeDrainState, number, boolean, number]> = [
    ['later: moves, the DeletePods notice goes out again', node({ warned: true }), LATER, true, LATER],
    ['not later: stays', node(), NOW + 30_000, false, NOW + 60_000],
    [
      'already deciding at its deadline (fresh view): stays, the deadline policy applies',
      node({ deadlineView: { afterSeq: 1, untilMs: NOW + 70_000 } }),
      LATER,
      false,
      NOW + 60_000,
    ],
  ];
  for (const [name, s, at, moved, want] of table)
    it(name, () => {
      assert.equal(extendNodeDeadline(s, at), moved);
      assert.equal(s.deadlineMs, want);
      if (moved) assert.equal(s.warned, undefined);
    });
});
