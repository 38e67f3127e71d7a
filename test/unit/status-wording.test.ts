/**
 * What the status says in words (src/drain/projection.ts, src/drain/plan-drain.ts), where a new
 * user read something untrue: a node's name said twice, a failed hook "retried until the
 * deadline", an aborted node still "blocked by" pods, the last node left to SkipNode told "the
 * plan goes on", an ended plan "still blocking: nothing recorded", and "N pod(s) to go" while
 * evicted pods wait out their grace period.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Blocker } from '../../src/api/plan.js';
import { decideNode } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { initialNodeState, type NodeDrainState } from '../../src/drain/node/state.js';
import { planOutcome, runningSummary, type PlanRunState } from '../../src/drain/plan-drain.js';
import {
  aboutNode,
  deadlineAction,
  planConditions,
  projectStatus,
  type PlanState,
} from '../../src/drain/projection.js';
import type { NodeState } from '../../src/contract/progress.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const blocker: Blocker = {
  pod: 'app/db-0',
  pdb: 'app/db',
  reason: 'DisruptionBudget',
  message: 'waiting for PodDisruptionBudget app/db to allow a disruption',
};

function node(name: string, over: Partial<NodeState> = {}): NodeState {
  return {
    name,
    phase: 'Drained',
    podsTotal: 2,
    podsEvicted: 2,
    podsFailed: 0,
    blockedBy: [],
    attempts: 2,
    tooManyRequests: 0,
    ...over,
  };
}

function plan(nodes: NodeState[], over: Partial<PlanState> = {}): PlanState {
  return {
    phase: 'Running',
    reason: 'Draining',
    message: 'draining',
    observedGeneration: 1,
    nodes,
    conditions: [],
    startedAtMs: NOW,
    deadlineMs: NOW + 3_600_000,
    ...over,
  };
}

function run(nodes: NodeState[], started: string[], finished: string[] = []): PlanRunState {
  return {
    stage: 'Drain',
    plan: plan(nodes),
    paused: false,
    aborted: false,
    released: false,
    claimed: {},
    started,
    finished,
    cordoned: 0,
    stopStarting: false,
    announced: [],
    continuedRuns: 0,
  };
}

describe('aboutNode', () => {
  const rows: [string, string, string][] = [
    ['a message that names the node', 'node n0 is held by plan p1', 'node n0 is held by plan p1'],
    ['a message about something else', '3 pod(s) to go', 'node n0: 3 pod(s) to go'],
    ['another node named first', 'node n01 is held by plan p1', 'node n0: node n01 is held by plan p1'],
  ];
  for (const [what, message, want] of rows) it(what, () => assert.equal(aboutNode('n0', message), want));
});

describe('status wording', () => {
  it("a node waiting for another plan's claim: its name once in the Blocked condition", () => {
    const state = plan([
      node('n0', {
        phase: 'Waiting',
        reason: 'NodeHeldByOtherPlan',
        message: 'node n0 is held by plan p1',
        podsTotal: 0,
        podsEvicted: 0,
      }),
    ]);
    const blocked = planConditions(state, NOW).find((c) => c.type === 'Blocked')!;
    assert.equal(blocked.message, 'node n0 is held by plan p1');
  });

  it('a failed hook holding every running node: not retried, how to release it', () => {
    const s = run(
      [
        node('n0', {
          phase: 'Blocked',
          reason: 'HookFailed',
          message: 'afterDrain hook failed: health check failed',
        }),
        node('n1', { phase: 'Pending', podsTotal: 0, podsEvicted: 0 }),
      ],
      ['n0'],
    );
    const r = runningSummary(s, 'kernel-patch');
    assert.equal(r.reason, 'HookFailed');
    assert.equal(
      r.message,
      '1 node(s) held up by a failed hook, not retried: node n0: afterDrain hook failed: health check failed; fix the node, then release it (drainflow release kernel-patch --node n0) or abort the plan',
    );
    assert.doesNotMatch(r.message, /retrying/);
  });

  it("the plan's name in the hint, the running nodes counted", () => {
    const words = 'kernel-patch';
    const failed = run(
      [
        node('n0', { phase: 'Blocked', reason: 'HookFailed', message: 'afterDrain hook failed: x' }),
        node('n1', { phase: 'Pending', podsTotal: 0, podsEvicted: 0 }),
      ],
      ['n0'],
    );
    assert.match(runningSummary(failed, words).message, /drainflow release kernel-patch --node n0\)/);
    // The rolling demo's case: one node Released, the next draining, one not started.
    const rolling = run(
      [
        node('n0', { phase: 'Released', reason: 'HandedBack' }),
        node('n1', { phase: 'Draining', podsEvicted: 1 }),
        node('n2', { phase: 'Pending', podsTotal: 0, podsEvicted: 0 }),
      ],
      ['n0', 'n1'],
      ['n0'],
    );
    assert.deepEqual(runningSummary(rolling, words), {
      reason: 'Draining',
      message: 'draining 1 of 3 node(s), 1 done',
    });
    const between = run(
      [node('n0', { phase: 'Released' }), node('n1', { phase: 'Pending' })],
      ['n0'],
      ['n0'],
    );
    assert.equal(runningSummary(between, words).message, '1 of 2 node(s) done; the next starts');
  });

  it('nodes held by a PodDisruptionBudget are still retried until the deadline', () => {
    const s = run(
      [node('n0', { phase: 'Blocked', reason: 'PodsNotEvictable', blockedBy: [blocker] })],
      ['n0'],
    );
    assert.match(
      runningSummary(s, 'p').message,
      /^1 node\(s\) held up, retrying until the deadline: app\/db-0/,
    );
  });

  it('an aborted node lists no blockers and no pending pods; its message says what held it', () => {
    const state = plan(
      [
        node('n0', {
          phase: 'Aborted',
          reason: 'Aborted',
          message: 'aborted',
          podsEvicted: 1,
          blockedBy: [blocker],
        }),
      ],
      { phase: 'Aborted', reason: 'Aborted', message: 'aborted: no more evictions' },
    );
    const st = projectStatus({ ...state, conditions: planConditions(state, NOW) });
    const n0 = st.nodes![0]!;
    assert.equal(n0.blockedBy, undefined);
    assert.equal(n0.message, 'aborted; held then by app/db-0 (PDB app/db): DisruptionBudget');
    assert.equal(st.evictionProgress!.pending, 0);
  });

  it('SkipNode with one node left: the plan then ends, it does not go on', () => {
    const last = deadlineAction(
      plan([node('n0'), node('n1', { phase: 'Draining', podsEvicted: 1 })], { onDeadline: 'SkipNode' }),
    )!;
    assert.match(
      last.message,
      /node n1, if not drained, is handed back .*the plan then ends Blocked \(NodesSkipped\)/,
    );
    assert.doesNotMatch(last.message, /goes on/);
    const two = deadlineAction(
      plan([node('n0', { phase: 'Draining' }), node('n1', { phase: 'Pending' })], { onDeadline: 'SkipNode' }),
    )!;
    assert.match(two.message, /the plan goes on with its other nodes \(n0, n1\)/);
  });

  it('a plan ended with skipped nodes: what held them at their deadline, nothing "still blocking"', () => {
    const skipped = node('n1', {
      phase: 'Skipped',
      reason: 'SkippedAtDeadline',
      message: 'skipped',
      podsEvicted: 1,
      blockedBy: [blocker],
    });
    const held = planOutcome(run([node('n0'), skipped], ['n0', 'n1'], ['n0', 'n1']));
    assert.equal(held.reason, 'NodesSkipped');
    assert.equal(
      held.message,
      '1 node(s) drained; skipped at their deadline and handed back: n1; held at their deadline by app/db-0 (PDB app/db): DisruptionBudget',
    );
    const undrained = node('n1', { phase: 'Skipped', reason: 'ReleasedUndrained', message: 'released' });
    const none = planOutcome(run([node('n0'), undrained], ['n0', 'n1'], ['n0', 'n1']));
    assert.equal(none.message, '1 node(s) drained; released undrained after a failed beforeDrain hook: n1');
  });
});

describe('a draining node whose evicted pods wait out their grace period', () => {
  const observe = (): NodeDrainState => {
    const s = initialNodeState('n1', NOW + 3_600_000, false);
    const pod = (name: string, terminating: boolean) => ({
      key: `app/${name}`,
      namespace: 'app',
      name,
      uid: `uid-${name}`,
      pdbs: [],
      ...(terminating
        ? {
            action: 'Wait' as const,
            reason: 'Terminating' as const,
            message: 'pod is terminating',
            deletionTimestampMs: NOW,
          }
        : { action: 'Evict' as const, reason: 'Evictable' as const, message: '' }),
    });
    applyObservation(
      s,
      {
        changed: true,
        fingerprint: 'f1',
        node: { exists: true, unschedulable: true },
        pods: [pod('a', true), pod('b', true), pod('c', false)],
        pdbs: [],
      },
      ++s.observeSeq,
      NOW,
    );
    return s;
  };
  const settings = { maxConcurrentPerNode: 0, retryBackoff: { initialSeconds: 5, maxSeconds: 120 } };

  it('says how many of the pods to go are terminating', () => {
    const d = decideNode(observe(), NOW, settings);
    assert.equal(d.phase, 'Draining');
    assert.equal(
      d.message,
      '3 pod(s) to go, 2 of them terminating (eviction accepted, waiting out the grace period)',
    );
  });
});
