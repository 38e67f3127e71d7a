/**
 * Table tests of the plan drain's pure reducers (src/drain/plan-drain.ts): node progress merged in,
 * which nodes start, when the drain settles, the plan's outcome. No Temporal, no I/O.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Blocker } from '../../src/api/plan.js';
import type { NodePhase } from '../../src/api/reasons.js';
import {
  drainSettled,
  initialPlanRunState,
  markFinished,
  mergeNodeProgress,
  nodesToStart,
  nodeWorkflowFailed,
  pendingNode,
  planOutcome,
  runningNodes,
  type PlanEvent,
  type PlanRunState,
} from '../../src/drain/plan-drain.js';
import type { NodeProgress } from '../../src/contract/progress.js';

const NOW = 1_700_000_000_000;
const DEADLINE = NOW + 3600_000;

// ---- fixture builders ----

class PlanBuilder {
  private readonly s: PlanRunState;
  constructor(nodes: string[]) {
    this.s = initialPlanRunState(
      'Drain',
      {
        phase: 'Running',
        reason: 'Draining',
        message: '',
        observedGeneration: 1,
        deadlineMs: DEADLINE,
        nodes: nodes.map(pendingNode),
        conditions: [],
      },
      { paused: false, aborted: false, released: false },
    );
  }
  started(...nodes: string[]): this {
    this.s.started.push(...nodes);
    return this;
  }
  /** Started and ended in `phase` (with `reason`, blockers). */
  ended(node: string, phase: NodePhase, reason?: string, blockers: Blocker[] = []): this {
    if (!this.s.started.includes(node)) this.s.started.push(node);
    Object.assign(this.node(node), { phase, reason, message: `${node} ${phase}`, blockedBy: blockers });
    this.s.finished.push(node);
    return this;
  }
  /** Started and still running in `phase`. */
  running(node: string, phase: NodePhase, reason?: string): this {
    if (!this.s.started.includes(node)) this.s.started.push(node);
    Object.assign(this.node(node), { phase, reason });
    return this;
  }
  /** Pods of `node` listed in status.nodes[].skipped with `reason`. */
  skipped(node: string, reason: string, ...pods: string[]): this {
    this.node(node).skipped = pods.map((pod) => ({ pod, reason, message: `${pod} ${reason}` }));
    return this;
  }
  with(over: Partial<Pick<PlanRunState, 'paused' | 'aborted' | 'stopStarting'>>): this {
    Object.assign(this.s, over);
    return this;
  }
  noDeadline(): this {
    delete this.s.plan.deadlineMs;
    return this;
  }
  private node(name: string) {
    return this.s.plan.nodes.find((n) => n.name === name)!;
  }
  build(): PlanRunState {
    return this.s;
  }
}
const aPlan = (...nodes: string[]) => new PlanBuilder(nodes);

class ProgressBuilder {
  private readonly p: NodeProgress;
  constructor(node: string) {
    this.p = {
      node,
      phase: 'Draining',
      reason: 'Draining',
      podsTotal: 0,
      podsEvicted: 0,
      podsFailed: 0,
      blockedBy: [],
      attempts: 0,
      tooManyRequests: 0,
    };
  }
  phase(phase: NodePhase, reason?: string, message?: string): this {
    Object.assign(this.p, { phase, reason, message });
    return this;
  }
  blockers(...b: Blocker[]): this {
    this.p.blockedBy = b;
    return this;
  }
  counts(podsTotal: number, podsEvicted: number, podsFailed = 0): this {
    Object.assign(this.p, { podsTotal, podsEvicted, podsFailed });
    return this;
  }
  claimed(cordonedByPlan?: boolean): this {
    this.p.claimed = true;
    if (cordonedByPlan !== undefined) this.p.cordonedByPlan = cordonedByPlan;
    return this;
  }
  final(): this {
    this.p.final = true;
    return this;
  }
  build(): NodeProgress {
    return structuredClone(this.p);
  }
}
const progress = (node: string) => new ProgressBuilder(node);
const blocker = (pod: string, reason: string, pdb?: string): Blocker => ({
  pod,
  ...(pdb ? { pdb } : {}),
  reason,
  message: `${reason} of ${pod}`,
});
const warning = (reason: string, message: string): PlanEvent => ({ type: 'Warning', reason, message });

// ---- mergeNodeProgress ----

describe('mergeNodeProgress', () => {
  it('updates the node from the report', () => {
    const s = aPlan('n1', 'n2').started('n1').build();
    const p = progress('n1')
      .phase('Draining', 'Draining', '3 pod(s) to go')
      .counts(5, 2, 1)
      .blockers(blocker('app/a', 'DisruptionBudget', 'app/p'))
      .build();
    Object.assign(p, { attempts: 7, tooManyRequests: 3, nextActionAtMs: NOW + 5000, lastError: 'boom' });
    assert.deepEqual(mergeNodeProgress(s, p), []);
    assert.deepEqual(s.plan.nodes[0], {
      name: 'n1',
      phase: 'Draining',
      reason: 'Draining',
      message: '3 pod(s) to go',
      podsTotal: 5,
      podsEvicted: 2,
      podsFailed: 1,
      blockedBy: [blocker('app/a', 'DisruptionBudget', 'app/p')],
      attempts: 7,
      tooManyRequests: 3,
      nextActionAtMs: NOW + 5000,
      lastError: 'boom',
    });
    assert.deepEqual(s.plan.nodes[1], pendingNode('n2'));
    assert.deepEqual(s.finished, []);
  });

  const claims: { name: string; p: ProgressBuilder; claimed: PlanRunState['claimed'] }[] = [
    {
      name: 'records a claim this plan cordoned',
      p: progress('n1').claimed(true),
      claimed: { n1: { cordonedByPlan: true } },
    },
    {
      name: 'records a claim of a node that was unschedulable before',
      p: progress('n1').claimed(false),
      claimed: { n1: { cordonedByPlan: false } },
    },
    {
      name: 'a claim without cordonedByPlan counts as not cordoned by the plan',
      p: progress('n1').claimed(),
      claimed: { n1: { cordonedByPlan: false } },
    },
    { name: 'no claim, no record', p: progress('n1'), claimed: {} },
  ];
  for (const c of claims) {
    it(c.name, () => {
      const s = aPlan('n1').started('n1').build();
      mergeNodeProgress(s, c.p.build());
      assert.deepEqual(s.claimed, c.claimed);
    });
  }

  const finishing: { name: string; p: ProgressBuilder; finished: string[]; stopStarting: boolean }[] = [
    {
      name: 'a non-final report does not end the node, whatever its phase',
      p: progress('n1').phase('Blocked', 'PodsNotEvictable'),
      finished: [],
      stopStarting: false,
    },
    {
      name: 'a final report ends the node',
      p: progress('n1').phase('Drained', 'Drained').final(),
      finished: ['n1'],
      stopStarting: false,
    },
    {
      name: 'a final Failed report ends the node and stops further starts',
      p: progress('n1').phase('Failed', 'ActivityFailed').final(),
      finished: ['n1'],
      stopStarting: true,
    },
    {
      name: 'a non-final Failed phase does not stop starts yet',
      p: progress('n1').phase('Failed', 'ActivityFailed'),
      finished: [],
      stopStarting: false,
    },
  ];
  for (const c of finishing) {
    it(c.name, () => {
      const s = aPlan('n1', 'n2').started('n1').build();
      mergeNodeProgress(s, c.p.build());
      assert.deepEqual(s.finished, c.finished);
      assert.equal(s.stopStarting, c.stopStarting);
    });
  }

  it('ignores a late non-final report after the end', () => {
    const s = aPlan('n1').ended('n1', 'Drained', 'Drained').build();
    const before = structuredClone(s);
    const events = mergeNodeProgress(
      s,
      progress('n1')
        .phase('Blocked', 'NodeUncordonedExternally')
        .blockers(blocker('app/a', 'NoController'))
        .build(),
    );
    assert.deepEqual(events, []);
    assert.deepEqual(s, before);
  });

  it('applies a final report after the end (the child result came first), once in finished', () => {
    const s = aPlan('n1').ended('n1', 'Drained', 'Drained').build();
    mergeNodeProgress(
      s,
      progress('n1').phase('Drained', 'Drained', 'all 3 pod(s) evicted').counts(3, 3).final().build(),
    );
    assert.equal(s.plan.nodes[0]!.podsEvicted, 3);
    assert.deepEqual(s.finished, ['n1']);
  });

  it('ignores a final report that arrives after the node was handed back (Released)', () => {
    const s = aPlan('n1').ended('n1', 'Released', 'Drained').build();
    const before = structuredClone(s);
    const events = mergeNodeProgress(
      s,
      progress('n1')
        .phase('Drained', 'Drained', 'all 3 pod(s) evicted')
        .counts(3, 3)
        .claimed(true)
        .final()
        .build(),
    );
    assert.deepEqual(events, []);
    assert.deepEqual(s, before, 'still Released, not claimed again');
  });

  it('ignores a report for an unknown node', () => {
    const s = aPlan('n1').started('n1').build();
    const before = structuredClone(s);
    assert.deepEqual(
      mergeNodeProgress(s, progress('n9').phase('Deleted', 'NodeDeleted').claimed(true).final().build()),
      [],
    );
    assert.deepEqual(s, before);
  });

  const news: { name: string; reports: ProgressBuilder[]; events: PlanEvent[] }[] = [
    {
      name: 'one Warning per new node reason that is news',
      reports: [
        progress('n1').phase('Waiting', 'NodeHeldByOtherPlan', 'node n1 is held by plan other'),
        progress('n2').phase('Blocked', 'NodeUncordonedExternally', 'n2 uncordoned'),
        progress('n1').phase('Deleted', 'NodeDeleted', 'n1 deleted').final(),
      ],
      events: [
        warning('NodeHeldByOtherPlan', 'node n1 is held by plan other'),
        warning('NodeUncordonedExternally', 'n2 uncordoned'),
        warning('NodeDeleted', 'n1 deleted'),
      ],
    },
    {
      name: 'never twice for the same node and reason (even after another reason in between)',
      reports: [
        progress('n1').phase('Blocked', 'NodeUncordonedExternally', 'first'),
        progress('n1').phase('Draining', 'Draining'),
        progress('n1').phase('Blocked', 'NodeUncordonedExternally', 'again'),
      ],
      events: [warning('NodeUncordonedExternally', 'first')],
    },
    {
      name: 'the same reason on another node is news again',
      reports: [
        progress('n1').phase('Blocked', 'NodeUncordonedExternally', 'a'),
        progress('n2').phase('Blocked', 'NodeUncordonedExternally', 'b'),
      ],
      events: [warning('NodeUncordonedExternally', 'a'), warning('NodeUncordonedExternally', 'b')],
    },
    {
      name: 'a news reason without a message gets one',
      reports: [progress('n1').phase('Waiting', 'NodeHeldByOtherPlan')],
      events: [warning('NodeHeldByOtherPlan', 'node n1: NodeHeldByOtherPlan')],
    },
    {
      name: 'reasons that are not news: none',
      reports: [
        progress('n1').phase('Draining', 'Draining'),
        progress('n1').phase('Paused', 'PausedByUser'),
        progress('n1').phase('Blocked', 'PodsNotEvictable'),
        progress('n1').phase('Blocked', 'DeadlineExceeded').final(),
      ],
      events: [],
    },
    {
      name: 'one Warning per new pod blocker other than DisruptionBudget, never twice',
      reports: [
        progress('n1').blockers(
          blocker('app/a', 'DisruptionBudget', 'app/p'),
          blocker('app/b', 'NoController'),
        ),
        progress('n1').blockers(blocker('app/b', 'NoController'), blocker('app/c', 'Forbidden')),
        progress('n1').blockers(blocker('app/b', 'EmptyDirData')),
      ],
      events: [
        warning('NoController', 'node n1: pod app/b: NoController of app/b'),
        warning('Forbidden', 'node n1: pod app/c: Forbidden of app/c'),
        warning('EmptyDirData', 'node n1: pod app/b: EmptyDirData of app/b'),
      ],
    },
    {
      name: 'a node reason and pod blockers in one report, the node first',
      reports: [
        progress('n2')
          .phase('Blocked', 'NodeUncordonedExternally', 'u')
          .blockers(blocker('app/z', 'CallFailed')),
      ],
      events: [
        warning('NodeUncordonedExternally', 'u'),
        warning('CallFailed', 'node n2: pod app/z: CallFailed of app/z'),
      ],
    },
  ];
  for (const c of news) {
    it(c.name, () => {
      const s = aPlan('n1', 'n2').started('n1', 'n2').build();
      assert.deepEqual(
        c.reports.flatMap((r) => mergeNodeProgress(s, r.build())),
        c.events,
      );
    });
  }

  it('remembers at most 2000 announced keys, dropping the oldest', () => {
    const s = aPlan('n1').started('n1').build();
    const many = Array.from({ length: 2001 }, (_, i) => blocker(`app/p${i}`, 'NoController'));
    assert.equal(
      mergeNodeProgress(
        s,
        progress('n1')
          .blockers(...many)
          .build(),
      ).length,
      2001,
    );
    assert.equal(s.announced.length, 2000);
    assert.equal(s.announced[0], 'app/p1|NoController');
    assert.equal(mergeNodeProgress(s, progress('n1').blockers(many[0]!).build()).length, 1);
    assert.equal(mergeNodeProgress(s, progress('n1').blockers(many[2000]!).build()).length, 0);
  });
});

// ---- markFinished, nodeWorkflowFailed, runningNodes ----

describe('markFinished and nodeWorkflowFailed', () => {
  it('markFinished is idempotent and stops starts only for a Failed node', () => {
    const s = aPlan('n1', 'n2')
      .running('n1', 'Blocked', 'DeadlineExceeded')
      .running('n2', 'Failed', 'ActivityFailed')
      .build();
    markFinished(s, 'n1');
    markFinished(s, 'n1');
    assert.deepEqual([s.finished, s.stopStarting], [['n1'], false]);
    markFinished(s, 'n2');
    assert.deepEqual([s.finished, s.stopStarting], [['n1', 'n2'], true]);
  });
  it('nodeWorkflowFailed marks the node Failed/NodeWorkflowFailed, ended, and stops starts', () => {
    const s = aPlan('n1', 'n2').running('n1', 'Draining', 'Draining').build();
    nodeWorkflowFailed(s, 'n1', 'child failed');
    assert.deepEqual(
      [s.plan.nodes[0]!.phase, s.plan.nodes[0]!.reason, s.plan.nodes[0]!.message, s.finished, s.stopStarting],
      ['Failed', 'NodeWorkflowFailed', 'child failed', ['n1'], true],
    );
    assert.deepEqual(runningNodes(s), []);
  });
  it('runningNodes: started and not ended, in start order', () => {
    const s = aPlan('a', 'b', 'c', 'd').started('c', 'a', 'b').ended('a', 'Drained', 'Drained').build();
    assert.deepEqual(runningNodes(s), ['c', 'b']);
  });
});

// ---- nodesToStart ----

describe('nodesToStart', () => {
  const cases: { name: string; plan: PlanBuilder; max: number; nowMs?: number; start: string[] }[] = [
    {
      name: 'the first nodes in plan order, as many as slots',
      plan: aPlan('n1', 'n2', 'n3'),
      max: 2,
      start: ['n1', 'n2'],
    },
    { name: 'more slots than nodes', plan: aPlan('n1', 'n2'), max: 5, start: ['n1', 'n2'] },
    {
      name: 'an ended node frees its slot',
      plan: aPlan('n1', 'n2', 'n3', 'n4').ended('n1', 'Drained', 'Drained').running('n2', 'Draining'),
      max: 2,
      start: ['n3'],
    },
    {
      name: 'a Blocked node (PodsNotEvictable, not ended) keeps its slot',
      plan: aPlan('n1', 'n2').running('n1', 'Blocked', 'PodsNotEvictable'),
      max: 1,
      start: [],
    },
    {
      name: 'all slots taken',
      plan: aPlan('n1', 'n2', 'n3').running('n1', 'Draining').running('n2', 'Draining'),
      max: 2,
      start: [],
    },
    {
      name: 'a lowered maxUnavailableNodes starts nothing',
      plan: aPlan('n1', 'n2', 'n3').running('n1', 'Draining').running('n2', 'Draining'),
      max: 1,
      start: [],
    },
    { name: 'every node started', plan: aPlan('n1').ended('n1', 'Drained', 'Drained'), max: 1, start: [] },
    { name: 'paused', plan: aPlan('n1', 'n2').with({ paused: true }), max: 2, start: [] },
    { name: 'aborted', plan: aPlan('n1', 'n2').with({ aborted: true }), max: 2, start: [] },
    {
      name: 'after a Failed node',
      plan: aPlan('n1', 'n2', 'n3').ended('n1', 'Failed', 'ActivityFailed').with({ stopStarting: true }),
      max: 2,
      start: [],
    },
    { name: 'at the deadline', plan: aPlan('n1', 'n2'), max: 2, nowMs: DEADLINE, start: [] },
    {
      name: 'just before the deadline',
      plan: aPlan('n1', 'n2'),
      max: 2,
      nowMs: DEADLINE - 1,
      start: ['n1', 'n2'],
    },
    { name: 'no deadline', plan: aPlan('n1').noDeadline(), max: 1, nowMs: DEADLINE * 2, start: ['n1'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(nodesToStart(c.plan.build(), c.max, c.nowMs ?? NOW), c.start);
    });
  }
});

// ---- drainSettled ----

describe('drainSettled', () => {
  const cases: { name: string; plan: PlanBuilder; nowMs?: number; settled: boolean }[] = [
    {
      name: 'a node still runs',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained').running('n2', 'Draining'),
      settled: false,
    },
    {
      name: 'a node still runs past the deadline',
      plan: aPlan('n1').running('n1', 'Draining'),
      nowMs: DEADLINE,
      settled: false,
    },
    {
      name: 'a node still runs after an abort',
      plan: aPlan('n1').running('n1', 'Draining').with({ aborted: true }),
      settled: false,
    },
    {
      name: 'every node started and ended',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained').ended('n2', 'Blocked', 'DeadlineExceeded'),
      settled: true,
    },
    {
      name: 'nodes not started yet, before the deadline',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained'),
      settled: false,
    },
    {
      name: 'nodes not started, past the deadline',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained'),
      nowMs: DEADLINE,
      settled: true,
    },
    { name: 'nodes not started, aborted', plan: aPlan('n1', 'n2').with({ aborted: true }), settled: true },
    {
      name: 'nodes not started after a failure',
      plan: aPlan('n1', 'n2').ended('n1', 'Failed', 'X').with({ stopStarting: true }),
      settled: true,
    },
    {
      name: 'paused with nodes not started is not settled',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained').with({ paused: true }),
      settled: false,
    },
    {
      name: 'no deadline, nodes not started',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained').noDeadline(),
      nowMs: DEADLINE * 2,
      settled: false,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(drainSettled(c.plan.build(), c.nowMs ?? NOW), c.settled);
    });
  }
});

// ---- planOutcome ----

describe('planOutcome', () => {
  const cases: {
    name: string;
    plan: PlanBuilder;
    outcome: { phase: string; reason: string; message: string | RegExp };
    /** `name phase/reason` of every node afterwards. */
    nodes?: string[];
  }[] = [
    {
      name: 'every node drained: Drained',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained', 'Drained').ended('n2', 'Drained', 'Drained'),
      outcome: { phase: 'Drained', reason: 'AllNodesDrained', message: '2 node(s) drained' },
    },
    {
      name: 'drained with pods that came back and were left: Drained, counting them (not other skipped pods)',
      plan: aPlan('n1', 'n2')
        .ended('n1', 'Drained', 'Drained')
        .skipped('n1', 'ReturnsToNode', 'app/a', 'app/b')
        .ended('n2', 'Drained', 'Drained')
        .skipped('n2', 'DrainLabelSkip', 'app/c'),
      outcome: {
        phase: 'Drained',
        reason: 'AllNodesDrained',
        message: '2 node(s) drained; 2 pod(s) came back to their node and were left there (ReturnsToNode)',
      },
    },
    {
      name: 'drained and deleted nodes: Drained, naming the deleted',
      plan: aPlan('n1', 'n2', 'n3')
        .ended('n1', 'Drained', 'Drained')
        .ended('n2', 'Deleted', 'NodeDeleted')
        .ended('n3', 'Deleted', 'NodeDeleted'),
      outcome: {
        phase: 'Drained',
        reason: 'AllNodesDrained',
        message: '1 node(s) drained; deleted during the drain: n2, n3',
      },
    },
    {
      name: 'a Failed node: Failed with its reason, naming every failed node; never-started nodes marked',
      plan: aPlan('n1', 'n2', 'n3', 'n4')
        .ended('n1', 'Drained', 'Drained')
        .ended('n2', 'Failed', 'ActivityFailed')
        .ended('n3', 'Failed', 'NodeWorkflowFailed')
        .with({ stopStarting: true }),
      outcome: { phase: 'Failed', reason: 'ActivityFailed', message: 'n2: n2 Failed; n3: n3 Failed' },
      nodes: [
        'n1 Drained/Drained',
        'n2 Failed/ActivityFailed',
        'n3 Failed/NodeWorkflowFailed',
        'n4 Blocked/NotStarted',
      ],
    },
    {
      name: 'a Failed node without a reason: NodeFailed',
      plan: aPlan('n1').ended('n1', 'Failed'),
      outcome: { phase: 'Failed', reason: 'NodeFailed', message: 'n1: n1 Failed' },
    },
    {
      name: 'a node past its deadline: Blocked/DeadlineExceeded, naming the blockers',
      plan: aPlan('n1', 'n2')
        .ended('n1', 'Drained', 'Drained')
        .ended('n2', 'Blocked', 'DeadlineExceeded', [
          blocker('app/a', 'DisruptionBudget', 'app/p'),
          blocker('app/b', 'NotEvicted'),
        ]),
      outcome: {
        phase: 'Blocked',
        reason: 'DeadlineExceeded',
        message:
          'deadline passed; still blocking: app/a (PDB app/p): DisruptionBudget; app/b: NotEvicted; the nodes stay cordoned and claimed: give the plan more time with drainflow extend PLAN --by DURATION (or raise spec.drainTimeoutSeconds), or release, abort or delete it to hand them back',
      },
    },
    {
      name: 'nodes never started before the deadline: marked, and the plan is DeadlineExceeded',
      plan: aPlan('n1', 'n2', 'n3').ended('n1', 'Drained', 'Drained'),
      outcome: {
        phase: 'Blocked',
        reason: 'DeadlineExceeded',
        message:
          'deadline passed; still blocking: nodes not drained; the nodes stay cordoned and claimed: give the plan more time with drainflow extend PLAN --by DURATION (or raise spec.drainTimeoutSeconds), or release, abort or delete it to hand them back',
      },
      nodes: ['n1 Drained/Drained', 'n2 Blocked/DeadlineExceeded', 'n3 Blocked/DeadlineExceeded'],
    },
    {
      name: 'a node ended Blocked for another reason: PodsNotEvictable, naming the blockers',
      plan: aPlan('n1', 'n2')
        .ended('n1', 'Drained', 'Drained')
        .ended('n2', 'Blocked', 'PodsNotEvictable', [blocker('app/a', 'NoController')]),
      outcome: {
        phase: 'Blocked',
        reason: 'PodsNotEvictable',
        message: 'pods that cannot be evicted: app/a: NoController',
      },
    },
    {
      name: 'a node whose workflow was cancelled from Temporal: Blocked/NodeDrainCanceled, not PodsNotEvictable',
      plan: aPlan('n1', 'n2').ended('n1', 'Drained', 'Drained').ended('n2', 'Aborted', 'WorkflowCanceled'),
      outcome: {
        phase: 'Blocked',
        reason: 'NodeDrainCanceled',
        message:
          'the drain of n2 was cancelled from Temporal; release, abort or delete the plan to hand the nodes back',
      },
    },
    {
      name: 'at most 10 blockers in the message, and how many more',
      plan: aPlan('n1').ended(
        'n1',
        'Blocked',
        'DeadlineExceeded',
        Array.from({ length: 12 }, (_, i) => blocker(`app/p${String(i).padStart(2, '0')}`, 'NotEvicted')),
      ),
      outcome: {
        phase: 'Blocked',
        reason: 'DeadlineExceeded',
        message: /app\/p09: NotEvicted; and 2 more; the nodes stay cordoned/,
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = c.plan.build();
      const o = planOutcome(s);
      assert.equal(o.phase, c.outcome.phase);
      assert.equal(o.reason, c.outcome.reason);
      if (typeof c.outcome.message === 'string') assert.equal(o.message, c.outcome.message);
      else assert.match(o.message, c.outcome.message);
      if (c.nodes)
        assert.deepEqual(
          s.plan.nodes.map((n) => `${n.name} ${n.phase}/${n.reason}`),
          c.nodes,
        );
    });
  }

  it('names the plan in the DeadlineExceeded remedy, so it can be pasted', () => {
    const s = aPlan('n1', 'n2').ended('n1', 'Drained', 'Drained').build();
    const o = planOutcome(s, 'kernel-patch');
    assert.equal(o.reason, 'DeadlineExceeded');
    assert.match(o.message, /give the plan more time with drainflow extend kernel-patch --by DURATION /);
  });

  it('says why a node was not started', () => {
    const deadline = aPlan('n1', 'n2').ended('n1', 'Drained', 'Drained').build();
    planOutcome(deadline);
    assert.equal(deadline.plan.nodes[1]!.message, 'deadline passed before the node was started');
    const failure = aPlan('n1', 'n2').ended('n1', 'Failed', 'X').with({ stopStarting: true }).build();
    planOutcome(failure);
    assert.equal(failure.plan.nodes[1]!.message, 'not started: another node of the plan failed');
  });
});
