/**
 * Which workers `drainflow status` and `pause` take as serving a task queue (liveWorkers in
 * src/cli/plans.ts): a poll within POLLER_FRESH_MS, not reported stopping by its heartbeat, and a
 * heartbeat not overdue. And what the note says in each case (workersNote), with the figures seen
 * on the local stack after a `kill -9` of the worker and after a graceful stop. And the note when
 * Temporal has no such workflow or namespace (missingWorkflowNote), or the workflow closed behind
 * the plan's back (closedNote, closedWithoutHandBack).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  closeStatusName,
  closedNote,
  closedWithoutHandBack,
  missingWorkflowNote,
  workersNote,
} from '../../src/cli/plans.js';
import {
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_SLACK_MS,
  POLLER_FRESH_MS,
  liveWorkers,
  type TaskQueueWorkers,
  type WorkerReport,
} from '../../src/shared/workers.js';
import { NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { MaintenancePlan } from '../../src/api/plan.js';

const RUNNING = 'WORKER_STATUS_RUNNING';
const SHUTTING_DOWN = 'WORKER_STATUS_SHUTTING_DOWN';
const running = (heartbeatAgeMs?: number): WorkerReport => ({
  status: RUNNING,
  ...(heartbeatAgeMs !== undefined ? { heartbeatAgeMs, heartbeatIntervalMs: 60_000 } : {}),
});

const rows: { what: string; workers: TaskQueueWorkers; live: string[] }[] = [
  { what: 'no poller', workers: { pollers: [], workers: new Map() }, live: [] },
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
    workers: {
      pollers: [{ identity: 'w1', ageMs: 2000 }],
      workers: new Map([['w1', { status: SHUTTING_DOWN }]]),
    },
    live: [],
  },
  {
    what: 'a recent poll by a running worker',
    workers: { pollers: [{ identity: 'w1', ageMs: 2000 }], workers: new Map([['w1', running(10_000)]]) },
    live: ['w1'],
  },
  {
    what: 'a recent poll, but the heartbeat is overdue (the worker stopped reporting)',
    workers: {
      pollers: [{ identity: 'w1', ageMs: 50_000 }],
      workers: new Map([['w1', running(HEARTBEAT_INTERVAL_MS + HEARTBEAT_SLACK_MS + 1)]]),
    },
    live: [],
  },
  {
    what: 'a heartbeat just within its interval and slack',
    workers: {
      pollers: [{ identity: 'w1', ageMs: 50_000 }],
      workers: new Map([['w1', running(HEARTBEAT_INTERVAL_MS + HEARTBEAT_SLACK_MS)]]),
    },
    live: ['w1'],
  },
  {
    what: 'a recent poll by a worker without heartbeat (older SDK)',
    workers: { pollers: [{ identity: 'w1', ageMs: 2000 }], workers: new Map([['w0', running()]]) },
    live: ['w1'],
  },
  {
    what: 'one stopped, one running',
    workers: {
      pollers: [
        { identity: 'old', ageMs: 3000 },
        { identity: 'new', ageMs: 500 },
      ],
      workers: new Map([
        ['old', { status: SHUTTING_DOWN }],
        ['new', running(5000)],
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

describe('workersNote', () => {
  const notes: { what: string; workers: TaskQueueWorkers; note: RegExp; not?: RegExp }[] = [
    {
      what: 'nothing ever polled',
      workers: { pollers: [], workers: new Map() },
      note: /^no worker is polling task queue "q": start one \(drainflow run --worker --task-queue q\)/,
    },
    {
      // kill -9, 10 s later: the idle long poll began 25 s before the kill; heartbeat 49 s old.
      what: 'a worker killed 10 s ago still looks live: the note says it cannot be told apart yet',
      workers: {
        pollers: [{ identity: 'vm-worker', ageMs: 37_000 }],
        workers: new Map([['vm-worker', running(49_000)]]),
      },
      note: /^the workflow did not answer the progress query within 2 s, although Temporal lists a poller of task queue "q": vm-worker began its last poll 37 s ago; its last heartbeat, 49 s ago, said running \(one every 60 s\)\. An idle worker renews its poll about every 60 s, so a worker that died less than 70 s ago looks the same/,
    },
    {
      // kill -9, 30 s later: last poll 68 s ago, heartbeat 80 s old (due every 60 s).
      what: 'a killed worker whose heartbeat is overdue is not taken for running',
      workers: {
        pollers: [{ identity: 'vm-worker', ageMs: 68_000 }],
        workers: new Map([['vm-worker', running(80_000)]]),
      },
      note: /^no worker is polling task queue "q"; the last poll began 68 s ago, by vm-worker; its last heartbeat, 80 s ago \(one is due every 60 s\), still said running, so it stopped without shutting down \(killed, crashed or cut off\): start one/,
      not: /\(running\)/,
    },
    {
      what: 'a gracefully stopped worker: its last heartbeat said shutting down',
      workers: {
        pollers: [{ identity: 'vm-worker', ageMs: 5000 }],
        workers: new Map([['vm-worker', { status: SHUTTING_DOWN, heartbeatAgeMs: 4000 }]]),
      },
      note: /^no worker is polling task queue "q"; the last poll began 5 s ago, by vm-worker; its last heartbeat, 4 s ago, said shutting down: start one/,
    },
    {
      what: 'no heartbeat API: only the poll age',
      workers: { pollers: [{ identity: 'w1', ageMs: 90_000 }] },
      note: /^no worker is polling task queue "q"; the last poll began 90 s ago, by w1: start one/,
    },
  ];
  for (const r of notes) {
    it(r.what, () => {
      const text = workersNote(r.workers, 'q');
      assert.match(text, r.note);
      if (r.not) assert.doesNotMatch(text, r.not);
    });
  }
});

describe('missingWorkflowNote', () => {
  const ctx = { temporalAddress: '127.0.0.1:7233', temporalNamespace: 'default' };
  const recorded = {
    status: { workflow: { namespace: 'prod', workflowId: 'maintenanceplan-p-1' } },
  };
  const notFound = new WorkflowNotFoundError('not found', 'maintenanceplan-p-1', undefined);
  const rows: {
    what: string;
    plan: Pick<MaintenancePlan, 'status'>;
    err: unknown;
    note: RegExp | undefined;
  }[] = [
    {
      what: 'the recorded workflow is not on this server: a different Temporal, not the operator',
      plan: recorded,
      err: notFound,
      note: /^workflow maintenanceplan-p-1, which the operator recorded in the plan's status \(namespace "prod"\), was not found on 127\.0\.0\.1:7233\/default: this CLI may point at another Temporal than the operator's \(--temporal-address \/ TEMPORAL_ADDRESS, --temporal-namespace \/ TEMPORAL_NAMESPACE\)/,
    },
    {
      what: 'the operator refused the plan: its condition quoted, the operator not blamed',
      plan: {
        status: {
          phase: 'Failed',
          reason: 'InvalidSpec',
          message: 'spec.windows[0].timeZone: must be a known IANA time zone name (e.g. Europe/Berlin, UTC)',
          conditions: [
            {
              type: 'Progressing',
              status: 'False',
              reason: 'InvalidSpec',
              lastTransitionTime: '2026-12-01T00:00:00Z',
              message:
                'spec.windows[0].timeZone: must be a known IANA time zone name (e.g. Europe/Berlin, UTC)',
            },
          ],
        },
      },
      err: notFound,
      note: /^the operator refused this plan and started no workflow for it \(Failed\/InvalidSpec\): "spec\.windows\[0\]\.timeZone: must be a known IANA time zone name \(e\.g\. Europe\/Berlin, UTC\)"; correct what it names/,
    },
    {
      what: 'no workflow recorded and none found: the operator has not started one',
      plan: {},
      err: notFound,
      note: /^the plan has no workflow yet .*: is the operator running\?$/,
    },
    {
      what: 'the namespace does not exist on this server',
      plan: recorded,
      err: new NamespaceNotFoundError('default'),
      note: /^the Temporal server at 127\.0\.0\.1:7233 has no namespace "default" \(the operator started this plan's workflow in namespace "prod"\)/,
    },
    {
      what: 'another error is not about a missing workflow',
      plan: recorded,
      err: new Error('deadline'),
      note: undefined,
    },
  ];
  for (const r of rows) {
    it(r.what, () => {
      const note = missingWorkflowNote(ctx, r.plan, 'maintenanceplan-p-1', r.err);
      if (r.note === undefined) assert.equal(note, undefined);
      else assert.match(note ?? '', r.note);
      if (r.plan.status?.reason === 'InvalidSpec') assert.doesNotMatch(note ?? '', /operator running/);
    });
  }
});

describe('closedWithoutHandBack and closedNote', () => {
  const plan = (phase?: string, reason?: string): Pick<MaintenancePlan, 'status'> =>
    phase ? { status: { phase, ...(reason ? { reason } : {}) } as MaintenancePlan['status'] } : {};
  const rows: {
    plan: Pick<MaintenancePlan, 'status'>;
    close: string;
    handBack: boolean;
    note: RegExp | undefined;
  }[] = [
    { plan: plan('Running'), close: 'RUNNING', handBack: false, note: /still reads Running/ },
    {
      plan: plan('Running'),
      close: 'TERMINATED',
      handBack: true,
      note: /^the workflow has ended \(TERMINATED\) but the plan still reads Running: the operator marks such a plan Failed .*; drainflow abort p has the operator hand back its nodes; shown: the status the plan last wrote$/,
    },
    { plan: plan('Drained'), close: 'CANCELED', handBack: true, note: /still reads Drained/ },
    { plan: plan(), close: 'TIMED_OUT', handBack: true, note: /still reads no phase/ },
    { plan: plan('Failed', 'WorkflowTerminated'), close: 'TERMINATED', handBack: true, note: undefined },
    { plan: plan('Failed', 'NodeNotFound'), close: 'COMPLETED', handBack: false, note: undefined },
    { plan: plan('Aborted', 'WorkflowTerminated'), close: 'TERMINATED', handBack: false, note: undefined },
    { plan: plan('Completed', 'Released'), close: 'COMPLETED', handBack: false, note: undefined },
    // Completed while the cache says Running: the workflow wrote its own status; no hand-back offered.
    {
      plan: plan('Running'),
      close: 'COMPLETED',
      handBack: false,
      note: /ended \(COMPLETED\) but the plan still reads Running: the workflow's last status write has not arrived yet/,
    },
  ];
  for (const r of rows) {
    it(`${r.plan.status?.phase ?? 'no phase'}/${r.plan.status?.reason ?? '-'}, workflow ${r.close}`, () => {
      assert.equal(closedWithoutHandBack(r.plan, r.close), r.handBack, 'hand-back by the operator');
      if (r.close === 'RUNNING') return;
      const { note } = closedNote(r.plan, r.close, 'p');
      if (r.note === undefined) assert.equal(note, undefined);
      else assert.match(note ?? '', r.note);
    });
  }
});

describe('closeStatusName: the status a rejected query carries, named as describe() names it', () => {
  const S = proto.temporal.api.enums.v1.WorkflowExecutionStatus;
  const rows: Array<[number | undefined, string]> = [
    [S.WORKFLOW_EXECUTION_STATUS_COMPLETED, 'COMPLETED'],
    [S.WORKFLOW_EXECUTION_STATUS_FAILED, 'FAILED'],
    [S.WORKFLOW_EXECUTION_STATUS_CANCELED, 'CANCELLED'],
    [S.WORKFLOW_EXECUTION_STATUS_TERMINATED, 'TERMINATED'],
    [S.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, 'CONTINUED_AS_NEW'],
    [S.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, 'TIMED_OUT'],
    [S.WORKFLOW_EXECUTION_STATUS_PAUSED, 'PAUSED'],
    [99, 'UNKNOWN'],
    [undefined, 'UNKNOWN'],
  ];
  for (const [code, name] of rows) it(`${code} → ${name}`, () => assert.equal(closeStatusName(code), name));
});
