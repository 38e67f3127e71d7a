/**
 * Which workers `drainflow status` and `pause` take as serving a task queue (liveWorkers in
 * src/cli/plans.ts): a poll within POLLER_FRESH_MS, and not reported stopping by its heartbeat.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { POLLER_FRESH_MS, liveWorkers, type TaskQueueWorkers } from '../../src/cli/plans.js';

const RUNNING = 'WORKER_STATUS_RUNNING';
const SHUTTING_DOWN = 'WORKER_STATUS_SHUTTING_DOWN';

const rows: { what: string; workers: TaskQueueWorkers; live: string[] }[] = [
  { what: 'no poller', workers: { pollers: [], status: new Map() }, live: [] },
  {
    what: 'a recent poll, no heartbeat API',
    workers: { pollers: [{ identity: 'w1', ageMs: 1000 }] },
    live: ['w1'],
  },
  {
    what: 'a poll at the freshness bound',
    workers: { pollers: [{ identity: 'w1', ageMs: POLLER_FRESH_MS }] },
    live: ['w1'],
  },
  {
    what: 'a poll older than an idle long poll lasts',
    workers: { pollers: [{ identity: 'w1', ageMs: POLLER_FRESH_MS + 1 }] },
    live: [],
  },
  {
    what: 'a recent poll by a worker that reported shutting down',
    workers: { pollers: [{ identity: 'w1', ageMs: 2000 }], status: new Map([['w1', SHUTTING_DOWN]]) },
    live: [],
  },
  {
    what: 'a recent poll by a running worker',
    workers: { pollers: [{ identity: 'w1', ageMs: 2000 }], status: new Map([['w1', RUNNING]]) },
    live: ['w1'],
  },
  {
    what: 'a recent poll by a worker without heartbeat (older SDK)',
    workers: { pollers: [{ identity: 'w1', ageMs: 2000 }], status: new Map([['w0', RUNNING]]) },
    live: ['w1'],
  },
  {
    what: 'one stopped, one running',
    workers: {
      pollers: [
        { identity: 'old', ageMs: 3000 },
        { identity: 'new', ageMs: 500 },
      ],
      status: new Map([
        ['old', SHUTTING_DOWN],
        ['new', RUNNING],
      ]),
    },
    live: ['new'],
  },
];

describe('liveWorkers', () => {
  for (const r of rows) {
    it(r.what, () => {
      assert.deepEqual(
        liveWorkers(r.workers).map((w) => w.identity),
        r.live,
      );
    });
  }
});
