/**
 * The node lifecycle conditions of a plan's node (src/drain/node-conditions.ts): phase → conditions,
 * which conditions are the plan's, and what a write changes (no churn, transition times kept).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NodePhase, type PlanPhase } from '../../src/api/reasons.js';
import {
  isPlanCondition,
  nodeConditionChanges,
  wantedNodeConditions,
  type NodeConditionView,
} from '../../src/drain/node-conditions.js';

/** `Type=Status/Reason`, in order. */
const short = (planPhase: PlanPhase | undefined, phase: NodePhase, reason?: string) =>
  wantedNodeConditions('kernel', planPhase, { phase, ...(reason ? { reason } : {}) }).map(
    (c) => `${c.type}=${c.status}/${c.reason}`,
  );

const RUNNING = [
  'MaintenancePlanned=True/PlanHoldsNode',
  'DrainInProgress=True/DrainRunning',
  'Drained=False/DrainNotCompleted',
];
const STOPPED = [
  'MaintenancePlanned=True/PlanHoldsNode',
  'DrainInProgress=False/DrainStopped',
  'Drained=False/DrainNotCompleted',
];

describe('wantedNodeConditions: node phase → the conditions of a node the plan holds', () => {
  const rows: Array<[PlanPhase | undefined, NodePhase, string | undefined, string[]]> = [
    // Not held by the plan: none.
    ['Running', NodePhase.Pending, undefined, []],
    ['Running', NodePhase.Waiting, 'NodeHeldByOtherPlan', []],
    ['Completed', NodePhase.Released, undefined, []],
    ['Running', NodePhase.Skipped, undefined, []],
    ['Aborted', NodePhase.Aborted, undefined, []],
    ['Running', NodePhase.Deleted, 'NodeDeleted', []],
    ['Previewed', NodePhase.Previewed, undefined, []],
    // Held, the drain runs.
    [undefined, NodePhase.Cordoned, undefined, RUNNING],
    ['Running', NodePhase.Cordoned, undefined, RUNNING],
    ['Running', NodePhase.Draining, undefined, RUNNING],
    [
      'Running',
      NodePhase.Blocked,
      'PodsNotEvictable',
      [
        'MaintenancePlanned=True/PlanHoldsNode',
        'DrainInProgress=True/DrainBlocked',
        'Drained=False/DrainNotCompleted',
      ],
    ],
    [
      'Paused',
      NodePhase.Paused,
      undefined,
      [
        'MaintenancePlanned=True/PlanHoldsNode',
        'DrainInProgress=False/DrainPaused',
        'Drained=False/DrainNotCompleted',
      ],
    ],
    // Held, the drain done.
    [
      'Drained',
      NodePhase.Drained,
      undefined,
      [
        'MaintenancePlanned=True/PlanHoldsNode',
        'DrainInProgress=False/DrainCompleted',
        'Drained=True/DrainCompleted',
      ],
    ],
    [
      'Running',
      NodePhase.Drained,
      undefined,
      [
        'MaintenancePlanned=True/PlanHoldsNode',
        'DrainInProgress=False/DrainCompleted',
        'Drained=True/DrainCompleted',
      ],
    ],
    // Held, the drain stopped undrained.
    ['Blocked', NodePhase.Blocked, 'DeadlineExceeded', STOPPED],
    ['Failed', NodePhase.Failed, 'NodeDrainFailed', STOPPED],
    ['Running', NodePhase.Failed, undefined, STOPPED],
    ['Blocked', NodePhase.Draining, undefined, STOPPED],
  ];
  for (const [planPhase, phase, reason, want] of rows) {
    it(`plan ${planPhase ?? '(none)'}, node ${phase}${reason ? `/${reason}` : ''} → ${want.join(', ') || 'none'}`, () => {
      assert.deepEqual(short(planPhase, phase, reason), want);
    });
  }

  it('every message names the plan and, where given, the node reason; none carries counts', () => {
    const conds = wantedNodeConditions('kernel', 'Running', {
      phase: NodePhase.Blocked,
      reason: 'PodsNotEvictable',
    });
    for (const c of conds) assert.match(c.message, /^MaintenancePlan kernel: /);
    assert.match(conds[1]!.message, /PodsNotEvictable/);
    assert.doesNotMatch(conds.map((c) => c.message).join(' '), /\d/);
  });
});

describe("isPlanCondition: a plan's own conditions", () => {
  const [planned] = wantedNodeConditions('kernel', 'Running', { phase: NodePhase.Draining });
  const rows: Array<[string, NodeConditionView, string, boolean]> = [
    ['its own', planned!, 'kernel', true],
    ['another plan (name prefix of this one)', planned!, 'kern', false],
    ['another plan (this one a prefix of it)', planned!, 'kernel2', false],
    ['an admin-set condition of the type', { ...planned!, reason: 'AdminRequested' }, 'kernel', false],
    ['a condition of another type with the message', { ...planned!, type: 'Ready' }, 'kernel', false],
    ['no message', { type: 'Drained', status: 'True', reason: 'DrainCompleted' }, 'kernel', false],
  ];
  for (const [what, c, plan, want] of rows)
    it(`${what}: ${want}`, () => assert.equal(isPlanCondition(c, plan), want));
});

describe('nodeConditionChanges: what one write changes', () => {
  const NOW = '2026-09-01T10:00:00Z';
  const EARLIER = '2026-09-01T09:00:00Z';
  const draining = wantedNodeConditions('kernel', 'Running', { phase: NodePhase.Draining });
  const drained = wantedNodeConditions('kernel', 'Drained', { phase: NodePhase.Drained });
  const ready: NodeConditionView = {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    lastTransitionTime: EARLIER,
  };
  const stamped = (cs: typeof draining, t: string): NodeConditionView[] =>
    cs.map((c) => ({ ...c, lastHeartbeatTime: t, lastTransitionTime: t }));

  it('a node without them gets all three, transition now; Ready is not named', () => {
    const { set, remove } = nodeConditionChanges([ready], draining, 'kernel', NOW);
    assert.deepEqual(
      set.map((c) => [c.type, c.lastTransitionTime]),
      draining.map((c) => [c.type, NOW]),
    );
    assert.deepEqual(remove, []);
  });

  it('the same conditions again: nothing to write (no churn)', () => {
    assert.deepEqual(nodeConditionChanges([ready, ...stamped(draining, EARLIER)], draining, 'kernel', NOW), {
      set: [],
      remove: [],
    });
  });

  it('drained: only the two that changed; lastTransitionTime now on a status change, kept on a reason change', () => {
    const current = [ready, ...stamped(draining, EARLIER)];
    const { set } = nodeConditionChanges(current, drained, 'kernel', NOW);
    assert.deepEqual(
      set.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime]),
      [
        ['DrainInProgress', 'False', 'DrainCompleted', NOW],
        ['Drained', 'True', 'DrainCompleted', NOW],
      ],
    );
    // Paused → Drained: DrainInProgress stays False, its reason changes: the transition time stays.
    const paused = wantedNodeConditions('kernel', 'Paused', { phase: NodePhase.Paused });
    const { set: set2 } = nodeConditionChanges(stamped(paused, EARLIER), drained, 'kernel', NOW);
    const dip = set2.find((c) => c.type === 'DrainInProgress')!;
    assert.equal(dip.lastTransitionTime, EARLIER);
    assert.equal(dip.lastHeartbeatTime, NOW);
  });

  it('a time read as a Date is written back as RFC 3339', () => {
    const current = draining.map((c) => ({ ...c, message: 'older', lastTransitionTime: new Date(EARLIER) }));
    const { set } = nodeConditionChanges(current, draining, 'kernel', NOW);
    assert.deepEqual(
      set.map((c) => c.lastTransitionTime),
      [EARLIER, EARLIER, EARLIER],
    );
  });

  it("none wanted: removes the plan's own conditions only (another plan's, an admin's and Ready stay)", () => {
    const other = wantedNodeConditions('other', 'Running', { phase: NodePhase.Draining });
    const admin: NodeConditionView = { type: 'MaintenancePlanned', status: 'True', reason: 'AdminRequested' };
    assert.deepEqual(nodeConditionChanges([ready, ...stamped(draining, EARLIER)], [], 'kernel', NOW), {
      set: [],
      remove: ['MaintenancePlanned', 'DrainInProgress', 'Drained'],
    });
    assert.deepEqual(
      nodeConditionChanges([ready, admin, ...stamped(other, EARLIER).slice(1)], [], 'kernel', NOW),
      {
        set: [],
        remove: [],
      },
    );
  });

  it("wanted: another writer's condition of a plan type is replaced (the plan holds the node)", () => {
    const admin: NodeConditionView = { type: 'MaintenancePlanned', status: 'True', reason: 'AdminRequested' };
    const { set } = nodeConditionChanges([admin], draining, 'kernel', NOW);
    assert.deepEqual(
      set.map((c) => c.type),
      ['MaintenancePlanned', 'DrainInProgress', 'Drained'],
    );
  });
});
