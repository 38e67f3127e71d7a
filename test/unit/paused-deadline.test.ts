/**
 * Tables of "a paused plan disrupts nothing" (src/drain/node-drain.ts `decideNode` and
 * `deletionWarning`, src/drain/hooks.ts `heldHookStep`, src/drain/plan-drain.ts `lostNodesAtMs`):
 * no eviction and no deadline deletion while paused (by the user, or outside the maintenance
 * windows: the same pause reaches the node) or on a node an admin uncordoned; a deadline that
 * passes while paused applies `onDeadline` only after the resume, from a view observed after it;
 * no hook starts while paused.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import type { OnDeadline } from '../../src/api/plan.js';
import { applyDeleteAnswer } from '../../src/drain/node/answers.js';
import { applyControl } from '../../src/drain/node/controls.js';
import { deletionWarning } from '../../src/drain/node/deadline.js';
import { decideNode } from '../../src/drain/node/decide.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { initialNodeState, type NodeDrainState } from '../../src/drain/node/state.js';
import { heldHookStep } from '../../src/drain/hooks.js';
import { lostNodesAtMs, type PlanRunState } from '../../src/drain/plan-drain.js';
import { BACKOFF, DEADLINE, NOW, S, deadlineSettings } from '../helpers/deadline-fixtures.js';

const pod = (name: string): ObservedPod => ({
  key: `app/${name}`,
  namespace: 'app',
  name,
  uid: `uid-${name}`,
  action: 'Evict',
  reason: 'Evictable',
  message: '',
  pdbs: ['app/db'],
  terminationGracePeriodSeconds: 30,
});

const observation = (
  fingerprint: string,
  allowed: number,
  unschedulable = true,
): Extract<NodeObservation, { changed: true }> => ({
  changed: true,
  fingerprint,
  node: { exists: true, unschedulable },
  pods: [pod('db-0'), pod('db-1')],
  pdbs: [{ key: 'app/db', disruptionsAllowed: allowed }],
});

/** A claimed node observed once (seq 1) with db-0 and db-1 behind PDB app/db allowing `allowed`. */
function node(allowed: number, paused = false): NodeDrainState {
  const s = initialNodeState('n1', DEADLINE, paused);
  s.claimed = true;
  s.cordonedByPlan = true;
  s.observeSeq = 1;
  return applyObservation(s, observation('f1', allowed), 1, NOW);
}

/** An observation started now (the next seq), showing the same pods. */
function observeAgain(s: NodeDrainState, nowMs: number, unschedulable = true): void {
  s.observeSeq++;
  applyObservation(s, observation(`f${s.observeSeq}`, 0, unschedulable), s.observeSeq, nowMs);
}

const policies: OnDeadline[] = ['Stop', 'SkipNode', 'DeletePods'];
/** The outcome of each policy once it applies, on a cordoned node with both pods left. */
const applied: Record<OnDeadline, { phase: string; reason: string; deletes: number }> = {
  Stop: { phase: 'Blocked', reason: 'DeadlineExceeded', deletes: 0 },
  SkipNode: { phase: 'Skipped', reason: 'SkippedAtDeadline', deletes: 0 },
  DeletePods: { phase: 'Draining', reason: 'DeletingPods', deletes: 2 },
};

describe('a paused node evicts nothing', () => {
  it('a PDB allowing 2: paused, no eviction; resumed, both', () => {
    const s = node(2, true);
    const d = decideNode(s, NOW, deadlineSettings());
    assert.deepEqual(d.evict, []);
    assert.equal(d.phase, 'Paused');
    applyControl(s, 'resume');
    assert.deepEqual(decideNode(s, NOW, deadlineSettings()).evict, ['uid-db-0', 'uid-db-1']);
  });
});

describe('a deadline that passes while paused: onDeadline applies after the resume', () => {
  for (const policy of policies)
    it(`${policy}: Paused past the deadline, nothing deleted, no end; resumed, a fresh view, then ${applied[policy].phase}/${applied[policy].reason}`, () => {
      const settings = deadlineSettings(policy, { planDeadlineMs: DEADLINE, deadlineWarningSeconds: 60 });
      const s = node(0);
      applyControl(s, 'pause');
      for (const at of [DEADLINE, DEADLINE + 3600 * S]) {
        const d = decideNode(s, at, settings);
        assert.equal(d.phase, 'Paused');
        assert.equal(d.reason, 'PausedPastDeadline');
        assert.match(
          d.message!,
          new RegExp(`paused past the deadline .* onDeadline ${policy} applies when resumed`),
        );
        assert.equal(d.outcome, undefined, 'no end while paused');
        assert.equal(d.delete, undefined, 'no deletion while paused');
        assert.deepEqual(d.evict, []);
        assert.equal(d.wakeAtMs, undefined, 'nothing to wake for but the resume');
        assert.equal(s.deadlineView, undefined);
      }
      observeAgain(s, DEADLINE + 3600 * S); // observations go on while paused
      const resumedAt = DEADLINE + 7200 * S;
      applyControl(s, 'resume');
      const first = decideNode(s, resumedAt, settings);
      assert.equal(first.freshView, true, 'the resume waits for a view observed after it');
      assert.equal(first.delete, undefined);
      assert.equal(first.outcome, undefined);
      observeAgain(s, resumedAt);
      const d = decideNode(s, resumedAt, settings);
      assert.equal(d.phase, applied[policy].phase);
      assert.equal(d.reason, applied[policy].reason);
      assert.equal(d.delete?.length ?? 0, applied[policy].deletes);
    });

  it('DeletePods paused mid-deletion: no further DELETE until the resume; the answer in flight still applies', () => {
    const settings = deadlineSettings('DeletePods', { planDeadlineMs: DEADLINE });
    const s = node(0);
    decideNode(s, DEADLINE, settings); // the deadline seen: waits for a fresh view
    observeAgain(s, DEADLINE);
    const d = decideNode(s, DEADLINE, settings);
    assert.equal(d.delete?.length, 2);
    applyDeleteAnswer(s, 'uid-db-0', { outcome: 'Deleted' }, DEADLINE, BACKOFF);
    applyDeleteAnswer(
      s,
      'uid-db-1',
      { outcome: 'Failed', code: 403, message: 'forbidden' },
      DEADLINE,
      BACKOFF,
    );
    applyControl(s, 'pause');
    const later = DEADLINE + 600 * S; // db-1's backoff has ended
    const paused = decideNode(s, later, settings);
    assert.equal(paused.phase, 'Paused');
    assert.equal(paused.delete, undefined);
    applyControl(s, 'resume');
    decideNode(s, later, settings);
    s.observeSeq++;
    applyObservation(
      s,
      { ...observation('f9', 0), pods: [{ ...pod('db-0'), action: 'Wait' }, pod('db-1')] },
      s.observeSeq,
      later,
    );
    assert.deepEqual(
      decideNode(s, later, settings).delete?.map((x) => x.uid),
      ['uid-db-1'],
      'resumed: the refused deletion is tried again',
    );
  });
});

describe('a node an admin uncordoned: no eviction, no deletion', () => {
  const cases: [OnDeadline, string, string, boolean][] = [
    ['Stop', 'Blocked', 'DeadlineExceeded', true],
    ['SkipNode', 'Skipped', 'SkippedAtDeadline', true],
    ['DeletePods', 'Blocked', 'DeadlineExceeded', true],
  ];
  for (const [policy, phase, reason, ends] of cases)
    it(`${policy} at the deadline: ${phase}/${reason}, nothing deleted`, () => {
      const settings = deadlineSettings(policy, { planDeadlineMs: DEADLINE });
      const s = node(2);
      observeAgain(s, NOW, false);
      const before = decideNode(s, NOW, settings);
      assert.equal(before.reason, 'NodeUncordonedExternally');
      assert.deepEqual(before.evict, []);
      decideNode(s, DEADLINE, settings);
      observeAgain(s, DEADLINE, false);
      const d = decideNode(s, DEADLINE, settings);
      assert.equal(d.phase, phase);
      assert.equal(d.reason, reason);
      assert.equal(d.outcome !== undefined, ends);
      assert.equal(d.delete, undefined);
      if (policy === 'DeletePods') assert.match(d.message!, /none deleted/);
    });
});

describe('deletionWarning (PodsWillBeDeleted) says only what will happen', () => {
  const settings = deadlineSettings('DeletePods', { planDeadlineMs: DEADLINE, deadlineWarningSeconds: 300 });
  const at = DEADLINE - 10 * S;
  it('cordoned, running: due', () => assert.notEqual(deletionWarning(node(0), at, settings), undefined));
  it('paused: none (a paused node deletes nothing at the deadline); resumed before it: due', () => {
    const s = node(0, true);
    assert.equal(deletionWarning(s, at, settings), undefined);
    applyControl(s, 'resume');
    assert.notEqual(deletionWarning(s, at, settings), undefined);
  });
  it('uncordoned by an admin: none', () => {
    const s = node(0);
    observeAgain(s, NOW, false);
    assert.equal(deletionWarning(s, at, settings), undefined);
  });
});

describe('heldHookStep: no hook starts while paused', () => {
  const cases: [string, 'beforeDrain' | 'afterDrain', boolean, boolean, boolean, string, string?][] = [
    ['paused', 'beforeDrain', true, false, false, 'wait'],
    ['paused past the deadline', 'beforeDrain', true, false, true, 'wait'],
    ['paused past the deadline', 'afterDrain', true, false, true, 'wait'],
    ['resumed', 'beforeDrain', false, false, false, 'start'],
    ['resumed past the deadline', 'beforeDrain', false, false, true, 'end', 'Blocked'],
    ['resumed past the deadline', 'afterDrain', false, false, true, 'end', 'Drained'],
    ['aborted while paused', 'afterDrain', true, true, true, 'end', 'Aborted'],
  ];
  for (const [name, hook, paused, aborted, past, kind, phase] of cases)
    it(`${hook}, ${name}: ${kind}${phase ? ` ${phase}` : ''}`, () => {
      const step = heldHookStep(hook, { paused, aborted }, past);
      assert.equal(step.kind, kind);
      if (step.kind === 'end') assert.equal(step.phase, phase);
    });
});

describe('lostNodesAtMs: a node paused past the deadline is not lost', () => {
  const GRACE = 600 * S;
  const plan = (resumedAtMs?: number) =>
    ({
      plan: { deadlineMs: DEADLINE },
      ...(resumedAtMs !== undefined ? { resumedAtMs } : {}),
    }) as PlanRunState;
  const cases: [string, PlanRunState, boolean, number | undefined][] = [
    ['running, never paused', plan(), false, DEADLINE + GRACE],
    ['held (paused or outside the windows)', plan(), true, undefined],
    ['resumed before the deadline', plan(DEADLINE - 60 * S), false, DEADLINE + GRACE],
    ['resumed after the deadline', plan(DEADLINE + 3600 * S), false, DEADLINE + 3600 * S + GRACE],
  ];
  for (const [name, s, held, want] of cases)
    it(name, () => assert.equal(lostNodesAtMs(s, held, GRACE), want));
});
