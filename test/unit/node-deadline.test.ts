/**
 * Tables of the node drain at its deadline (src/drain/node/deadline.ts): the grace period of a
 * deadline deletion (`deletionGraceSeconds`), and the fresh-view rule (`awaitsFreshView`, as
 * `decideNode` applies it): at its deadline a node decides only from a view observed after the deadline,
 * waiting at most FRESH_VIEW_WAIT_MS from its first decision past the deadline for one; before the
 * deadline nothing is recorded.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import type { OnDeadline } from '../../src/api/plan.js';
import { applyEvictionAnswer } from '../../src/drain/node/answers.js';
import { FRESH_VIEW_WAIT_MS, awaitsFreshView, deletionGraceSeconds } from '../../src/drain/node/deadline.js';
import { decideNode, nodeBlockers } from '../../src/drain/node/decide.js';
import { applyObservation, applyUnchangedObservation } from '../../src/drain/node/observation.js';
import { nodeCounts } from '../../src/drain/node/report.js';
import { initialNodeState, type NodeDrainSettings, type NodeDrainState } from '../../src/drain/node/state.js';
import { BACKOFF, DEADLINE, NOW, S, deadlineSettings } from '../helpers/deadline-fixtures.js';
import { pdbPod } from '../helpers/pdb-fixtures.js';

const settings = (onDeadline?: OnDeadline): NodeDrainSettings => deadlineSettings(onDeadline);

/** An evictable pod `app/<name>`, behind the PDB `pdb` if given. */
const pod = (name: string, pdb?: string): ObservedPod => ({
  ...pdbPod(name, pdb ?? ''),
  pdbs: pdb ? [pdb] : [],
});

const observation = (
  fingerprint: string,
  pods: ObservedPod[],
): Extract<NodeObservation, { changed: true }> => ({
  changed: true,
  fingerprint,
  node: { exists: true, unschedulable: true },
  pods,
  pdbs: [{ key: 'app/db', disruptionsAllowed: 0 }],
});

/**
 * The node's view before the deadline (observation 1): web-0 evicted (201, terminating), db-0 and
 * db-1 waiting for PDB app/db (0 allowed). Observation 1 is the last started.
 */
function beforeCrash(): NodeDrainState {
  const s = initialNodeState('n1', DEADLINE, false);
  s.claimed = true;
  s.cordonedByPlan = true;
  s.observeSeq = 1;
  applyObservation(
    s,
    observation('f1', [pod('web-0'), pod('db-0', 'app/db'), pod('db-1', 'app/db')]),
    1,
    NOW,
  );
  const d = decideNode(s, NOW, settings());
  assert.deepEqual(d.evict, ['uid-web-0']);
  applyEvictionAnswer(s, 'uid-web-0', { outcome: 'Evicted' }, NOW, BACKOFF);
  return s;
}

/** What an observation started after the deadline (seq 2) shows: web-0 and db-1 gone. */
function freshView(s: NodeDrainState, nowMs: number): NodeDrainState {
  s.observeSeq = 2;
  return applyObservation(s, observation('f2', [pod('db-0', 'app/db')]), 2, nowMs);
}

const policies: (OnDeadline | undefined)[] = [undefined, 'SkipNode', 'DeletePods'];

describe('decideNode at the deadline: a view observed after it', () => {
  it('before the deadline: nothing recorded', () => {
    for (const policy of policies) {
      const a = beforeCrash();
      decideNode(a, DEADLINE - 1, settings(policy));
      assert.equal(a.deadlineView, undefined);
    }
  });

  for (const [label, at] of [
    ['at the deadline', DEADLINE],
    ['two hours after it (a worker down over the deadline)', DEADLINE + 7200 * S],
  ] as const) {
    it(`${label}, with a view from before: asks a fresh view, no eviction, no deletion, no outcome`, () => {
      for (const policy of policies) {
        const s = beforeCrash();
        const phase = s.phase;
        const d = decideNode(s, at, settings(policy));
        assert.equal(d.freshView, true, String(policy));
        assert.deepEqual(d.evict, []);
        assert.equal(d.delete, undefined);
        assert.equal(d.outcome, undefined);
        assert.equal(d.phase, phase, 'the phase stays what it was');
        // The bound counts from this first decision, not from the deadline.
        assert.equal(d.wakeAtMs, at + FRESH_VIEW_WAIT_MS);
        assert.deepEqual(s.deadlineView, { afterSeq: 1, untilMs: at + FRESH_VIEW_WAIT_MS });
        assert.equal(awaitsFreshView(s, at), true);
        // No deadline blocker from the old view: web-0 is not listed Terminating.
        assert.deepEqual(
          nodeBlockers(s, at).map((b) => [b.pod, b.reason]),
          [
            ['app/db-0', 'DisruptionBudget'],
            ['app/db-1', 'DisruptionBudget'],
          ],
        );
        // A later decision within the bound keeps the first bound.
        const again = decideNode(s, at + 10 * S, settings(policy));
        assert.equal(again.freshView, true);
        assert.equal(again.wakeAtMs, at + FRESH_VIEW_WAIT_MS);
      }
    });
  }

  it('a fresh changed view: the outcome from it (gone pods neither listed, counted left, nor deleted)', () => {
    const expect: Record<string, (d: ReturnType<typeof decideNode>, s: NodeDrainState) => void> = {
      Stop: (d, s) => {
        assert.equal(d.outcome?.phase, 'Blocked');
        assert.equal(d.outcome?.reason, 'DeadlineExceeded');
        assert.match(d.outcome!.message, /with 1 pod\(s\) not evicted/);
        assert.deepEqual(
          nodeBlockers(s, DEADLINE + S).map((b) => b.pod),
          ['app/db-0'],
        );
      },
      SkipNode: (d) => {
        assert.equal(d.outcome?.phase, 'Skipped');
        assert.match(d.outcome!.message, /with 1 pod\(s\) left/);
      },
      DeletePods: (d) => {
        assert.equal(d.outcome, undefined);
        assert.deepEqual(
          d.delete?.map((x) => x.uid),
          ['uid-db-0'],
        );
      },
    };
    for (const policy of policies) {
      const s = beforeCrash();
      decideNode(s, DEADLINE, settings(policy));
      freshView(s, DEADLINE + S);
      assert.equal(awaitsFreshView(s, DEADLINE + S), false);
      const d = decideNode(s, DEADLINE + S, settings(policy));
      assert.equal(d.freshView, undefined);
      expect[policy ?? 'Stop']!(d, s);
      const counts = nodeCounts(s);
      assert.equal(counts.podsTotal, 3);
      assert.equal(counts.podsEvicted, 1, 'web-0 evicted and gone');
      assert.equal(counts.podsGoneWithoutEviction, 1, 'db-1 gone without eviction');
    }
  });

  it('a fresh unchanged answer counts as fresh: the outcome from the view it confirms', () => {
    const s = beforeCrash();
    decideNode(s, DEADLINE, settings());
    s.observeSeq = 2;
    applyUnchangedObservation(s, 2);
    const d = decideNode(s, DEADLINE + S, settings());
    assert.equal(d.freshView, undefined);
    assert.equal(d.outcome?.reason, 'DeadlineExceeded');
    assert.match(d.outcome!.message, /with 3 pod\(s\) not evicted/);
  });

  it('an observation answering after the deadline but started before it is not fresh', () => {
    const s = beforeCrash();
    s.observeSeq = 2; // observation 2 started before the deadline, still running
    decideNode(s, DEADLINE, settings());
    assert.equal(s.deadlineView?.afterSeq, 2);
    applyObservation(s, observation('f2', [pod('db-0', 'app/db')]), 2, DEADLINE + S);
    assert.equal(decideNode(s, DEADLINE + S, settings()).freshView, true);
  });

  it('the bound passed without a fresh view (API server unreachable): the outcome from the old view', () => {
    const s = beforeCrash();
    decideNode(s, DEADLINE, settings());
    const t = DEADLINE + FRESH_VIEW_WAIT_MS;
    assert.equal(awaitsFreshView(s, t), false);
    const d = decideNode(s, t, settings());
    assert.equal(d.freshView, undefined);
    assert.equal(d.outcome?.reason, 'DeadlineExceeded');
    assert.match(d.outcome!.message, /with 3 pod\(s\) not evicted/);
    assert.ok(nodeBlockers(s, t).some((b) => b.pod === 'app/web-0' && b.reason === 'Terminating'));
  });

  it('carried across continue-as-new: the state is JSON-plain', () => {
    const s = beforeCrash();
    decideNode(s, DEADLINE, settings());
    const carried = JSON.parse(JSON.stringify(s)) as NodeDrainState;
    assert.deepEqual(carried.deadlineView, s.deadlineView);
    const d = decideNode(carried, DEADLINE + 5 * S, settings());
    assert.equal(d.freshView, true);
    assert.equal(d.wakeAtMs, DEADLINE + FRESH_VIEW_WAIT_MS);
  });

  it('no view yet (nothing observed): waits for the first observation, which is fresh', () => {
    const s = initialNodeState('n1', DEADLINE, false);
    s.claimed = true;
    const d = decideNode(s, DEADLINE, settings());
    assert.equal(d.freshView, undefined, 'no observation to drop: the first one starts anyway');
    assert.deepEqual(s.deadlineView, { afterSeq: 0, untilMs: DEADLINE + FRESH_VIEW_WAIT_MS });
    s.observeSeq = 1; // started after the deadline
    applyObservation(s, observation('f1', [pod('db-0', 'app/db')]), 1, DEADLINE + S);
    const after = decideNode(s, DEADLINE + S, settings());
    assert.equal(after.outcome?.reason, 'DeadlineExceeded', 'no second look');
  });

  it('aborted at the deadline: ends Aborted, nothing waited for', () => {
    const s = beforeCrash();
    s.aborted = true;
    const d = decideNode(s, DEADLINE, settings());
    assert.equal(d.outcome?.phase, 'Aborted');
    assert.equal(d.freshView, undefined);
  });
});

describe('deletionGraceSeconds', () => {
  const cases: [string, number, number | undefined, number][] = [
    ['plan deadline now: at least 1 s', 0, 30, 1],
    ['plan deadline passed: at least 1 s', -60 * S, undefined, 1],
    ['120 s left, pod asks 30 s: the pod’s own', 120 * S, 30, 30],
    ['20 s left, pod asks 30 s: cut to 20 s', 20 * S, 30, 20],
    ['20.2 s left: rounded up', 20_200, undefined, 21],
    ['pod asks 0 s: still 1 s (0 would mean force)', 60 * S, 0, 1],
  ];
  for (const [name, left, podGrace, want] of cases)
    it(name, () => assert.equal(deletionGraceSeconds(NOW + left, NOW, podGrace), want));
});
