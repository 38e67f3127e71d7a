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
});
