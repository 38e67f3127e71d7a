/**
 * Table test of the plan's stage machine (src/drain/plan-decide.ts): for a state and a context,
 * the actions `decidePlan` returns and whether it decides again at once. No Temporal, no I/O.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { UncordonPolicy } from '../../src/api/plan.js';
import type { NodePhase, PlanPhase } from '../../src/api/reasons.js';
import {
  LOST_NODE_MESSAGE,
  decidePlan,
  keepCordoning,
  type PlanAction,
  type PlanDecisionContext,
} from '../../src/drain/plan-decide.js';
import {
  initialPlanRunState,
  pendingNode,
  type PlanRunState,
  type PlanStage,
} from '../../src/drain/plan-drain.js';

const NOW = 1_700_000_000_000;
const DEADLINE = NOW + 3600_000;
const GRACE = 600_000;

// ---- fixture builders ----

class PlanBuilder {
  private readonly s: PlanRunState;
  constructor(stage: PlanStage, nodes: string[]) {
    this.s = initialPlanRunState(
      stage,
      {
        phase: 'Running',
        reason: stage === 'Cordon' ? 'Cordoning' : 'Draining',
        message: '',
        observedGeneration: 1,
        deadlineMs: DEADLINE,
        nodes: nodes.map(pendingNode),
        conditions: [],
      },
      { paused: false, aborted: false, released: false },
    );
  }
  /** The plan's phase, reason and message. */
  phase(phase: PlanPhase, reason: string, message = ''): this {
    Object.assign(this.s.plan, { phase, reason, message });
    return this;
  }
  cordoned(n: number): this {
    this.s.cordoned = n;
    return this;
  }
  /** Started and still running in `phase`. */
  running(node: string, phase: NodePhase = 'Draining'): this {
    this.s.started.push(node);
    this.node(node).phase = phase;
    return this;
  }
  /** Started and ended in `phase`. */
  ended(node: string, phase: NodePhase = 'Drained'): this {
    this.s.started.push(node);
    this.s.finished.push(node);
    this.node(node).phase = phase;
    return this;
  }
  /** Claimed by the plan (cordoned by it). */
  claimed(...nodes: string[]): this {
    for (const n of nodes) this.s.claimed[n] = { cordonedByPlan: true };
    return this;
  }
  with(
    over: Partial<
      Pick<PlanRunState, 'paused' | 'aborted' | 'released' | 'cancelled' | 'outsideWindow' | 'resumedAtMs'>
    >,
  ): this {
    Object.assign(this.s, over);
    return this;
  }
  private node(name: string) {
    return this.s.plan.nodes.find((n) => n.name === name)!;
  }
  build(): PlanRunState {
    return structuredClone(this.s);
  }
}
const aPlan = (stage: PlanStage, ...nodes: string[]) => new PlanBuilder(stage, nodes);

const ctx = (over: Partial<PlanDecisionContext> = {}): PlanDecisionContext => ({
  nowMs: NOW,
  held: false,
  pendingStarts: 0,
  handedBack: false,
  uncordon: 'OnRelease',
  maxUnavailableNodes: 1,
  cordonBatch: 2,
  lostGraceMs: GRACE,
  planName: 'p',
  ...over,
});

const phase = (p: PlanPhase, reason: string, message: string): PlanAction => ({
  do: 'phase',
  phase: p,
  reason,
  message,
});

interface Row {
  name: string;
  state: PlanRunState;
  ctx: PlanDecisionContext;
  actions: PlanAction[];
  again: boolean;
}

function check(rows: Row[]): void {
  for (const row of rows)
    it(row.name, () => {
      const before = structuredClone(row.state);
      const d = decidePlan(row.state, row.ctx);
      assert.deepEqual(d.actions, row.actions);
      assert.equal(d.again, row.again);
      assert.deepEqual(row.state, before, 'the decision changes nothing');
    });
}

describe('decidePlan: Cordon (spec.cordon AllAtStart)', () => {
  check([
    {
      name: 'cordons the first batch, in plan order',
      state: aPlan('Cordon', 'a', 'b', 'c').build(),
      ctx: ctx(),
      actions: [{ do: 'cordon', nodes: ['a', 'b'] }],
      again: false,
    },
    {
      name: 'cordons the next batch from where it stood',
      state: aPlan('Cordon', 'a', 'b', 'c').cordoned(2).build(),
      ctx: ctx(),
      actions: [{ do: 'cordon', nodes: ['c'] }],
      again: false,
    },
    {
      name: 'says Cordoning first when the phase says something else (a window just opened)',
      state: aPlan('Cordon', 'a').phase('Pending', 'Starting').build(),
      ctx: ctx(),
      actions: [
        phase('Running', 'Cordoning', 'cordoning 1 node(s) before the first eviction'),
        { do: 'cordon', nodes: ['a'] },
      ],
      again: false,
    },
    {
      name: 'held (paused or outside the windows): waits',
      state: aPlan('Cordon', 'a').build(),
      ctx: ctx({ held: true }),
      actions: [],
      again: false,
    },
    {
      name: 'every node tried: drains, saying so',
      state: aPlan('Cordon', 'a', 'b').cordoned(2).build(),
      ctx: ctx(),
      actions: [{ do: 'drain' }, phase('Running', 'Draining', 'draining 2 node(s)')],
      again: true,
    },
    {
      name: 'every node tried while held: drains, the phase stays',
      state: aPlan('Cordon', 'a').cordoned(1).build(),
      ctx: ctx({ held: true }),
      actions: [{ do: 'drain' }],
      again: true,
    },
    {
      name: 'aborted: drains (which settles) without cordoning the rest',
      state: aPlan('Cordon', 'a', 'b').with({ aborted: true }).build(),
      ctx: ctx(),
      actions: [{ do: 'drain' }],
      again: true,
    },
    {
      name: 'past the deadline: drains without cordoning the rest',
      state: aPlan('Cordon', 'a', 'b').build(),
      ctx: ctx({ nowMs: DEADLINE }),
      actions: [{ do: 'drain' }],
      again: true,
    },
  ]);

  it('keepCordoning: on while cordoning, not held, not aborted', () => {
    assert.equal(keepCordoning(aPlan('Cordon', 'a').build(), false), true);
    assert.equal(keepCordoning(aPlan('Cordon', 'a').build(), true), false);
    assert.equal(keepCordoning(aPlan('Cordon', 'a').with({ aborted: true }).build(), false), false);
    assert.equal(keepCordoning(aPlan('Drain', 'a').build(), false), false);
  });
});

describe('decidePlan: Drain', () => {
  check([
    {
      name: 'starts as many nodes as slots are free',
      state: aPlan('Drain', 'a', 'b', 'c').build(),
      ctx: ctx({ maxUnavailableNodes: 2 }),
      actions: [{ do: 'start', nodes: ['a', 'b'] }],
      again: true,
    },
    {
      name: 'a node that ended frees its slot for the next',
      state: aPlan('Drain', 'a', 'b').ended('a').build(),
      ctx: ctx(),
      actions: [{ do: 'start', nodes: ['b'] }],
      again: true,
    },
    {
      name: 'outside the windows: starts nothing',
      state: aPlan('Drain', 'a', 'b')
        .with({ outsideWindow: true })
        .phase('Paused', 'OutsideMaintenanceWindow')
        .build(),
      ctx: ctx({ held: true }),
      actions: [],
      again: false,
    },
    {
      name: 'every slot taken: words of the Running phase follow the nodes',
      state: aPlan('Drain', 'a', 'b').running('a').build(),
      ctx: ctx(),
      actions: [phase('Running', 'Draining', 'draining 1 of 2 node(s)')],
      again: false,
    },
    {
      name: 'words already current: nothing to do',
      state: aPlan('Drain', 'a', 'b')
        .running('a')
        .phase('Running', 'Draining', 'draining 1 of 2 node(s)')
        .build(),
      ctx: ctx(),
      actions: [],
      again: false,
    },
    {
      name: 'paused while Running: phase Paused',
      state: aPlan('Drain', 'a', 'b').running('a').with({ paused: true }).build(),
      ctx: ctx({ held: true }),
      actions: [phase('Paused', 'PausedByUser', 'no new evictions until resumed')],
      again: false,
    },
    {
      name: 'a running node silent past the deadline and its grace is lost',
      state: aPlan('Drain', 'a', 'b').running('a').build(),
      ctx: ctx({ nowMs: DEADLINE + GRACE }),
      actions: [{ do: 'lost', nodes: ['a'], message: LOST_NODE_MESSAGE }],
      again: true,
    },
    {
      name: 'not lost within the grace',
      state: aPlan('Drain', 'a').running('a').phase('Running', 'Draining', 'draining 1 of 1 node(s)').build(),
      ctx: ctx({ nowMs: DEADLINE + GRACE - 1 }),
      actions: [],
      again: false,
    },
    {
      name: 'not lost while held (a node paused past its deadline waits for the resume)',
      state: aPlan('Drain', 'a').running('a').with({ paused: true }).phase('Paused', 'PausedByUser').build(),
      ctx: ctx({ nowMs: DEADLINE + GRACE, held: true }),
      actions: [],
      again: false,
    },
    {
      name: 'the grace counts from the last resume when it came after the deadline',
      state: aPlan('Drain', 'a')
        .running('a')
        .with({ resumedAtMs: DEADLINE + 1000 })
        .phase('Running', 'Draining', 'draining 1 of 1 node(s)')
        .build(),
      ctx: ctx({ nowMs: DEADLINE + GRACE }),
      actions: [],
      again: false,
    },
    {
      name: 'not lost while a start is unanswered',
      state: aPlan('Drain', 'a').running('a').phase('Running', 'Draining', 'draining 1 of 1 node(s)').build(),
      ctx: ctx({ nowMs: DEADLINE + GRACE, pendingStarts: 1 }),
      actions: [],
      again: false,
    },
    {
      name: 'every node ended: settles',
      state: aPlan('Drain', 'a', 'b').ended('a').ended('b').build(),
      ctx: ctx(),
      actions: [{ do: 'settle' }],
      again: true,
    },
    {
      name: 'every node ended but a start is unanswered: waits',
      state: aPlan('Drain', 'a')
        .ended('a')
        .phase('Running', 'Draining', '1 of 1 node(s) done; the next starts')
        .build(),
      ctx: ctx({ pendingStarts: 1 }),
      actions: [],
      again: false,
    },
    {
      name: 'aborted with no node running: settles',
      state: aPlan('Drain', 'a', 'b').with({ aborted: true }).build(),
      ctx: ctx(),
      actions: [{ do: 'settle' }],
      again: true,
    },
    {
      name: 'past the deadline with no node running: settles (the rest never start)',
      state: aPlan('Drain', 'a', 'b').ended('a').build(),
      ctx: ctx({ nowMs: DEADLINE }),
      actions: [{ do: 'settle' }],
      again: true,
    },
  ]);
});

const settled = (...nodes: string[]) => aPlan('Settled', ...nodes).phase('Drained', 'AllNodesDrained');
const handBack = (nodes: string[], uncordon: boolean): PlanAction => ({ do: 'handBack', nodes, uncordon });

describe('decidePlan: Settled (hand back)', () => {
  check([
    {
      name: 'neither released nor aborted: waits',
      state: settled('a').claimed('a').build(),
      ctx: ctx(),
      actions: [],
      again: false,
    },
    ...(
      [
        ['OnRelease', true],
        ['AfterEachNode', true],
        ['Never', false],
      ] as [UncordonPolicy, boolean][]
    ).map(([uncordon, uncordons]): Row => ({
      name: `released, uncordon ${uncordon}: hands the claimed nodes back in name order (uncordon ${uncordons})`,
      state: settled('b', 'a').claimed('b', 'a').with({ released: true }).build(),
      ctx: ctx({ uncordon }),
      actions: [handBack(['a', 'b'], uncordons)],
      again: true,
    })),
    {
      name: 'released, uncordon OnRelease, handed back: Completed and ends',
      state: settled('a').with({ released: true }).build(),
      ctx: ctx({ handedBack: true }),
      actions: [
        phase('Completed', 'Released', 'released; nodes uncordoned'),
        { do: 'end', phase: 'Completed', reason: 'Released', message: 'released; nodes uncordoned' },
      ],
      again: false,
    },
    {
      name: 'released, uncordon Never, handed back: Completed, the nodes left cordoned',
      state: settled('a').with({ released: true }).build(),
      ctx: ctx({ handedBack: true, uncordon: 'Never' }),
      actions: [
        phase('Completed', 'Released', 'released; nodes left cordoned (uncordon: Never)'),
        {
          do: 'end',
          phase: 'Completed',
          reason: 'Released',
          message: 'released; nodes left cordoned (uncordon: Never)',
        },
      ],
      again: false,
    },
    {
      name: 'released, uncordon OnDelete: no hand-back; Completed, the nodes stay cordoned, the run waits',
      state: settled('a').claimed('a').with({ released: true }).build(),
      ctx: ctx({ uncordon: 'OnDelete' }),
      actions: [
        phase('Completed', 'Released', 'released; nodes stay cordoned until the plan is deleted'),
        { do: 'keepCordoned' },
      ],
      again: false,
    },
    {
      name: 'released again under OnDelete when already Completed: no new phase',
      state: settled('a').claimed('a').phase('Completed', 'Released').with({ released: true }).build(),
      ctx: ctx({ uncordon: 'OnDelete' }),
      actions: [{ do: 'keepCordoned' }],
      again: false,
    },
    {
      name: 'aborted (the plan deleted), uncordon OnDelete: hands back, uncordoning',
      state: settled('a').claimed('a').with({ aborted: true }).build(),
      ctx: ctx({ uncordon: 'OnDelete' }),
      actions: [handBack(['a'], true)],
      again: true,
    },
    {
      name: 'aborted, uncordon Never: hands back without uncordoning',
      state: settled('a').claimed('a').with({ aborted: true }).build(),
      ctx: ctx({ uncordon: 'Never' }),
      actions: [handBack(['a'], false)],
      again: true,
    },
    {
      name: 'aborted and handed back: Aborted and ends',
      state: settled('a').with({ aborted: true }).build(),
      ctx: ctx({ handedBack: true }),
      actions: [
        phase('Aborted', 'Aborted', 'aborted: no more evictions; nodes handed back per spec.uncordon'),
        {
          do: 'end',
          phase: 'Aborted',
          reason: 'Aborted',
          message: 'aborted: no more evictions; nodes handed back per spec.uncordon',
        },
      ],
      again: false,
    },
    {
      name: 'an abort that arrived during a release hand-back ends Aborted, not Completed',
      state: settled('a').with({ released: true, aborted: true }).build(),
      ctx: ctx({ handedBack: true }),
      actions: [
        phase('Aborted', 'Aborted', 'aborted: no more evictions; nodes handed back per spec.uncordon'),
        {
          do: 'end',
          phase: 'Aborted',
          reason: 'Aborted',
          message: 'aborted: no more evictions; nodes handed back per spec.uncordon',
        },
      ],
      again: false,
    },
    {
      name: 'cancelled from Temporal and handed back: Aborted/WorkflowCanceled',
      state: settled('a').with({ aborted: true, cancelled: true }).build(),
      ctx: ctx({ handedBack: true }),
      actions: [
        phase(
          'Aborted',
          'WorkflowCanceled',
          'cancelled from Temporal: no more evictions; nodes handed back per spec.uncordon',
        ),
        {
          do: 'end',
          phase: 'Aborted',
          reason: 'WorkflowCanceled',
          message: 'cancelled from Temporal: no more evictions; nodes handed back per spec.uncordon',
        },
      ],
      again: false,
    },
    {
      name: 'uncordon AfterEachNode, every node handed itself back: ends Completed as it stands',
      state: settled('a')
        .phase('Completed', 'AllNodesHandedBack', '1 node(s) drained and handed back')
        .build(),
      ctx: ctx({ uncordon: 'AfterEachNode' }),
      actions: [
        {
          do: 'end',
          phase: 'Completed',
          reason: 'AllNodesHandedBack',
          message: '1 node(s) drained and handed back',
        },
      ],
      again: false,
    },
    {
      name: 'uncordon AfterEachNode, a node still claimed: waits',
      state: settled('a', 'b')
        .claimed('b')
        .phase('Completed', 'AllNodesHandedBack', '1 node(s) drained and handed back')
        .build(),
      ctx: ctx({ uncordon: 'AfterEachNode' }),
      actions: [],
      again: false,
    },
  ]);
});

describe('decidePlan: Resolve', () => {
  check([
    {
      name: 'nothing to decide before the nodes are resolved (the workflow resolves them first)',
      state: aPlan('Resolve').build(),
      ctx: ctx(),
      actions: [],
      again: false,
    },
  ]);
});
