/** `drainflow status` text: what holds a running plan up is printed. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderPlan } from '../../src/cli/render.js';

describe('renderPlan', () => {
  const base = { metadata: { name: 'p2', uid: 'uid-p2' } };
  it('prints the Blocked condition of a running plan (a node held by another plan)', () => {
    const text = renderPlan(
      {
        ...base,
        status: {
          phase: 'Running',
          reason: 'Draining',
          conditions: [
            {
              type: 'Blocked',
              status: 'True',
              reason: 'NodeHeldByOtherPlan',
              message: 'node n1 is held by plan p1',
              lastTransitionTime: '2026-11-29T00:00:00Z',
            },
          ],
          nodes: [{ name: 'n1', phase: 'Waiting', podsTotal: 0, podsEvicted: 0 }],
        },
      },
      0,
    );
    assert.match(text, /waiting: NodeHeldByOtherPlan — node n1 is held by plan p1/);
  });
  it('a node with no pod shows a full bar once drained, an empty one before', () => {
    const text = renderPlan(
      {
        ...base,
        status: {
          phase: 'Running',
          reason: 'Draining',
          nodes: [
            { name: 'empty', phase: 'Drained', podsTotal: 0, podsEvicted: 0 },
            { name: 'next', phase: 'Pending', podsTotal: 0, podsEvicted: 0 },
            { name: 'busy', phase: 'Draining', podsTotal: 4, podsEvicted: 2 },
          ],
        },
      },
      0,
    );
    assert.match(text, /node empty +Drained +\[#{12}\] 0\/0/);
    assert.match(text, /node next +Pending +\[-{12}\] 0\/0/);
    assert.match(text, /node busy +Draining +\[#{6}-{6}\] 2\/4/);
  });
  it('prints no waiting line for a finished plan', () => {
    const text = renderPlan(
      {
        ...base,
        status: {
          phase: 'Blocked',
          reason: 'DeadlineExceeded',
          conditions: [
            {
              type: 'Blocked',
              status: 'True',
              reason: 'DeadlineExceeded',
              message: 'deadline passed',
              lastTransitionTime: '2026-11-29T00:00:00Z',
            },
          ],
        },
      },
      0,
    );
    assert.doesNotMatch(text, /waiting:/);
  });
  it('shows pods deleted at the deadline apart from the evicted ones', () => {
    const text = renderPlan(
      {
        ...base,
        status: {
          phase: 'Drained',
          reason: 'DrainedWithDeletions',
          message: '1 node(s) drained; 3 pod(s) deleted at the deadline without the Eviction API',
          evictionProgress: {
            total: 4,
            evicted: 1,
            deleted: 3,
            pending: 0,
            failed: 0,
            attempts: 1,
            tooManyRequests: 0,
          },
          nodes: [
            {
              name: 'n1',
              phase: 'Drained',
              reason: 'PodsDeletedAtDeadline',
              podsTotal: 4,
              podsEvicted: 1,
              podsDeleted: 3,
            },
          ],
        },
      },
      0,
    );
    assert.match(text, /: Drained \(DrainedWithDeletions\)/);
    assert.match(text, /pods \[#{20}\] 1\/4 evicted, 3 deleted at the deadline \(not evicted\);/);
    assert.match(text, /node n1 +Drained +\[#{12}\] 1\/4, 3 deleted/);
  });
  it('shows the deadline policy with its countdowns and a node deadline earlier than the plan', () => {
    const now = Date.parse('2026-12-01T12:00:00Z');
    const text = renderPlan(
      {
        ...base,
        status: {
          phase: 'Running',
          reason: 'Draining',
          deadline: '2026-12-01T13:00:00.000Z',
          deadlineAction: {
            policy: 'DeletePods',
            at: '2026-12-01T12:10:00.000Z',
            nodes: ['n1'],
            warningAt: '2026-12-01T12:05:00.000Z',
            message: 'at its deadline the pods still on a node are deleted (n1)',
          },
          nodes: [
            {
              name: 'n1',
              phase: 'Draining',
              podsTotal: 2,
              podsEvicted: 0,
              deadline: '2026-12-01T12:10:00.000Z',
            },
            {
              name: 'n2',
              phase: 'Drained',
              podsTotal: 1,
              podsEvicted: 1,
              deadline: '2026-12-01T11:59:00.000Z',
            },
          ],
        },
      },
      now,
    );
    assert.match(text, /deadline in 3600 s \(2026-12-01T13:00:00.000Z\)/);
    assert.match(
      text,
      /at the deadline \(onDeadline DeletePods, the first in 600 s; PodsWillBeDeleted Warning in 300 s\): at its deadline the pods still on a node are deleted \(n1\)/,
    );
    assert.match(text, /node n1 +Draining .* 0\/2 +deadline in 600 s \(2026-12-01T12:10:00.000Z\)/);
    assert.doesNotMatch(
      text.split('\n').find((l) => l.includes('node n2'))!,
      /deadline/,
      'a drained node has no deadline left',
    );
  });
  it('says what a pod stuck terminating waits for', () => {
    const text = renderPlan(
      {
        ...base,
        status: {
          phase: 'Blocked',
          reason: 'DeadlineExceeded',
          nodes: [
            {
              name: 'n1',
              phase: 'Blocked',
              podsTotal: 1,
              podsEvicted: 0,
              blockedBy: [{ pod: 'app/db-0', reason: 'Terminating', message: 'pod is still terminating' }],
            },
          ],
        },
      },
      0,
    );
    assert.match(
      text,
      /blocked by app\/db-0: Terminating — pod is still terminating \(its deletion was accepted; it waits for its grace period, its finalizers or its node's kubelet: kubectl get pod -n app db-0 -o jsonpath='\{\.metadata\.finalizers\}'\)/,
    );
  });
});

describe('renderPlan: order group, skipped pods and pods gone without eviction', () => {
  it('shows the current order group, each skipped pod and the pods that left without an eviction', () => {
    const text = renderPlan(
      {
        metadata: { name: 'p', uid: 'u' },
        status: {
          phase: 'Running',
          reason: 'Draining',
          evictionProgress: {
            total: 6,
            evicted: 3,
            pending: 0,
            failed: 0,
            attempts: 3,
            tooManyRequests: 0,
            goneWithoutEviction: 3,
          },
          nodes: [
            {
              name: 'n1',
              phase: 'Draining',
              podsTotal: 6,
              podsEvicted: 3,
              podsGoneWithoutEviction: 3,
              currentOrder: 100,
              skipped: [
                { pod: 'app/keep', reason: 'DrainLabelSkip', message: 'label drainflow.dev/drain: skip' },
              ],
            },
          ],
        },
      },
      0,
    );
    assert.match(text, /pods \[#{20}\] 3\/6 evicted, 3 gone without eviction; 3 eviction call\(s\)/);
    assert.match(text, /node n1 .* 3\/6, 3 gone without eviction {2}order group 100/);
    assert.match(text, /\n {6}skipped app\/keep: DrainLabelSkip — label drainflow\.dev\/drain: skip/);
  });
});
