/**
 * The pure half of rolling maintenance: the hook state transitions of src/drain/hooks.ts (table),
 * the gate a hook passes before it starts (a node still cordoned, table),
 * the Job a hook makes and how its end is read (src/activities/jobs.ts), the spec rules of
 * spec.hooks and uncordon AfterEachNode (src/api/plan.ts), and the plan reducers that know
 * handed-back nodes (src/drain/plan-drain.ts).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import {
  buildHookJob,
  CORDON_TAINT,
  createJobActivities,
  HOOK_LABELS,
  jobEnd,
} from '../../src/activities/jobs.js';
import type { JobPort } from '../../src/k8s/jobs.js';
import { MaintenancePlanSpecSchema, ROLLING_MESSAGES } from '../../src/api/plan.js';
import { PlanReason } from '../../src/api/reasons.js';
import {
  drained,
  drainStarts,
  hookEnded,
  hookJobName,
  hookStarted,
  hookGateStep,
  hookStopped,
  initialRollState,
  nextRollStep,
  release,
  type HookGateStep,
  type HookGateView,
  type HookName,
  type RollSettings,
  type RollState,
  type RollStep,
} from '../../src/drain/hooks.js';
import {
  mergeNodeProgress,
  pendingNode,
  planOutcome,
  runningSummary,
  type PlanRunState,
} from '../../src/drain/plan-drain.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const HOOKS_AFTER: RollSettings = { beforeDrain: false, afterDrain: true, uncordonAfterEachNode: true };
const BOTH: RollSettings = { beforeDrain: true, afterDrain: true, uncordonAfterEachNode: true };
const NO_HOOK: RollSettings = { beforeDrain: false, afterDrain: false, uncordonAfterEachNode: true };
const HOOK_ONLY: RollSettings = { beforeDrain: true, afterDrain: true, uncordonAfterEachNode: false };

/** A rolling state built by applying `steps` to a fresh one. */
function state(...steps: ((r: RollState) => void)[]): RollState {
  const r = initialRollState();
  for (const s of steps) s(r);
  return r;
}
const startB = (r: RollState) => hookStarted(r, 'beforeDrain', 'ref-b', T0);
const okB = (r: RollState) => hookEnded(r, 'beforeDrain', true);
const failB = (r: RollState) => hookEnded(r, 'beforeDrain', false, 'exit 3');
const toDrain = (r: RollState) => drainStarts(r);
const isDrained = (r: RollState) => drained(r);
const startA = (r: RollState) => hookStarted(r, 'afterDrain', 'ref-a', T0 + 1000);
const okA = (r: RollState) => hookEnded(r, 'afterDrain', true);
const failA = (r: RollState) => hookEnded(r, 'afterDrain', false, 'health check failed');
const rel = (r: RollState) => release(r);
const stopA = (r: RollState) => hookStopped(r, 'afterDrain', 'its Job ns/j was deleted');

describe('nextRollStep (hook state transitions)', () => {
  const table: [string, RollSettings, RollState, RollStep['kind'], Partial<RollStep>?][] = [
    ['fresh, beforeDrain configured: run it', BOTH, state(), 'runHook', { name: 'beforeDrain' }],
    ['fresh, no beforeDrain: drain', HOOKS_AFTER, state(), 'drain'],
    ['beforeDrain running: wait for it', BOTH, state(startB), 'waitHook', { name: 'beforeDrain' }],
    ['beforeDrain succeeded: drain', BOTH, state(startB, okB), 'drain'],
    [
      'beforeDrain failed: blocked with its message',
      BOTH,
      state(startB, failB),
      'await',
      { phase: 'Blocked', reason: 'HookFailed', message: 'beforeDrain hook failed: exit 3' },
    ],
    [
      'beforeDrain failed, released: handed back undrained',
      BOTH,
      state(startB, failB, rel),
      'handBack',
      { drained: false, hookFailed: true },
    ],
    [
      'beforeDrain failed, released, not AfterEachNode: stays blocked',
      HOOK_ONLY,
      state(startB, failB, rel),
      'await',
      { phase: 'Blocked' },
    ],
    ['draining', BOTH, state(startB, okB, toDrain), 'drain'],
    [
      'drained, afterDrain configured: run it',
      HOOKS_AFTER,
      state(toDrain, isDrained),
      'runHook',
      { name: 'afterDrain' },
    ],
    [
      'afterDrain running: wait',
      HOOKS_AFTER,
      state(toDrain, isDrained, startA),
      'waitHook',
      { name: 'afterDrain' },
    ],
    [
      'afterDrain running, released: still wait (the hook decides first)',
      HOOKS_AFTER,
      state(toDrain, isDrained, startA, rel),
      'waitHook',
    ],
    [
      'afterDrain succeeded: hand back',
      HOOKS_AFTER,
      state(toDrain, isDrained, startA, okA),
      'handBack',
      { drained: true, message: 'drained; afterDrain hook succeeded' },
    ],
    [
      'afterDrain succeeded, not AfterEachNode: end (stays cordoned)',
      HOOK_ONLY,
      state(startB, okB, toDrain, isDrained, startA, okA),
      'end',
    ],
    [
      'afterDrain failed: blocked',
      HOOKS_AFTER,
      state(toDrain, isDrained, startA, failA),
      'await',
      { phase: 'Blocked', message: 'afterDrain hook failed: health check failed' },
    ],
    [
      'afterDrain failed, released: hand back',
      HOOKS_AFTER,
      state(toDrain, isDrained, startA, failA, rel),
      'handBack',
      {
        drained: true,
        hookFailed: true,
        message: 'afterDrain hook failed: health check failed; released by hand',
      },
    ],
    [
      'no hook, drained: await a per-node release',
      NO_HOOK,
      state(toDrain, isDrained),
      'await',
      { phase: 'Drained', reason: 'AwaitingRelease' },
    ],
    [
      'no hook, drained, released: hand back',
      NO_HOOK,
      state(toDrain, isDrained, rel),
      'handBack',
      { drained: true, message: 'drained; released' },
    ],
    ['no hook, released before the drain: drain first', NO_HOOK, state(rel), 'drain'],
    ['done', NO_HOOK, state((r) => (r.stage = 'Done')), 'end'],
    [
      'afterDrain stopped (abort): not a success, no hand-back of its own',
      HOOKS_AFTER,
      state(toDrain, isDrained, startA, stopA),
      'await',
      { phase: 'Blocked', reason: 'HookFailed' },
    ],
  ];
  for (const [name, cfg, r, kind, fields] of table) {
    it(name, () => {
      const step = nextRollStep(r, cfg);
      assert.equal(step.kind, kind);
      for (const [k, v] of Object.entries(fields ?? {}))
        assert.equal((step as Record<string, unknown>)[k], v, k);
    });
  }

  it('a hook starts once: a second start and a late end of another hook change nothing', () => {
    const r = state(startB);
    hookStarted(r, 'beforeDrain', 'other', T0 + 5);
    hookEnded(r, 'afterDrain', false, 'x');
    assert.deepEqual(r.hooks, [{ name: 'beforeDrain', phase: 'Running', startedAtMs: T0, ref: 'ref-b' }]);
    okB(r);
    failB(r); // an end after the end is ignored
    assert.equal(r.hooks[0]!.phase, 'Succeeded');
  });
});

describe('hookStopped', () => {
  it('marks a running hook Stopped with how; a hook that already ended keeps its end', () => {
    const r = state(startA);
    stopA(r);
    assert.deepEqual(r.hooks, [
      {
        name: 'afterDrain',
        phase: 'Stopped',
        startedAtMs: T0 + 1000,
        ref: 'ref-a',
        message: 'its Job ns/j was deleted',
      },
    ]);
    okA(r); // an end after the stop is ignored
    assert.equal(r.hooks[0]!.phase, 'Stopped');
    const done = state(startA, okA);
    stopA(done);
    assert.equal(done.hooks[0]!.phase, 'Succeeded', 'a stop after the end is ignored');
    const none = state();
    stopA(none);
    assert.deepEqual(none.hooks, [], 'a hook that never started is not recorded');
  });
});

describe('hookGateStep: a hook starts only on a node still cordoned', () => {
  const CORDONED: HookGateView = { exists: true, unschedulable: true };
  const UNCORDONED: HookGateView = { exists: true, unschedulable: false };
  const GONE: HookGateView = { exists: false, unschedulable: false };
  const REPLACED: HookGateView = { exists: true, unschedulable: false, replacedBy: 'uid-2' };
  type Row = [
    string,
    HookName,
    { paused?: boolean; aborted?: boolean },
    HookGateView | undefined,
    boolean,
    HookGateStep,
  ];
  const table: Row[] = [
    ['no look yet: look', 'beforeDrain', {}, undefined, false, { kind: 'look' }],
    ['no look yet, past the deadline: look first', 'afterDrain', {}, undefined, true, { kind: 'look' }],
    ['cordoned: start', 'beforeDrain', {}, CORDONED, false, { kind: 'start' }],
    [
      'cordoned past the deadline: start (as without the gate)',
      'afterDrain',
      {},
      CORDONED,
      true,
      { kind: 'start' },
    ],
    [
      'uncordoned: wait, Blocked/NodeUncordonedExternally',
      'beforeDrain',
      {},
      UNCORDONED,
      false,
      {
        kind: 'wait',
        phase: 'Blocked',
        reason: 'NodeUncordonedExternally',
        message:
          "node n1 was uncordoned by someone else before its beforeDrain hook started: the hook waits until the node is cordoned again (kubectl cordon n1), then starts; to give the node up instead, abort the plan (drainflow abort p1); at the plan's deadline the node ends without the hook",
      },
    ],
    [
      'uncordoned before afterDrain: wait',
      'afterDrain',
      {},
      UNCORDONED,
      false,
      {
        kind: 'wait',
        phase: 'Blocked',
        reason: 'NodeUncordonedExternally',
        message:
          "node n1 was uncordoned by someone else before its afterDrain hook started: the hook waits until the node is cordoned again (kubectl cordon n1), then starts; to give the node up instead, abort the plan (drainflow abort p1); at the plan's deadline the node ends without the hook",
      },
    ],
    [
      'uncordoned past the deadline, beforeDrain: Blocked/DeadlineExceeded, nothing evicted',
      'beforeDrain',
      {},
      UNCORDONED,
      true,
      {
        kind: 'end',
        phase: 'Blocked',
        reason: 'DeadlineExceeded',
        message:
          'deadline passed while node n1 was uncordoned by someone else, before its beforeDrain hook started: nothing evicted',
      },
    ],
    [
      'uncordoned past the deadline, afterDrain: Drained without the hook',
      'afterDrain',
      {},
      UNCORDONED,
      true,
      {
        kind: 'end',
        phase: 'Drained',
        reason: 'Drained',
        message:
          'drained; deadline passed while node n1 was uncordoned by someone else, before its afterDrain hook started (the hook did not run)',
      },
    ],
    [
      'deleted: Deleted/NodeDeleted',
      'beforeDrain',
      {},
      GONE,
      false,
      {
        kind: 'end',
        phase: 'Deleted',
        reason: 'NodeDeleted',
        message: 'node n1 was deleted before its beforeDrain hook started',
      },
    ],
    [
      'deleted and created again (another uid, schedulable): Deleted, not a wait',
      'afterDrain',
      {},
      REPLACED,
      false,
      {
        kind: 'end',
        phase: 'Deleted',
        reason: 'NodeDeleted',
        message:
          'node n1 was deleted and created again under its name (now uid uid-2: another node, not claimed by this plan, so it is not drained, cordoned or uncordoned by it) before its afterDrain hook started',
      },
    ],
    [
      'paused, uncordoned: hold (the pause decides first)',
      'beforeDrain',
      { paused: true },
      UNCORDONED,
      false,
      { kind: 'hold' },
    ],
    [
      'paused past the deadline: hold (the resume applies it)',
      'afterDrain',
      { paused: true },
      UNCORDONED,
      true,
      { kind: 'hold' },
    ],
    ['paused, no look yet: hold', 'beforeDrain', { paused: true }, undefined, false, { kind: 'hold' }],
    [
      'aborted while uncordoned: Aborted, nothing started',
      'beforeDrain',
      { aborted: true },
      UNCORDONED,
      false,
      { kind: 'end', phase: 'Aborted', reason: 'Aborted', message: 'aborted before the beforeDrain hook' },
    ],
    [
      'aborted while paused and deleted: Aborted',
      'afterDrain',
      { aborted: true, paused: true },
      GONE,
      true,
      { kind: 'end', phase: 'Aborted', reason: 'Aborted', message: 'aborted before the afterDrain hook' },
    ],
  ];
  for (const [name, hook, flags, view, past, want] of table)
    it(`${hook}, ${name}`, () => {
      const at = { node: 'n1', plan: 'p1', paused: flags.paused ?? false, aborted: flags.aborted ?? false };
      assert.deepEqual(hookGateStep(hook, at, view, past), want);
    });
});

/** An in-memory JobPort: deleted Jobs stay (terminating) for `lingerReads` reads, as under foreground deletion. */
function memoryJobPort(lingerReads: number) {
  const jobs = new Map<string, { job: V1Job; deleting?: number }>();
  const calls: string[] = [];
  const port: JobPort = {
    createJob: async (ns, job) => {
      const key = `${ns}/${job.metadata!.name}`;
      if (jobs.has(key)) return 'exists';
      jobs.set(key, { job });
      return 'created';
    },
    readJob: async (ns, name) => {
      const e = jobs.get(`${ns}/${name}`);
      if (e?.deleting !== undefined && e.deleting-- <= 0) jobs.delete(`${ns}/${name}`);
      return jobs.get(`${ns}/${name}`)?.job;
    },
    deleteJob: async (ns, name) => {
      calls.push(`delete ${ns}/${name}`);
      const e = jobs.get(`${ns}/${name}`);
      if (!e) return 'gone';
      e.deleting ??= lingerReads;
      return 'deleting';
    },
    listJobPods: async () => [],
  };
  return { port, jobs, calls };
}

describe('stopHookJob (over an in-memory JobPort)', () => {
  const job: V1Job = { metadata: { name: 'j' } };
  it('deletes the Job and waits until a read finds it gone', async () => {
    const m = memoryJobPort(2);
    m.jobs.set('ns/j', { job });
    const acts = createJobActivities(undefined as never, m.port);
    assert.deepEqual(await acts.stopHookJob({ namespace: 'ns', name: 'j', waitSeconds: 30 }), { gone: true });
    assert.deepEqual(m.calls, ['delete ns/j']);
    assert.equal(m.jobs.size, 0);
  });
  it('a Job already gone is gone at once', async () => {
    const m = memoryJobPort(0);
    const acts = createJobActivities(undefined as never, m.port);
    assert.deepEqual(await acts.stopHookJob({ namespace: 'ns', name: 'j', waitSeconds: 30 }), { gone: true });
  });
  it('a Job still there at the bound is reported, not waited for longer', async () => {
    const m = memoryJobPort(Number.MAX_SAFE_INTEGER);
    m.jobs.set('ns/j', { job });
    const acts = createJobActivities(undefined as never, m.port);
    assert.deepEqual(await acts.stopHookJob({ namespace: 'ns', name: 'j', waitSeconds: 0 }), { gone: false });
  });
});

describe('hookJobName', () => {
  it('is deterministic, at most 63 characters, a DNS label, distinct per plan, node and hook', () => {
    const long = 'node-'.repeat(40) + 'x';
    const names = [
      hookJobName('uid-1', 'n1', 'beforeDrain'),
      hookJobName('uid-1', 'n1', 'afterDrain'),
      hookJobName('uid-2', 'n1', 'afterDrain'),
      hookJobName('uid-1', 'n2', 'afterDrain'),
      hookJobName('uid-1', long, 'afterDrain'),
      hookJobName('uid-1', 'kwok-node-0.example.com', 'afterDrain'),
    ];
    assert.equal(new Set(names).size, names.length);
    assert.equal(hookJobName('uid-1', 'n1', 'afterDrain'), names[1]);
    for (const n of names) {
      assert.ok(n.length <= 63, n);
      assert.match(n, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    }
    assert.match(names[1]!, /^drainflow-after-n1-[0-9a-f]{8}$/);
  });
});

describe('buildHookJob', () => {
  const job = buildHookJob({
    plan: { name: 'kernel', uid: 'uid-k' },
    node: 'kwok-node-1',
    hook: 'afterDrain',
    name: 'drainflow-after-kwok-node-1-abc',
    job: {
      namespace: 'maint',
      timeoutSeconds: 300,
      template: {
        metadata: { labels: { team: 'infra' } },
        spec: {
          template: {
            spec: {
              containers: [{ name: 'reboot', image: 'busybox' }],
              tolerations: [{ key: 'dedicated', operator: 'Exists' }],
            },
          },
        },
      },
    },
  });
  it('pins the pod to the node, tolerates the cordon taint, never restarts, keeps the template', () => {
    const pod = job.spec!.template.spec!;
    assert.equal(pod.nodeName, 'kwok-node-1');
    assert.equal(pod.restartPolicy, 'Never');
    assert.deepEqual(pod.tolerations, [
      { key: 'dedicated', operator: 'Exists' },
      { key: CORDON_TAINT, operator: 'Exists', effect: 'NoSchedule' },
    ]);
    assert.equal(pod.containers[0]!.image, 'busybox');
    assert.equal(job.spec!.backoffLimit, 0);
    assert.equal(job.spec!.activeDeadlineSeconds, 300);
  });
  it('is named, labelled with plan, node and hook, and owned by the plan', () => {
    assert.equal(job.metadata!.name, 'drainflow-after-kwok-node-1-abc');
    assert.equal(job.metadata!.namespace, 'maint');
    const labels = {
      [HOOK_LABELS.plan]: 'kernel',
      [HOOK_LABELS.node]: 'kwok-node-1',
      [HOOK_LABELS.hook]: 'afterDrain',
    };
    assert.deepEqual(job.metadata!.labels, { team: 'infra', ...labels });
    assert.deepEqual(job.spec!.template.metadata!.labels, labels);
    assert.deepEqual(job.metadata!.ownerReferences, [
      {
        apiVersion: 'maintenance.drainflow.dev/v1alpha1',
        kind: 'MaintenancePlan',
        name: 'kernel',
        uid: 'uid-k',
      },
    ]);
  });
});

describe('jobEnd', () => {
  const failedPod: V1Pod = {
    metadata: { name: 'p-1' },
    status: {
      phase: 'Failed',
      containerStatuses: [
        {
          name: 'check',
          image: 'x',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 2, message: 'disk /dev/sda1 unhealthy\n', reason: 'Error' } },
        },
      ],
    },
  };
  const table: [string, V1Job, V1Pod[], ReturnType<typeof jobEnd>][] = [
    ['running', { status: { active: 1 } }, [], undefined],
    [
      'complete',
      { status: { succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } },
      [],
      { succeeded: true, message: 'completed' },
    ],
    [
      'failed: the container termination message',
      {
        status: {
          failed: 1,
          conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
        },
      },
      [failedPod],
      { succeeded: false, message: 'pod p-1 container check: disk /dev/sda1 unhealthy (exit code 2)' },
    ],
    [
      'failed without pods: the condition',
      {
        status: {
          conditions: [
            {
              type: 'Failed',
              status: 'True',
              reason: 'DeadlineExceeded',
              message: 'Job was active longer than specified deadline',
            },
          ],
        },
      },
      [],
      { succeeded: false, message: 'job failed: Job was active longer than specified deadline' },
    ],
    [
      'a False condition is no end',
      { status: { conditions: [{ type: 'Failed', status: 'False' }] } },
      [],
      undefined,
    ],
  ];
  for (const [name, job, pods, want] of table) it(name, () => assert.deepEqual(jobEnd(job, pods), want));
});

describe('spec rules of rolling maintenance', () => {
  const base = { nodeNames: ['n1'] };
  const errors = (spec: object) => {
    const r = MaintenancePlanSpecSchema.safeParse(spec);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };
  it('a hook needs exactly one of job and workflow', () => {
    const wfHook = { type: 'patch', taskQueue: 'ops' };
    const jobHook = {
      namespace: 'maint',
      template: { spec: { template: { spec: { containers: [{ name: 'patch', image: 'busybox' }] } } } },
    };
    assert.deepEqual(errors({ ...base, hooks: { afterDrain: { workflow: wfHook } } }), []);
    assert.deepEqual(errors({ ...base, hooks: { beforeDrain: { job: jobHook } } }), []);
    assert.deepEqual(errors({ ...base, hooks: { afterDrain: {} } }), [
      'hooks.afterDrain: exactly one of job and workflow must be set',
    ]);
    assert.deepEqual(errors({ ...base, hooks: { beforeDrain: { job: jobHook, workflow: wfHook } } }), [
      'hooks.beforeDrain: exactly one of job and workflow must be set',
    ]);
    assert.equal(
      MaintenancePlanSpecSchema.parse({ ...base, hooks: { afterDrain: { workflow: wfHook } } }).hooks
        ?.afterDrain?.workflow?.timeoutSeconds,
      600,
    );
  });
  it('AfterEachNode refuses cordon AllAtStart and DeletePods without a per-node deadline', () => {
    assert.deepEqual(errors({ ...base, uncordon: 'AfterEachNode' }), []);
    assert.deepEqual(errors({ ...base, uncordon: 'AfterEachNode', cordon: 'AllAtStart' }), [
      `cordon: ${ROLLING_MESSAGES.allAtStart}`,
    ]);
    assert.deepEqual(errors({ ...base, uncordon: 'AfterEachNode', onDeadline: 'DeletePods' }), [
      `onDeadline: ${ROLLING_MESSAGES.deletePods}`,
    ]);
    assert.deepEqual(
      errors({ ...base, uncordon: 'AfterEachNode', onDeadline: 'DeletePods', nodeDrainTimeoutSeconds: 600 }),
      [],
    );
    assert.deepEqual(
      errors({ ...base, uncordon: 'OnRelease', cordon: 'AllAtStart', onDeadline: 'DeletePods' }),
      [],
    );
  });
});

describe('plan reducers with handed-back nodes', () => {
  const plan = (): PlanRunState => ({
    stage: 'Drain',
    plan: {
      phase: 'Running',
      reason: 'Draining',
      message: '',
      observedGeneration: 1,
      nodes: ['n1', 'n2'].map(pendingNode),
      conditions: [],
    },
    paused: false,
    aborted: false,
    released: false,
    claimed: {},
    started: ['n1', 'n2'],
    finished: [],
    cordoned: 0,
    stopStarting: false,
    announced: [],
    continuedRuns: 0,
  });
  const progress = (node: string, phase: 'Drained' | 'Released', extra: object = {}) => ({
    node,
    phase,
    podsTotal: 1,
    podsEvicted: 1,
    podsFailed: 0,
    blockedBy: [],
    attempts: 1,
    tooManyRequests: 0,
    ...extra,
  });
  it('a final Released report drops the claim; every node handed back is Completed', () => {
    const s = plan();
    mergeNodeProgress(
      s,
      progress('n1', 'Drained', { claimed: true, cordonedByPlan: true, reason: 'AwaitingRelease' }),
    );
    assert.deepEqual(Object.keys(s.claimed), ['n1']);
    mergeNodeProgress(
      s,
      progress('n2', 'Drained', { claimed: true, cordonedByPlan: true, reason: 'AwaitingRelease' }),
    );
    assert.equal(runningSummary(s, 'p').reason, 'AwaitingRelease');
    mergeNodeProgress(
      s,
      progress('n1', 'Released', {
        claimed: false,
        final: true,
        hook: { name: 'afterDrain', phase: 'Succeeded' },
      }),
    );
    assert.deepEqual(Object.keys(s.claimed), ['n2']);
    assert.equal(s.plan.nodes[0]!.hook?.phase, 'Succeeded');
    mergeNodeProgress(s, progress('n2', 'Released', { claimed: false, final: true }));
    assert.deepEqual(s.claimed, {});
    assert.deepEqual(planOutcome(s), {
      phase: 'Completed',
      reason: 'AllNodesHandedBack',
      message: '2 node(s) drained and handed back one by one (uncordon AfterEachNode)',
    });
  });
  it('every node handed back, one after its afterDrain hook failed: Completed, naming the failure', () => {
    const s = plan();
    mergeNodeProgress(s, progress('n1', 'Released', { final: true, reason: 'HandedBack' }));
    mergeNodeProgress(s, {
      ...progress('n2', 'Released', { final: true, hook: { name: 'afterDrain', phase: 'Failed' } }),
      reason: 'HandedBackAfterHookFailure',
      message: 'afterDrain hook failed: health check failed; released by hand; uncordoned',
    });
    assert.deepEqual(planOutcome(s), {
      phase: 'Completed',
      reason: PlanReason.HandedBackWithHookFailures,
      message:
        '2 node(s) drained and handed back one by one (uncordon AfterEachNode); handed back by hand after a failed hook: n2 (afterDrain hook failed: health check failed; released by hand; uncordoned)',
    });
  });
  it('a node blocked by its hook at the end makes the plan Blocked/HookFailed', () => {
    const s = plan();
    mergeNodeProgress(s, progress('n1', 'Released', { final: true }));
    mergeNodeProgress(s, {
      ...progress('n2', 'Drained', { final: true, claimed: true }),
      phase: 'Blocked',
      reason: 'HookFailed',
      message: 'afterDrain hook failed: x',
    });
    assert.deepEqual(planOutcome(s), {
      phase: 'Blocked',
      reason: 'HookFailed',
      message: 'node n2: afterDrain hook failed: x',
    });
  });
});
