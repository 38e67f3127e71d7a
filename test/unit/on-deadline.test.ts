/**
 * Tables of the deadline policy's pure decisions (spec.onDeadline): what decideNode does at and
 * after a node's deadline under Stop, SkipNode and DeletePods, the PodsWillBeDeleted notice, the answers of a deletion, and the plan's side (per-node
 * deadlines, slots, outcome, status.deadlineAction).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { buildNodePods, observationFingerprint } from '../../src/activities/node-pods.js';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import type { OnDeadline } from '../../src/api/plan.js';
import { applyDeleteAnswer } from '../../src/drain/node/answers.js';
import { deletionWarning } from '../../src/drain/node/deadline.js';
import { decideNode } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { nodeCounts } from '../../src/drain/node/report.js';
import { initialNodeState, type NodeDrainState } from '../../src/drain/node/state.js';
import {
  drainSettled,
  initialPlanRunState,
  mergeNodeProgress,
  nodeDeadlineMs,
  nodesToStart,
  pendingNode,
  planOutcome,
  type PlanRunState,
} from '../../src/drain/plan-drain.js';
import { deadlineAction, type PlanState } from '../../src/drain/projection.js';
import { BACKOFF, DEADLINE, NOW, S, deadlineSettings } from '../helpers/deadline-fixtures.js';

const settings = deadlineSettings;

const pod = (name: string, extra: Partial<ObservedPod> = {}): ObservedPod => ({
  key: `app/${name}`,
  namespace: 'app',
  name,
  uid: `uid-${name}`,
  action: 'Evict',
  reason: 'Evictable',
  message: '',
  pdbs: ['app/db'],
  ...extra,
});

/** A claimed, observed node with pods `names` behind PDB app/db allowing 0 disruptions. */
function blockedNode(items: ObservedPod[]): NodeDrainState {
  const s = initialNodeState('n1', DEADLINE, false);
  s.claimed = true;
  s.cordonedByPlan = true;
  const obs: Extract<NodeObservation, { changed: true }> = {
    changed: true,
    fingerprint: 'f1',
    node: { exists: true, unschedulable: true },
    pods: items,
    pdbs: [{ key: 'app/db', disruptionsAllowed: 0 }],
  };
  return applyObservation(s, obs, 1, NOW);
}

describe('decideNode at the deadline, per onDeadline', () => {
  const cases: {
    policy: OnDeadline | undefined;
    phase: string;
    reason: string;
    outcome: boolean;
    deletes: number;
  }[] = [
    { policy: undefined, phase: 'Blocked', reason: 'DeadlineExceeded', outcome: true, deletes: 0 },
    { policy: 'Stop', phase: 'Blocked', reason: 'DeadlineExceeded', outcome: true, deletes: 0 },
    { policy: 'SkipNode', phase: 'Skipped', reason: 'SkippedAtDeadline', outcome: true, deletes: 0 },
    { policy: 'DeletePods', phase: 'Draining', reason: 'DeletingPods', outcome: false, deletes: 2 },
  ];
  for (const c of cases)
    it(`${c.policy ?? '(absent)'}: ${c.phase}/${c.reason}, ${c.deletes} deletion(s)`, () => {
      const s = blockedNode([pod('db-0'), pod('db-1')]);
      const before = decideNode(s, DEADLINE - S, settings(c.policy));
      assert.equal(before.phase, 'Draining', 'before the deadline nothing changes');
      assert.equal(before.delete, undefined);
      const d = decideNode(s, DEADLINE, settings(c.policy, { planDeadlineMs: DEADLINE }));
      assert.equal(d.phase, c.phase);
      assert.equal(d.reason, c.reason);
      assert.equal(d.outcome !== undefined, c.outcome);
      assert.equal(d.delete?.length ?? 0, c.deletes);
      assert.deepEqual(d.evict, []);
    });

  it('SkipNode waits for an eviction in flight before it ends', () => {
    const s = blockedNode([pod('db-0')]);
    s.pods['uid-db-0']!.state = 'Evicting';
    assert.equal(decideNode(s, DEADLINE, settings('SkipNode')).outcome, undefined);
    s.pods['uid-db-0']!.state = 'Pending';
    assert.equal(decideNode(s, DEADLINE, settings('SkipNode')).outcome?.phase, 'Skipped');
  });

  it('DeletePods deletes each pod once; terminating pods are left to finish; rule-blocked pods are deleted too', () => {
    const s = blockedNode([
      pod('db-0'),
      pod('bare', { action: 'Block', reason: 'NoController', message: 'no controller', pdbs: [] }),
      pod('going', { action: 'Wait', reason: 'Terminating', message: '', deletionTimestampMs: NOW }),
    ]);
    const first = decideNode(s, DEADLINE, settings('DeletePods', { planDeadlineMs: DEADLINE }));
    assert.deepEqual(first.delete?.map((d) => d.uid).sort(), ['uid-bare', 'uid-db-0']);
    const again = decideNode(s, DEADLINE + S, settings('DeletePods', { planDeadlineMs: DEADLINE }));
    assert.deepEqual(again.delete, [], 'no second DELETE while the first is in flight');
    applyDeleteAnswer(s, 'uid-db-0', { outcome: 'Deleted' }, DEADLINE + S, BACKOFF);
    applyDeleteAnswer(s, 'uid-bare', { outcome: 'Gone' }, DEADLINE + S, BACKOFF);
    assert.equal(s.pods['uid-db-0']!.state, 'Terminating');
    assert.equal(s.podsDeleted, 1);
    // The deleted pod and the terminating one go: the node is Drained, the deletion counted apart.
    const gone: Extract<NodeObservation, { changed: true }> = {
      changed: true,
      fingerprint: 'f2',
      node: { exists: true, unschedulable: true },
      pods: [],
      pdbs: [],
    };
    applyObservation(s, gone, 2, DEADLINE + 2 * S);
    const end = decideNode(s, DEADLINE + 2 * S, settings('DeletePods'));
    assert.equal(end.outcome?.phase, 'Drained');
    assert.equal(end.outcome?.reason, 'PodsDeletedAtDeadline');
    // bare (404 to its DELETE) and the terminating pod left without this drain: counted apart.
    assert.deepEqual(nodeCounts(s), {
      podsTotal: 3,
      podsEvicted: 0,
      podsFailed: 0,
      podsDeleted: 1,
      podsGoneWithoutEviction: 2,
    });
  });

  it('DeletePods: a refused DELETE is a DeleteFailed blocker, tried again after the backoff; pods that never go end Blocked', () => {
    const s = blockedNode([pod('db-0', { terminationGracePeriodSeconds: 10 })]);
    decideNode(s, DEADLINE, settings('DeletePods'));
    applyDeleteAnswer(
      s,
      'uid-db-0',
      { outcome: 'Failed', code: 403, message: 'forbidden' },
      DEADLINE,
      BACKOFF,
    );
    assert.equal(s.pods['uid-db-0']!.reason, 'DeleteFailed');
    assert.deepEqual(decideNode(s, DEADLINE + 1 * S, settings('DeletePods')).delete, []);
    assert.equal(decideNode(s, DEADLINE + 5 * S, settings('DeletePods')).delete?.length, 1);
    applyDeleteAnswer(s, 'uid-db-0', { outcome: 'Deleted' }, DEADLINE + 5 * S, BACKOFF);
    // Held by a finalizer: after the longest grace (10 s) plus the slack, the node ends Blocked.
    const late = decideNode(s, DEADLINE + 10 * S + 120 * S, settings('DeletePods'));
    assert.equal(late.outcome?.phase, 'Blocked');
    assert.equal(late.outcome?.reason, 'DeadlineExceeded');
  });
});

describe('deletionWarning (PodsWillBeDeleted)', () => {
  const warn = { planDeadlineMs: DEADLINE, deadlineWarningSeconds: 300 };
  const cases: [string, OnDeadline, number, boolean, boolean][] = [
    ['DeletePods, 301 s before: not yet', 'DeletePods', DEADLINE - 301 * S, false, false],
    ['DeletePods, 300 s before: due', 'DeletePods', DEADLINE - 300 * S, false, true],
    [
      'DeletePods, 10 s before (deadline closer than the notice): due at once',
      'DeletePods',
      DEADLINE - 10 * S,
      false,
      true,
    ],
    ['DeletePods, already sent: not again', 'DeletePods', DEADLINE - 10 * S, true, false],
    ['DeletePods, at the deadline: too late', 'DeletePods', DEADLINE, false, false],
    ['SkipNode: never', 'SkipNode', DEADLINE - 10 * S, false, false],
    ['Stop: never', 'Stop', DEADLINE - 10 * S, false, false],
  ];
  for (const [name, policy, now, warned, due] of cases)
    it(name, () => {
      const s = blockedNode([pod('db-0'), pod('db-1')]);
      s.warned = warned;
      const w = deletionWarning(s, now, settings(policy, warn));
      assert.equal(w !== undefined, due);
      if (w) {
        assert.equal(w.atMs, DEADLINE - 300 * S);
        assert.match(w.message, /2 pod\(s\) will be deleted .*app\/db-0, app\/db-1$/);
      }
    });

  it('names at most 10 pods, then "and N more"', () => {
    const s = blockedNode(Array.from({ length: 12 }, (_, i) => pod(`p-${String(i).padStart(2, '0')}`)));
    const w = deletionWarning(s, DEADLINE - 10 * S, settings('DeletePods', warn))!;
    assert.match(w.message, /app\/p-09 and 2 more$/);
    assert.doesNotMatch(w.message, /p-10/);
  });

  it('decideNode wakes the node at the notice time', () => {
    const s = blockedNode([pod('db-0')]);
    assert.equal(decideNode(s, NOW, settings('DeletePods', warn)).wakeAtMs, DEADLINE - 300 * S);
    assert.equal(decideNode(s, NOW, settings('Stop', warn)).wakeAtMs, DEADLINE);
  });
});

function planState(names: string[], maxUnavailableNodes: number): PlanRunState {
  const plan: PlanRunState['plan'] = {
    phase: 'Running',
    reason: 'Draining',
    message: '',
    observedGeneration: 1,
    nodes: names.map(pendingNode),
    conditions: [],
    startedAtMs: NOW,
    deadlineMs: NOW + 3600 * S,
    onDeadline: 'SkipNode',
    deadlineWarningSeconds: 300,
  };
  return {
    ...initialPlanRunState('Drain', plan, { paused: false, aborted: false, released: false }),
    maxUnavailableNodes,
  };
}

const progress = (node: string, phase: string, reason: string, extra: object = {}) => ({
  node,
  phase: phase as never,
  reason,
  podsTotal: 1,
  podsEvicted: 0,
  podsFailed: 0,
  blockedBy: [{ pod: 'app/db-0', pdb: 'app/db', reason: 'DisruptionBudget', message: 'waiting' }],
  attempts: 0,
  tooManyRequests: 0,
  final: true,
  ...extra,
});

describe('the plan side of the deadline policy', () => {
  it('nodeDeadlineMs: the earlier of the plan deadline and the node start + nodeDrainTimeoutSeconds', () => {
    assert.equal(nodeDeadlineMs(NOW + 3600 * S, NOW, undefined), NOW + 3600 * S);
    assert.equal(nodeDeadlineMs(NOW + 3600 * S, NOW, 600), NOW + 600 * S);
    assert.equal(nodeDeadlineMs(NOW + 3600 * S, NOW + 3300 * S, 600), NOW + 3600 * S);
  });

  it('a Skipped node frees its slot and its claim; the plan ends Blocked/NodesSkipped', () => {
    const s = planState(['n1', 'n2'], 1);
    s.started.push('n1');
    s.claimed.n1 = { cordonedByPlan: true };
    const events = mergeNodeProgress(s, progress('n1', 'Skipped', 'SkippedAtDeadline', { claimed: false }));
    assert.equal(s.claimed.n1, undefined, 'handed back: not held');
    assert.ok(events.some((e) => e.reason === 'NodeSkipped'));
    assert.deepEqual(nodesToStart(s, 1, NOW + 600 * S), ['n2'], 'its slot is free');
    s.started.push('n2');
    mergeNodeProgress(s, { ...progress('n2', 'Drained', 'Drained'), blockedBy: [] });
    assert.ok(drainSettled(s, NOW + 700 * S));
    const o = planOutcome(s);
    assert.equal(o.phase, 'Blocked');
    assert.equal(o.reason, 'NodesSkipped');
    assert.match(o.message, /1 node\(s\) drained; skipped .*: n1; held at their deadline by app\/db-0/);
    assert.doesNotMatch(o.message, /still blocking/, 'the plan has ended: nothing blocks it any more');
  });

  it('Stop with a per-node deadline: the stopped node keeps its slot (still cordoned); the plan settles', () => {
    const s = planState(['n1', 'n2'], 1);
    s.plan.onDeadline = 'Stop';
    s.started.push('n1');
    mergeNodeProgress(
      s,
      progress('n1', 'Blocked', 'DeadlineExceeded', { claimed: true, cordonedByPlan: true }),
    );
    assert.deepEqual(nodesToStart(s, 1, NOW + 600 * S), [], 'no slot');
    assert.ok(drainSettled(s, NOW + 600 * S), 'nothing can progress');
    s.settledAtMs = NOW + 600 * S;
    const o = planOutcome(s);
    assert.equal(o.phase, 'Blocked');
    assert.equal(o.reason, 'DeadlineExceeded');
    assert.equal(s.plan.nodes[1]!.reason, 'NotStarted');
    assert.match(s.plan.nodes[1]!.message!, /n1 stopped at their deadline/);
  });
});

describe('status.deadlineAction', () => {
  const base = (policy: OnDeadline): PlanState => ({
    phase: 'Running',
    reason: 'Draining',
    message: '',
    observedGeneration: 1,
    nodes: [
      { ...pendingNode('n1'), phase: 'Drained' },
      { ...pendingNode('n2'), phase: 'Draining', deadlineMs: NOW + 600 * S },
      pendingNode('n3'),
    ],
    conditions: [],
    startedAtMs: NOW,
    deadlineMs: NOW + 3600 * S,
    onDeadline: policy,
    deadlineWarningSeconds: 300,
  });
  const cases: [OnDeadline, RegExp, boolean][] = [
    ['Stop', /evictions stop .*stay cordoned/, false],
    ['SkipNode', /handed back .*Skipped/, false],
    ['DeletePods', /deleted without the Eviction API/, true],
  ];
  for (const [policy, words, warning] of cases)
    it(`${policy}: the nodes not done, the earliest deadline, the words`, () => {
      const a = deadlineAction(base(policy))!;
      assert.equal(a.policy, policy);
      assert.deepEqual(a.nodes, ['n2', 'n3']);
      assert.equal(a.at, new Date(NOW + 600 * S).toISOString());
      assert.match(a.message, words);
      assert.equal(a.warningAt, warning ? new Date(NOW + 300 * S).toISOString() : undefined);
    });

  it('absent in a final phase, for older runs (no policy), or when every node is done', () => {
    assert.equal(deadlineAction({ ...base('Stop'), phase: 'Blocked' }), undefined);
    const old = base('Stop');
    delete old.onDeadline;
    assert.equal(deadlineAction(old), undefined);
    const done = base('Stop');
    done.nodes = done.nodes.map((n) => ({ ...n, phase: 'Drained' as const }));
    assert.equal(deadlineAction(done), undefined);
  });
});

describe('observations carry the pod grace period (not in the fingerprint)', () => {
  const v1pod = (grace: number): V1Pod => ({
    metadata: {
      namespace: 'app',
      name: 'db-0',
      uid: 'u1',
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'db', uid: 'rs', controller: true },
      ],
    },
    spec: { containers: [{ name: 'c' }], terminationGracePeriodSeconds: grace },
  });
  const selection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };
  it('buildNodePods copies spec.terminationGracePeriodSeconds into the pod item', () => {
    const { pods } = buildNodePods([v1pod(45)], () => [], selection);
    assert.equal(pods[0]!.terminationGracePeriodSeconds, 45);
    const s = blockedNode(pods);
    assert.equal(s.pods.u1!.graceSeconds, 45);
    assert.equal(
      decideNode(s, DEADLINE, settings('DeletePods', { planDeadlineMs: DEADLINE + 600 * S })).delete?.[0]
        ?.gracePeriodSeconds,
      45,
    );
  });
  it('a different grace period is no material change', () => {
    const a = buildNodePods([v1pod(45)], () => [], selection);
    const b = buildNodePods([v1pod(90)], () => [], selection);
    const node = { exists: true, unschedulable: true };
    assert.equal(observationFingerprint({ node, ...a }), observationFingerprint({ node, ...b }));
  });
});

describe('heldAtDeadline', () => {
  it('a node that reached its deadline before it was ever claimed holds no slot', () => {
    const s = planState(['n1', 'n2'], 1);
    s.plan.onDeadline = 'Stop';
    s.started.push('n1');
    mergeNodeProgress(s, progress('n1', 'Blocked', 'DeadlineExceeded', { claimed: false }));
    assert.deepEqual(nodesToStart(s, 1, NOW + 600 * S), ['n2']);
  });
});
