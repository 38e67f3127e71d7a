/**
 * bench/lib/stack-side.ts: the deltas the bench reports of the stack's side of a run (Temporal
 * frontend requests by operation, CPU seconds per stack process).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stackFigures } from '../../bench/lib/stack-side.js';

describe('bench stackFigures', () => {
  it('takes deltas; a process that restarted (CPU went down) or appeared is left out; new operations count from 0', () => {
    const f = stackFigures(
      {
        temporalRequests: { PollActivityTaskQueue: 10, RecordActivityTaskHeartbeat: 5 },
        cpuSeconds: { temporal: 100, 'kube-apiserver': 50, etcd: 30 },
      },
      {
        temporalRequests: {
          PollActivityTaskQueue: 30,
          RecordActivityTaskHeartbeat: 5,
          SignalWorkflowExecution: 7,
        },
        cpuSeconds: { temporal: 112.5, 'kube-apiserver': 80.25, etcd: 2, kwok: 4 },
      },
    );
    assert.deepEqual(f, {
      cpuSeconds: { temporal: 12.5, 'kube-apiserver': 30.25 },
      temporalRequests: { total: 27, byOperation: { PollActivityTaskQueue: 20, SignalWorkflowExecution: 7 } },
    });
  });

  it('no Temporal figures when either sample lacks them', () => {
    assert.deepEqual(stackFigures({ cpuSeconds: {} }, { temporalRequests: { X: 1 }, cpuSeconds: {} }), {
      cpuSeconds: {},
    });
  });
});
