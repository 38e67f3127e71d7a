/**
 * The status projection's view of how a drain ended: a DeletePods drain reads
 * DrainedWithDeletions (not AllNodesDrained), and a node skipped at its deadline shows no blockers
 * that read as if they still applied (what held it goes into its message) and no pending pods.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planConditions, projectStatus, shownOutcome, type PlanState } from '../../src/drain/projection.js';
import type { NodeState } from '../../src/contract/progress.js';
import type { PreflightReport } from '../../src/api/preflight.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');

/** A pod held by its PodDisruptionBudget, as a node reports it. */
const blocker = {
  pod: 'app/db-0',
  pdb: 'app/db',
  reason: 'DisruptionBudget',
  message: 'waiting for PodDisruptionBudget app/db to allow a disruption',
};

function node(name: string, over: Partial<NodeState> = {}): NodeState {
  return {
    name,
    phase: 'Drained',
    podsTotal: 3,
    podsEvicted: 3,
    podsFailed: 0,
    blockedBy: [],
    attempts: 3,
    tooManyRequests: 0,
    ...over,
  };
}

function plan(nodes: NodeState[], over: Partial<PlanState> = {}): PlanState {
  return {
    phase: 'Drained',
    reason: 'AllNodesDrained',
    message: `${nodes.length} node(s) drained`,
    observedGeneration: 1,
    nodes,
    conditions: [],
    ...over,
  };
}

/** The status as the workflow writes it: conditions first, then the projection. */
function status(state: PlanState) {
  return projectStatus({ ...state, conditions: planConditions(state, NOW) });
}

describe('shownOutcome', () => {
  const rows: { what: string; state: PlanState; reason: string; message: RegExp }[] = [
    {
      what: 'a clean drain keeps AllNodesDrained',
      state: plan([node('n1'), node('n2')]),
      reason: 'AllNodesDrained',
      message: /^2 node\(s\) drained$/,
    },
    {
      what: 'pods deleted at the deadline: DrainedWithDeletions with the count',
      state: plan([node('n1'), node('n2', { podsEvicted: 1, podsDeleted: 2 })]),
      reason: 'DrainedWithDeletions',
      message: /^2 node\(s\) drained; 2 pod\(s\) deleted at the deadline without the Eviction API/,
    },
    {
      what: 'a node deleted during the drain: DrainedWithNodesDeleted with the pods that left without eviction',
      state: plan(
        [node('n1'), node('n2', { phase: 'Deleted', podsEvicted: 1, podsGoneWithoutEviction: 7 })],
        {
          message: '1 node(s) drained; deleted during the drain: n2',
        },
      ),
      reason: 'DrainedWithNodesDeleted',
      message:
        /^1 node\(s\) drained; deleted during the drain: n2; 7 pod\(s\) on the deleted node\(s\) left without eviction$/,
    },
    {
      what: 'a Running plan with deletions under way keeps its reason',
      state: plan([node('n1', { phase: 'Draining', podsDeleted: 1 })], {
        phase: 'Running',
        reason: 'Draining',
        message: 'draining 1 node(s)',
      }),
      reason: 'Draining',
      message: /^draining 1 node\(s\)$/,
    },
    {
      what: 'a released plan keeps Released (the Drained condition still tells)',
      state: plan([node('n1', { phase: 'Released', podsDeleted: 1 })], {
        phase: 'Completed',
        reason: 'Released',
        message: 'released; nodes uncordoned',
      }),
      reason: 'Released',
      message: /^released; nodes uncordoned$/,
    },
  ];
  for (const r of rows) {
    it(r.what, () => {
      const shown = shownOutcome(r.state);
      assert.equal(shown.reason, r.reason);
      assert.match(shown.message, r.message);
      const st = status(r.state);
      assert.equal(st.reason, r.reason, 'status.reason');
      assert.match(st.message ?? '', r.message, 'status.message');
    });
  }

  it('the Drained and Progressing conditions tell a forced drain from a clean one', () => {
    const clean = status(plan([node('n1')])).conditions!;
    const forced = status(plan([node('n1', { podsEvicted: 0, podsDeleted: 3 })])).conditions!;
    const by = (cs: typeof clean, t: string) => cs.find((c) => c.type === t)!;
    assert.equal(by(clean, 'Drained').reason, 'AllPodsEvicted');
    assert.equal(by(forced, 'Drained').status, 'True');
    assert.equal(by(forced, 'Drained').reason, 'PodsDeletedAtDeadline');
    assert.match(by(forced, 'Drained').message, /3 pod\(s\) were deleted at the deadline/);
    assert.equal(by(forced, 'Progressing').reason, 'DrainedWithDeletions');
    const progress = status(plan([node('n1', { podsEvicted: 0, podsDeleted: 3 })])).evictionProgress!;
    assert.equal(progress.deleted, 3);
    assert.equal(progress.pending, 0);
  });
});

describe('a node skipped at its deadline', () => {
  const skipped = node('n2', {
    phase: 'Skipped',
    reason: 'SkippedAtDeadline',
    message: 'still not drained at its deadline with 1 pod(s) left: skipped and handed back',
    podsTotal: 2,
    podsEvicted: 1,
    blockedBy: [blocker],
  });

  it('shows no blockers; its message names what held it', () => {
    const st = status(
      plan([node('n1'), skipped], { phase: 'Blocked', reason: 'NodesSkipped', message: 'skipped: n2' }),
    );
    const n2 = st.nodes!.find((n) => n.name === 'n2')!;
    assert.equal(n2.blockedBy, undefined);
    assert.equal(
      n2.message,
      'still not drained at its deadline with 1 pod(s) left: skipped and handed back; held then by app/db-0 (PDB app/db): DisruptionBudget',
    );
    assert.equal(st.evictionProgress!.pending, 0, 'the pod left on the skipped node is not pending');
    assert.equal(st.evictionProgress!.total, 5);
    assert.equal(st.evictionProgress!.evicted, 4);
  });

  it('a node still draining keeps its blockers and its pods stay pending', () => {
    const draining = {
      ...skipped,
      phase: 'Draining' as const,
      reason: 'Draining',
      message: '1 pod(s) to go',
    };
    const st = status(plan([node('n1'), draining], { phase: 'Running', reason: 'Draining', message: 'x' }));
    const n2 = st.nodes!.find((n) => n.name === 'n2')!;
    assert.deepEqual(
      n2.blockedBy?.map((b) => b.pod),
      ['app/db-0'],
    );
    assert.equal(n2.message, '1 pod(s) to go');
    assert.equal(st.evictionProgress!.pending, 1);
  });
});

describe('a Preflight plan', () => {
  const report = (over: Partial<PreflightReport> = {}): PreflightReport => ({
    summary: '2 node(s) examined',
    nodesExamined: 2,
    nodesBlocked: 1,
    podsToEvict: 5,
    podsSkipped: 0,
    blockerCount: 3,
    dryRunAccepted: 4,
    dryRunRefused: 1,
    nodes: [],
    ...over,
  });
  const previewed = (reason: string, r: PreflightReport) =>
    plan(
      [
        node('n1', { phase: 'Previewed', podsTotal: 5, podsEvicted: 0, attempts: 0 }),
        node('n2', { phase: 'Previewed', podsTotal: 0, podsEvicted: 0, attempts: 0 }),
      ],
      { phase: 'Previewed', reason, message: r.summary, preflight: r },
    );
  // [what, reason, report, Blocked status, Blocked message]
  const rows: Array<[string, string, PreflightReport, string, RegExp]> = [
    [
      'blockers found: Blocked True with the counts',
      'BlockersFound',
      report(),
      'True',
      /found 3 blocker\(s\) and 1 dry-run refusal\(s\) on 1 of 2 node\(s\) that would keep a drain from finishing/,
    ],
    [
      'nothing found: Blocked False',
      'NoBlockers',
      report({ nodesBlocked: 0, blockerCount: 0, dryRunRefused: 0 }),
      'False',
      /found nothing that would block a drain/,
    ],
    [
      'a node not examined: Blocked Unknown',
      'PreflightIncomplete',
      report({
        nodes: [
          {
            name: 'n2',
            error: 'HTTP 403',
            podsToEvict: 0,
            podsSkipped: 0,
            podsBlocked: 0,
            blockerCount: 0,
            dryRunAccepted: 0,
            dryRunRefused: 0,
          },
        ],
      }),
      'Unknown',
      /1 node\(s\) could not be examined/,
    ],
  ];
  for (const [what, reason, r, blockedStatus, message] of rows)
    it(what, () => {
      const st = status(previewed(reason, r));
      const blocked = st.conditions?.find((c) => c.type === 'Blocked');
      assert.deepEqual([blocked?.status, blocked?.reason], [blockedStatus, reason]);
      assert.match(blocked?.message ?? '', message);
      const drained = st.conditions?.find((c) => c.type === 'Drained');
      assert.deepEqual([drained?.status, drained?.reason], ['False', 'PreviewOnly']);
      assert.equal(st.evictionProgress, undefined, 'no evictions pending for a plan that never evicts');
      assert.equal(st.nodes?.[0]?.podsTotal, 5, 'the node still shows the pods a drain would evict');
    });
  it('while previewing, and after an abort mid-preview, no eviction counters either', () => {
    const running = plan([node('n1', { phase: 'Pending', podsTotal: 0, podsEvicted: 0 })], {
      phase: 'Running',
      reason: 'Previewing',
    });
    assert.equal(status(running).evictionProgress, undefined);
    const aborted = plan(
      [
        node('n1', { phase: 'Previewed', podsTotal: 4, podsEvicted: 0 }),
        node('n2', { phase: 'Pending', podsTotal: 0, podsEvicted: 0 }),
      ],
      { phase: 'Aborted', reason: 'Aborted' },
    );
    assert.equal(status(aborted).evictionProgress, undefined);
    // A drain plan keeps them.
    assert.ok(status(plan([node('n1')])).evictionProgress);
  });
});

describe('what a paused node shows', () => {
  const rows: { what: string; phase: NodeState['phase']; shown: string[] | undefined }[] = [
    { what: 'paused: no blockers (the pause holds it)', phase: 'Paused', shown: undefined },
    { what: 'blocked: its blockers', phase: 'Blocked', shown: ['app/db-0'] },
    { what: 'draining: its blockers', phase: 'Draining', shown: ['app/db-0'] },
  ];
  for (const r of rows)
    it(r.what, () => {
      const n = node('n1', { phase: r.phase, podsEvicted: 2, blockedBy: [blocker] });
      const st = status(plan([n], { phase: 'Paused', reason: 'PausedByUser', message: 'paused' }));
      assert.deepEqual(
        st.nodes![0]!.blockedBy?.map((b) => b.pod),
        r.shown,
      );
      assert.equal(st.evictionProgress!.pending, 1, 'its pod is still pending either way');
    });
});

describe('Blocked beside a PodDisruptionBudget block', () => {
  const rows: { what: string; kind: string; blocked: [string, string]; message: RegExp }[] = [
    {
      what: 'a block only a person can clear (Never) makes Blocked True, naming the node and the pod',
      kind: 'Never',
      blocked: ['True', 'Never'],
      message: /^node n2: pod app\/db-0: /,
    },
    {
      what: 'a block that clears by itself (Transient) leaves Blocked False, saying PDBs pace the evictions',
      kind: 'Transient',
      blocked: ['False', 'NotBlocked'],
      message: /PodDisruptionBudgets pace its evictions/,
    },
  ];
  for (const r of rows)
    it(r.what, () => {
      const draining = node('n2', {
        phase: 'Draining',
        podsEvicted: 2,
        blockedBy: [{ ...blocker, kind: r.kind } as NodeState['blockedBy'][number]],
      });
      const st = status(plan([node('n1'), draining], { phase: 'Running', reason: 'Draining', message: 'x' }));
      const blocked = st.conditions?.find((c) => c.type === 'Blocked');
      assert.deepEqual([blocked?.status, blocked?.reason], r.blocked);
      assert.match(blocked?.message ?? '', r.message);
      assert.equal(st.conditions?.find((c) => c.type === 'DisruptionBlocked')?.status, 'True');
    });
});
