/**
 * Rolling maintenance in the time-skipping environment, against the sim cluster: spec.uncordon
 * AfterEachNode with maxUnavailableNodes 1, an afterDrain hook that is a Temporal workflow of the
 * user's (test/fixtures/workflows/hooks.ts, served by a worker of its own task queue), per-node
 * releases (the releaseNode Update, the node annotation) and a worker restart in the middle of a
 * hook.
 */
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { MaintenancePlanSpecInput } from '../../src/api/plan.js';
import { PlanReason } from '../../src/api/reasons.js';
import { hookWorkflowId } from '../../src/drain/hooks.js';
import { createGrantDeliveryActivities } from '../../src/activities/grant-delivery.js';
import { createHookWorkflowActivities } from '../../src/activities/hook-workflow.js';
import { createJobActivities } from '../../src/activities/jobs.js';
import type { JobPort } from '../../src/k8s/jobs.js';
import { WEEKDAYS } from '../../src/api/calendar.js';
import {
  abortSignal,
  pauseSignal,
  releaseNodeUpdate,
  releaseSignal,
  resumeSignal,
} from '../../src/contract/plan-messages.js';
import { evictionTaskQueue, nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { assertNoWorkflowTaskFailed, workflowIds } from '../helpers/drain-checks.js';
import { SimCluster } from '../helpers/sim-cluster.js';
import { quietBundlerLogger } from '../helpers/temporal.js';
import { EventType, WorkflowHarness, input } from '../helpers/workflow-harness.js';

const wf = new WorkflowHarness();
const { waitUntil, startPlan, resultOf } = wf;
let hookBundle: WorkflowBundle;

before(async () => {
  await wf.setup();
  hookBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../fixtures/workflows/hooks.ts', import.meta.url)),
    logger: quietBundlerLogger,
  });
});
beforeEach(wf.freshServer);
after(wf.teardown);

const NODES = ['n1', 'n2', 'n3'];
let seq = 0;

/** Three nodes with two evictable pods each. */
function threeNodes(): SimCluster {
  const sim = new SimCluster();
  for (const n of NODES) {
    sim.addNode(n);
    sim.addPod({ namespace: 'app', name: `${n}-a`, node: n, terminationGracePeriodSeconds: 30 });
    sim.addPod({ namespace: 'app', name: `${n}-b`, node: n, terminationGracePeriodSeconds: 30 });
  }
  return sim;
}

/** The hook's answers: how long it runs (workflow time) and, per node, a failure message. */
interface HookScript {
  holdSeconds: number;
  fail?: Record<string, string>;
}

/**
 * Workers for one test: drainflow's (workflows + sim activities, and the eviction queue) on `tq`,
 * and the user's hook worker on `${tq}-hooks`. `restartMain` stops drainflow's worker and starts a
 * new one on the same queue (a worker restart: the new one replays the workflows' histories).
 */
async function workers(sim: SimCluster, script: HookScript, restartable = false, extra: object = {}) {
  const tq = `rolling-${++seq}`;
  const hookTq = `${tq}-hooks`;
  const activities = {
    ...sim.activities(),
    ...createHookWorkflowActivities(),
    ...createGrantDeliveryActivities(),
    ...extra,
  };
  const hookRuns: { node: string; atMs: number; cordoned: string[] }[] = [];
  const start = async () => {
    const main = await Worker.create({
      connection: wf.env.nativeConnection,
      taskQueue: tq,
      workflowBundle: wf.bundle,
      activities,
      // No sticky cache: the time-skipping server never times out a task on a stopped worker's
      // sticky queue, so after a restart the new worker would not see it.
      ...(restartable ? { maxCachedWorkflows: 0 } : {}),
    });
    const evictions = await Worker.create({
      connection: wf.env.nativeConnection,
      taskQueue: evictionTaskQueue(tq),
      activities: { evictPod: activities.evictPod },
    });
    const done = Promise.all([main.run(), evictions.run()]);
    return { stop: async () => (main.shutdown(), evictions.shutdown(), await done) };
  };
  const hooks = await Worker.create({
    connection: wf.env.nativeConnection,
    taskQueue: hookTq,
    workflowBundle: hookBundle,
    activities: {
      hookRan: async ({ node }: { plan: string; node: string }) => {
        // Workflow (server) time, as the sim's calls: the test server skips time.
        const atMs = Context.current().info.currentAttemptScheduledTimestampMs;
        const cordoned = [...sim.nodes].filter(([, n]) => n.unschedulable).map(([name]) => name);
        hookRuns.push({ node, atMs, cordoned });
        sim.calls.push({ name: 'hook', atMs, arg: { node } });
        return {
          holdSeconds: script.holdSeconds,
          ...(script.fail?.[node] ? { fail: script.fail[node] } : {}),
        };
      },
    },
  });
  const hooksDone = hooks.run();
  let main = await start();
  return {
    tq,
    hookTq,
    hookRuns,
    restartMain: async () => {
      await main.stop();
      main = await start();
    },
    stop: async () => {
      await main.stop();
      hooks.shutdown();
      await hooksDone;
    },
  };
}

/**
 * The Job activities (src/activities/jobs.ts) over an in-memory batch/v1: a Job never ends by
 * itself (its pod runs on), a deleted one is gone after two reads (foreground deletion: its pods
 * first). Deletions and disappearances go into the sim's call log, so their order against the
 * node's hand-back can be read.
 */
function neverEndingJobs(sim: SimCluster) {
  const jobs = new Map<string, { deleting?: number }>();
  const log = (name: string, key: string) =>
    sim.calls.push({ name, atMs: 0, arg: { job: key }, result: undefined });
  const port: JobPort = {
    createJob: async (ns, job) => {
      const key = `${ns}/${job.metadata!.name}`;
      if (jobs.has(key)) return 'exists';
      jobs.set(key, {});
      log('createJob', key);
      return 'created';
    },
    readJob: async (ns, name) => {
      const key = `${ns}/${name}`;
      const e = jobs.get(key);
      if (e?.deleting !== undefined && e.deleting-- <= 0) {
        jobs.delete(key);
        log('jobGone', key);
      }
      return jobs.has(key) ? { metadata: { name, namespace: ns }, status: { active: 1 } } : undefined;
    },
    deleteJob: async (ns, name) => {
      const e = jobs.get(`${ns}/${name}`);
      log('deleteJob', `${ns}/${name}`);
      if (!e) return 'gone';
      e.deleting ??= 2;
      return 'deleting';
    },
    listJobPods: async () => [],
  };
  return { jobs, activities: createJobActivities(undefined as never, port) };
}

/** Most nodes cordoned at once, from the sim's cordon and release calls in call order. */
function maxCordoned(sim: SimCluster): number {
  const out = new Set<string>();
  let max = 0;
  for (const c of sim.calls) {
    const node = (c.arg as { node?: string }).node;
    if (c.name === 'cordonNode' && (c.result as { outcome?: string })?.outcome === 'Cordoned') out.add(node!);
    if (c.name === 'releaseNode' && (c.result as { uncordoned?: boolean })?.uncordoned) out.delete(node!);
    max = Math.max(max, out.size);
  }
  return max;
}

/** Index of the first call named `name` on `node` in the sim's call order (-1: none). */
const callIndex = (sim: SimCluster, name: string, node: string) =>
  sim.calls.findIndex((c) => c.name === name && (c.arg as { node?: string }).node === node);

const rollingSpec = (
  hookTq: string,
  extra: Partial<MaintenancePlanSpecInput> = {},
): MaintenancePlanSpecInput => ({
  nodeNames: NODES,
  maxUnavailableNodes: 1,
  uncordon: 'AfterEachNode',
  drainTimeoutSeconds: 7200,
  hooks: { afterDrain: { workflow: { type: 'testHook', taskQueue: hookTq, timeoutSeconds: 600 } } },
  ...extra,
});

/**
 * Starts a plan of n1 and n2 without hooks (maxUnavailableNodes 1, uncordon AfterEachNode) on
 * task queue `tq` and waits until n1 is drained and awaits its per-node release.
 * @returns the input, the plan's handle and a reader of a node's last written status.
 */
async function startUntilN1AwaitsRelease(tq: string, sim: SimCluster, id: string) {
  const inp = input(id, {
    nodeNames: ['n1', 'n2'],
    maxUnavailableNodes: 1,
    uncordon: 'AfterEachNode',
    drainTimeoutSeconds: 7200,
  });
  const h = await startPlan(tq, inp);
  const node = (name: string) => sim.lastStatus()?.nodes?.find((n) => n.name === name);
  await waitUntil(() => node('n1')?.reason === 'AwaitingRelease', 'n1 drained, awaiting release');
  return { inp, h, node };
}

describe('rolling maintenance (time-skipping)', () => {
  it('one node out of service at a time: drain, afterDrain hook, uncordon, then the next node', async () => {
    const sim = threeNodes();
    const w = await workers(sim, { holdSeconds: 120 });
    try {
      const inp = input('rolling-hooks', rollingSpec(w.hookTq));
      const h = await startPlan(w.tq, inp);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(final.reason, 'AllNodesHandedBack');
      assert.equal(maxCordoned(sim), 1, 'at no moment more than one node cordoned');
      assert.deepEqual(
        w.hookRuns.map((r) => r.node),
        NODES,
        'the hook ran once per node, in plan order',
      );
      for (const r of w.hookRuns)
        assert.deepEqual(r.cordoned, [r.node], `only ${r.node} cordoned during its hook`);
      for (const [prev, next] of [
        ['n1', 'n2'],
        ['n2', 'n3'],
      ] as const) {
        const evicted = sim.calls.filter(
          (c) => c.name === 'evictPod' && (c.arg as { name: string }).name.startsWith(`${prev}-`),
        );
        const hookAt = callIndex(sim, 'hook', prev);
        const releasedAt = callIndex(sim, 'releaseNode', prev);
        assert.ok(
          evicted.length >= 2 && sim.calls.indexOf(evicted.at(-1)!) < hookAt,
          `${prev}: hook after its drain`,
        );
        assert.ok(hookAt < releasedAt, `${prev}: uncordoned after its hook`);
        assert.ok(
          releasedAt < callIndex(sim, 'cordonNode', next),
          `${next} starts after ${prev} is uncordoned`,
        );
        // The hook runs 120 s of workflow time: the next node cannot start before it succeeded.
        const hookRun = w.hookRuns.find((r) => r.node === prev)!;
        const nextCordon = sim.calls[callIndex(sim, 'cordonNode', next)]!;
        assert.ok(nextCordon.atMs >= hookRun.atMs + 120_000, `${next} cordoned after ${prev}'s hook ended`);
      }
      for (const n of NODES) assert.equal(sim.nodes.get(n)!.unschedulable, false, `${n} uncordoned`);
      const st = sim.lastStatus()!;
      for (const n of st.nodes ?? []) {
        assert.equal(n.phase, 'Released', `${n.name}: ${n.message}`);
        assert.equal(n.hook?.name, 'afterDrain');
        assert.equal(n.hook?.phase, 'Succeeded');
        assert.equal(
          n.hook?.ref,
          hookWorkflowId(nodeWorkflowId(planWorkflowId(inp.plan), n.name), 'afterDrain'),
        );
        assert.ok(n.hook?.started);
      }
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, NODES));
    } finally {
      await w.stop();
    }
  });

  it("a failing hook blocks its node with the hook's message; a per-node release (Update) hands it back", async () => {
    const sim = threeNodes();
    const w = await workers(sim, {
      holdSeconds: 10,
      fail: { n2: 'health check failed on n2: kubelet not ready' },
    });
    try {
      const inp = input('rolling-fail', rollingSpec(w.hookTq));
      const h = await startPlan(w.tq, inp);
      const n2 = () => sim.lastStatus()?.nodes?.find((n) => n.name === 'n2');
      await waitUntil(() => n2()?.reason === 'HookFailed', 'n2 blocked by its hook');
      assert.equal(n2()!.phase, 'Blocked');
      assert.match(n2()!.message ?? '', /health check failed on n2: kubelet not ready/);
      assert.equal(n2()!.hook?.phase, 'Failed');
      assert.match(n2()!.hook?.message ?? '', /health check failed on n2/);
      // The blocked node keeps its slot: n3 does not start, n2 stays cordoned.
      await wf.skip('10m');
      const st = sim.lastStatus()!;
      assert.equal(st.phase, 'Running');
      assert.equal(st.reason, 'HookFailed');
      assert.equal(st.nodes?.find((n) => n.name === 'n3')?.phase, 'Pending');
      assert.equal(sim.nodes.get('n2')!.unschedulable, true);
      assert.equal(callIndex(sim, 'cordonNode', 'n3'), -1);
      // A node not in the plan is refused by the Update's validator.
      await assert.rejects(h.executeUpdate(releaseNodeUpdate, { args: [{ node: 'n9' }] }), (err: Error) =>
        /node n9 is not a node of plan rolling-fail/.test(String((err.cause as Error)?.message)),
      );
      // The failure went out as a Warning Event on the plan, naming node, hook and message.
      assert.deepEqual(
        sim.events.filter((e) => e.reason === 'HookFailed'),
        [
          {
            type: 'Warning',
            reason: 'HookFailed',
            message: 'node n2: afterDrain hook failed: health check failed on n2: kubelet not ready',
          },
        ],
      );
      await h.executeUpdate(releaseNodeUpdate, { args: [{ node: 'n2' }] });
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      // Completed, but not as if every hook succeeded: the reason and message name the failure.
      assert.equal(final.reason, PlanReason.HandedBackWithHookFailures);
      assert.match(
        final.message ?? '',
        /handed back by hand after a failed hook: n2 \(afterDrain hook failed: health check failed on n2: kubelet not ready; released by hand; uncordoned\)/,
      );
      assert.equal(sim.lastStatus()!.nodes![1]!.reason, 'HandedBackAfterHookFailure');
      const nodes = sim.lastStatus()!.nodes!;
      assert.deepEqual(
        nodes.map((n) => n.phase),
        ['Released', 'Released', 'Released'],
      );
      assert.match(nodes[1]!.message ?? '', /released by hand/);
      assert.equal(maxCordoned(sim), 1);
      assert.deepEqual(
        w.hookRuns.map((r) => r.node),
        NODES,
      );
    } finally {
      await w.stop();
    }
  });

  it('a worker restart in the middle of a hook does not run the hook twice', async () => {
    const sim = threeNodes();
    const w = await workers(sim, { holdSeconds: 300 }, true);
    try {
      const inp = input('rolling-restart', rollingSpec(w.hookTq, { nodeNames: ['n1'] }));
      const h = await startPlan(w.tq, inp);
      await waitUntil(() => w.hookRuns.length === 1, 'the hook of n1 started');
      await waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.hook?.phase === 'Running',
        'the hook shows Running',
      );
      await w.restartMain();
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(w.hookRuns.length, 1, 'the hook ran once');
      const hookId = hookWorkflowId(nodeWorkflowId(planWorkflowId(inp.plan), 'n1'), 'afterDrain');
      const desc = await wf.env.client.workflow.getHandle(hookId).describe();
      assert.equal(desc.status.name, 'COMPLETED');
      assert.equal(sim.calls.filter((c) => c.name === 'releaseNode').length, 1, 'handed back once');
      // The node drain started the child once over all its runs (the restarted worker replayed the start).
      let childStarts = 0;
      for (const run of await wf.runs(nodeWorkflowId(planWorkflowId(inp.plan), 'n1')))
        childStarts += (run.history.events ?? []).filter(
          (e) => e.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
        ).length;
      assert.equal(childStarts, 1, 'one child workflow start in the node drain history');
      const hookHistory = await wf.env.client.workflow.getHandle(hookId).fetchHistory();
      assert.equal(
        hookHistory.events?.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
          .length,
        1,
        'the hook workflow itself ran its activity once',
      );
      // A task in flight at the restart may time out (the stopped worker never completes it); no
      // task may fail, which is what a replay that went another way (nondeterminism) does.
      for (const id of workflowIds(inp, ['n1']))
        for (const run of await wf.runs(id))
          assert.deepEqual(
            (run.history.events ?? [])
              .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
              .map((e) => e.workflowTaskFailedEventAttributes?.failure?.message),
            [],
            `${id}: no failed workflow task`,
          );
    } finally {
      await w.stop();
    }
  });

  it('an abort during a workflow hook cancels the child and awaits its close before the node is handed back', async () => {
    const sim = threeNodes();
    const w = await workers(sim, { holdSeconds: 24 * 3600 });
    try {
      const inp = input('rolling-abort-wf', rollingSpec(w.hookTq, { nodeNames: ['n1'] }));
      const h = await startPlan(w.tq, inp);
      await waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.hook?.phase === 'Running',
        'the afterDrain hook of n1 runs',
      );
      await h.signal(abortSignal);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Aborted', final.message);
      const hookId = hookWorkflowId(nodeWorkflowId(planWorkflowId(inp.plan), 'n1'), 'afterDrain');
      const desc = await wf.env.client.workflow.getHandle(hookId).describe();
      assert.equal(
        desc.status.name,
        'CANCELLED',
        'the hook workflow was cancelled (not left to a termination)',
      );
      const n1 = sim.lastStatus()!.nodes!.find((n) => n.name === 'n1')!;
      assert.equal(n1.phase, 'Aborted', n1.message);
      assert.match(
        n1.message ?? '',
        new RegExp(`aborted during the afterDrain hook; its workflow ${hookId} was cancelled`),
      );
      assert.equal(n1.hook?.phase, 'Stopped');
      assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'n1 handed back');
      const releasedAt = sim.calls.find((c) => c.name === 'releaseNode')!.atMs;
      assert.ok(desc.closeTime!.getTime() <= releasedAt, 'the hook workflow closed before the hand-back');
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    } finally {
      await w.stop();
    }
  });

  it('an abort during a Job hook deletes the Job and waits until it is gone before the node is handed back', async () => {
    const sim = threeNodes();
    const jobs = neverEndingJobs(sim);
    const w = await workers(sim, { holdSeconds: 0 }, false, jobs.activities);
    try {
      const inp = input(
        'rolling-abort-job',
        rollingSpec(w.hookTq, {
          nodeNames: ['n1'],
          hooks: {
            afterDrain: {
              job: {
                namespace: 'hooks',
                timeoutSeconds: 3600,
                template: {
                  spec: { template: { spec: { containers: [{ name: 'patch', image: 'busybox' }] } } },
                },
              },
            },
          },
        }),
      );
      const h = await startPlan(w.tq, inp);
      await waitUntil(() => jobs.jobs.size === 1, 'the Job of n1 was created');
      await waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.hook?.phase === 'Running',
        'the afterDrain hook of n1 runs',
      );
      await h.signal(abortSignal);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Aborted', final.message);
      assert.equal(jobs.jobs.size, 0, 'the Job is gone');
      const order = sim.calls.map((c) => c.name);
      const deleted = order.indexOf('deleteJob');
      const gone = order.indexOf('jobGone');
      const released = order.indexOf('releaseNode');
      assert.ok(deleted >= 0 && gone > deleted, `the Job was deleted, then gone (${order.join(', ')})`);
      assert.ok(released > gone, `the node was handed back after the Job was gone (${order.join(', ')})`);
      assert.equal(sim.nodes.get('n1')!.unschedulable, false, 'n1 handed back');
      const n1 = sim.lastStatus()!.nodes!.find((n) => n.name === 'n1')!;
      assert.equal(n1.phase, 'Aborted', n1.message);
      assert.match(
        n1.message ?? '',
        /aborted during the afterDrain hook; its Job hooks\/drainflow-after-n1-\w+ was deleted/,
      );
      assert.equal(n1.hook?.phase, 'Stopped');
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    } finally {
      await w.stop();
    }
  });

  it('beforeDrain: evictions start only after it succeeded; a failed one blocks its node undrained', async () => {
    const sim = threeNodes();
    const w = await workers(sim, {
      holdSeconds: 60,
      fail: { n2: 'pre-check failed: node n2 is the last etcd member' },
    });
    try {
      const inp = input(
        'rolling-before',
        rollingSpec(w.hookTq, {
          nodeNames: ['n1', 'n2'],
          hooks: {
            beforeDrain: { workflow: { type: 'testHook', taskQueue: w.hookTq, timeoutSeconds: 600 } },
          },
        }),
      );
      const h = await startPlan(w.tq, inp);
      const node = (name: string) => sim.lastStatus()?.nodes?.find((n) => n.name === name);
      // No afterDrain hook: n1 waits for a per-node release once drained.
      await waitUntil(() => node('n1')?.reason === 'AwaitingRelease', 'n1 drained, awaiting release');
      await h.executeUpdate(releaseNodeUpdate, { args: [{ node: 'n1' }] });
      await waitUntil(() => node('n2')?.reason === 'HookFailed', 'n2 blocked by its beforeDrain hook');
      const hook1 = w.hookRuns.find((r) => r.node === 'n1')!;
      const firstEviction = sim.calls.find(
        (c) => c.name === 'evictPod' && (c.arg as { name: string }).name.startsWith('n1-'),
      )!;
      assert.ok(firstEviction.atMs >= hook1.atMs + 60_000, 'n1 evicted only after its 60 s hook');
      assert.ok(
        callIndex(sim, 'cordonNode', 'n1') < callIndex(sim, 'hook', 'n1'),
        'the hook runs on the cordoned node',
      );
      assert.equal(
        sim.calls.filter((c) => c.name === 'evictPod' && (c.arg as { name: string }).name.startsWith('n2-'))
          .length,
        0,
        'no eviction on n2',
      );
      assert.equal(node('n2')!.phase, 'Blocked');
      assert.match(
        node('n2')!.message ?? '',
        /beforeDrain hook failed: pre-check failed: node n2 is the last etcd member/,
      );
      await h.executeUpdate(releaseNodeUpdate, { args: [{ node: 'n2' }] });
      await waitUntil(() => sim.lastStatus()?.phase === 'Blocked', 'the plan settled');
      const settled = sim.lastStatus()!;
      assert.equal(node('n2')!.phase, 'Skipped', 'handed back undrained');
      assert.equal(node('n2')!.reason, 'ReleasedUndrained');
      assert.equal(sim.nodes.get('n2')!.unschedulable, false);
      assert.equal(settled.reason, 'NodesSkipped');
      assert.match(settled.message ?? '', /released undrained after a failed beforeDrain hook: n2/);
      // Blocked stays open for the whole-plan release, as without AfterEachNode.
      await h.signal(releaseSignal);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(node('n1')!.phase, 'Released');
      assert.equal(maxCordoned(sim), 1);
    } finally {
      await w.stop();
    }
  });

  it('without a hook: the node annotation and the whole-plan release hand the nodes back', async () => {
    const sim = threeNodes();
    const w = await workers(sim, { holdSeconds: 0 });
    try {
      const { inp, h, node } = await startUntilN1AwaitsRelease(w.tq, sim, 'rolling-release');
      assert.equal(node('n1')!.phase, 'Drained');
      assert.equal(sim.lastStatus()!.reason, 'AwaitingRelease');
      await wf.skip('30m');
      assert.equal(node('n2')?.phase, 'Pending', 'n2 waits for n1 to be released');
      sim.annotateRelease('n1');
      // The sim answers an observation at once (a real one answers on the change): the next look is
      // within the release wait's observation bound (300 s).
      await waitUntil(() => node('n1')?.phase === 'Released', 'n1 released by the annotation', 60_000, '30s');
      assert.equal(sim.nodes.get('n1')!.unschedulable, false);
      assert.equal(sim.nodes.get('n1')!.releaseAnnotation, undefined, 'the annotation is used up');
      await waitUntil(() => node('n2')?.reason === 'AwaitingRelease', 'n2 drained, awaiting release');
      await h.signal(releaseSignal);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(node('n2')!.phase, 'Released');
      assert.equal(sim.nodes.get('n2')!.unschedulable, false);
      assert.equal(maxCordoned(sim), 1);
      assert.equal(w.hookRuns.length, 0);
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']));
    } finally {
      await w.stop();
    }
  });
  /** One node without pods (its drain ends at the first look) and both hooks of `hookTq`. */
  const bothHooks = (hookTq: string, extra: Partial<MaintenancePlanSpecInput> = {}) =>
    rollingSpec(hookTq, {
      nodeNames: ['n1'],
      hooks: {
        beforeDrain: { workflow: { type: 'testHook', taskQueue: hookTq, timeoutSeconds: 3600 } },
        afterDrain: { workflow: { type: 'testHook', taskQueue: hookTq, timeoutSeconds: 3600 } },
      },
      ...extra,
    });
  const emptyNode = () => new SimCluster().addNode('n1');

  it('a paused plan starts no hook until resumed (the hook in flight at the pause finishes)', async () => {
    const sim = emptyNode();
    const w = await workers(sim, { holdSeconds: 60 });
    try {
      const inp = input('rolling-held', bothHooks(w.hookTq));
      const h = await startPlan(w.tq, inp);
      await waitUntil(() => w.hookRuns.length === 1, 'the beforeDrain hook started');
      await h.signal(pauseSignal);
      const n1 = () => sim.lastStatus()?.nodes?.[0];
      await waitUntil(
        () => n1()?.reason === 'PausedByUser',
        'n1 paused before its afterDrain hook',
        30_000,
        '10s',
      );
      assert.equal(n1()!.phase, 'Paused');
      assert.match(n1()!.message ?? '', /the afterDrain hook starts when the plan is resumed/);
      assert.equal(n1()!.hook?.name, 'beforeDrain', 'the hook in flight at the pause finished');
      assert.equal(n1()!.hook?.phase, 'Succeeded');
      await wf.skip('30m');
      assert.equal(w.hookRuns.length, 1, 'no hook started while paused');
      assert.equal(sim.lastStatus()!.phase, 'Paused');
      const resumedAt = await wf.env.currentTimeMs();
      await h.signal(resumeSignal);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(final.reason, 'AllNodesHandedBack');
      assert.equal(w.hookRuns.length, 2);
      assert.ok(w.hookRuns[1]!.atMs >= resumedAt, 'the afterDrain hook started after the resume');
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    } finally {
      await w.stop();
    }
  });

  it('a hook due outside the maintenance windows waits for the next window', async () => {
    const sim = emptyNode();
    const w = await workers(sim, { holdSeconds: 20 * 60 });
    try {
      const MIN = 60_000;
      const now = Math.floor((await wf.env.currentTimeMs()) / MIN) * MIN;
      const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
      const daily = (startMs: number, minutes: number) => ({
        days: [...WEEKDAYS],
        start: hhmm(startMs),
        end: hhmm(startMs + minutes * MIN),
        timeZone: 'UTC',
      });
      // The first window closes 10 min in, while the 20-min beforeDrain hook runs; the next opens 3 h in.
      const secondStart = now - MIN + 180 * MIN;
      const inp = input(
        'rolling-window',
        bothHooks(w.hookTq, {
          windows: [daily(now - MIN, 11), daily(secondStart, 60)],
          drainTimeoutSeconds: 86400,
        }),
      );
      const h = await startPlan(w.tq, inp);
      await waitUntil(() => w.hookRuns.length === 1, 'the beforeDrain hook started inside the window');
      await waitUntil(
        () => sim.lastStatus()?.nodes?.[0]?.phase === 'Paused',
        'n1 paused before its afterDrain hook',
        60_000,
        '1m',
      );
      const n1 = sim.lastStatus()!.nodes![0]!;
      assert.equal(n1.reason, 'OutsideMaintenanceWindow');
      assert.equal(n1.hook?.name, 'beforeDrain', 'the hook in flight when the window closed finished');
      assert.equal(n1.hook?.phase, 'Succeeded');
      assert.equal(w.hookRuns.length, 1);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(w.hookRuns.length, 2);
      assert.ok(
        w.hookRuns[1]!.atMs >= secondStart,
        `the afterDrain hook started in the next window (${new Date(w.hookRuns[1]!.atMs).toISOString()} >= ${new Date(secondStart).toISOString()})`,
      );
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    } finally {
      await w.stop();
    }
  });

  it('a workflow hook nobody serves fails saying no worker took it', async () => {
    const sim = emptyNode();
    const w = await workers(sim, { holdSeconds: 0 });
    try {
      const inp = input(
        'rolling-noworker',
        rollingSpec(w.hookTq, {
          nodeNames: ['n1'],
          hooks: {
            beforeDrain: { workflow: { type: 'patchNode', taskQueue: 'nobody-polls', timeoutSeconds: 5 } },
          },
        }),
      );
      await startPlan(w.tq, inp);
      const n1 = () => sim.lastStatus()?.nodes?.[0];
      await waitUntil(() => n1()?.reason === 'HookFailed', 'n1 blocked by its hook', 90_000, '20s');
      const want =
        'beforeDrain hook failed: no worker took the hook workflow patchNode on task queue nobody-polls within 5 s';
      assert.ok(n1()!.message?.startsWith(want), n1()!.message);
      assert.ok(
        sim.events.some((e) => e.reason === 'HookFailed' && e.message.startsWith(`node n1: ${want}`)),
        JSON.stringify(sim.events),
      );
    } finally {
      await w.stop();
    }
  });

  it('a node deleted while it awaits its per-node release ends Deleted and frees its slot', async () => {
    const sim = threeNodes();
    const w = await workers(sim, { holdSeconds: 0 });
    try {
      const { inp, h, node } = await startUntilN1AwaitsRelease(w.tq, sim, 'rolling-deleted');
      sim.deleteNode('n1');
      await waitUntil(() => node('n1')?.phase === 'Deleted', 'n1 noticed deleted', 60_000, '30s');
      assert.equal(node('n1')!.reason, 'NodeDeleted');
      assert.match(node('n1')!.message ?? '', /deleted while it waited for its per-node release/);
      await waitUntil(
        () => node('n2')?.reason === 'AwaitingRelease',
        'n2 took the freed slot',
        60_000,
        '10s',
      );
      await h.executeUpdate(releaseNodeUpdate, { args: [{ node: 'n2' }] });
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(node('n2')!.phase, 'Released');
      assert.equal(
        sim.calls.filter((c) => c.name === 'releaseNode' && (c.arg as { node: string }).node === 'n1').length,
        0,
        'nothing to hand back for the deleted node',
      );
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1', 'n2']));
    } finally {
      await w.stop();
    }
  });

  it('a node uncordoned while it awaits its per-node release is Blocked/NodeUncordonedExternally (Warning) until cordoned again; its hand-back says so', async () => {
    const sim = new SimCluster().addNode('n1');
    const w = await workers(sim, { holdSeconds: 0 });
    try {
      const inp = input('release-uncordoned-v1', {
        nodeNames: ['n1'],
        uncordon: 'AfterEachNode',
        drainTimeoutSeconds: 7200,
      });
      const h = await startPlan(w.tq, inp);
      const n1 = () => sim.lastStatus()?.nodes?.[0];
      await waitUntil(() => n1()?.reason === 'AwaitingRelease', 'n1 drained, awaiting release');
      sim.uncordonExternally('n1');
      await waitUntil(
        () => n1()?.reason === 'NodeUncordonedExternally',
        'n1 uncordon noticed',
        60_000,
        '10s',
      );
      assert.equal(n1()!.phase, 'Blocked');
      assert.ok(
        sim.events.some((e) => e.type === 'Warning' && e.reason === 'NodeUncordonedExternally'),
        'a Warning Event NodeUncordonedExternally',
      );
      sim.cordonExternally('n1');
      await waitUntil(() => n1()?.reason === 'AwaitingRelease', 'n1 cordoned again', 60_000, '10s');
      sim.uncordonExternally('n1');
      await waitUntil(
        () => n1()?.reason === 'NodeUncordonedExternally',
        'n1 uncordoned again',
        60_000,
        '10s',
      );
      await h.executeUpdate(releaseNodeUpdate, { args: [{ node: 'n1' }] });
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(n1()!.phase, 'Released');
      assert.match(n1()!.message ?? '', /already schedulable: uncordoned by someone else/);
      assert.doesNotMatch(n1()!.message ?? '', /before the plan/);
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    } finally {
      await w.stop();
    }
  });

  it('a hook does not start on a node uncordoned by someone else: Blocked/NodeUncordonedExternally until it is cordoned again, then the hook and the drain', async () => {
    const sim = new SimCluster().addNode('n1');
    sim.addPod({ namespace: 'app', name: 'n1-a', node: 'n1', terminationGracePeriodSeconds: 30 });
    const simActs = sim.activities();
    // An admin uncordons n1 right after the plan cordoned it, before its beforeDrain hook starts.
    let uncordoned = false;
    const cordonNode: typeof simActs.cordonNode = async (args) => {
      const res = await simActs.cordonNode(args);
      if (!uncordoned && res.outcome === 'Cordoned') {
        uncordoned = true;
        sim.uncordonExternally(args.node);
      }
      return res;
    };
    const w = await workers(sim, { holdSeconds: 60 }, false, { cordonNode });
    try {
      const inp = input('hookgate-before', bothHooks(w.hookTq));
      const h = await startPlan(w.tq, inp);
      const n1 = () => sim.lastStatus()?.nodes?.[0];
      await waitUntil(
        () => n1()?.reason === 'NodeUncordonedExternally',
        'n1 blocked: uncordoned before its beforeDrain hook',
        60_000,
        '10s',
      );
      assert.equal(n1()!.hook, undefined, 'no hook started');
      assert.equal(w.hookRuns.length, 0, 'no hook started');
      assert.equal(n1()!.phase, 'Blocked');
      assert.match(
        n1()!.message ?? '',
        /^node n1 was uncordoned by someone else before its beforeDrain hook started: the hook waits until the node is cordoned again \(kubectl cordon n1\)/,
      );
      assert.ok(
        sim.events.some((e) => e.type === 'Warning' && e.reason === 'NodeUncordonedExternally'),
        'a Warning Event NodeUncordonedExternally',
      );
      const looksBefore = sim.calls.filter((c) => c.name === 'observeNode').length;
      await wf.skip('30m');
      assert.equal(w.hookRuns.length, 0, 'no hook started while the node is uncordoned');
      assert.equal(sim.evictions().length, 0, 'nothing evicted');
      // The sim answers a long poll unchanged after 200 ms of real time; the node looks again only
      // after the bound it asked for (300 s): about 6 looks in 30 min, no tight loop.
      const looks = sim.calls.filter((c) => c.name === 'observeNode').length - looksBefore;
      assert.ok(looks >= 1 && looks <= 8, `${looks} observations in 30 min`);
      assert.equal(n1()!.reason, 'NodeUncordonedExternally');
      const cordonedAt = await wf.env.currentTimeMs();
      sim.cordonExternally('n1');
      await waitUntil(() => w.hookRuns.length === 1, 'the beforeDrain hook started', 60_000, '30s');
      assert.ok(w.hookRuns[0]!.atMs >= cordonedAt, 'the hook started once the node was cordoned again');
      assert.deepEqual(w.hookRuns[0]!.cordoned, ['n1'], 'the hook runs on the cordoned node');
      const final = await resultOf(h);
      assert.equal(final.phase, 'Completed', final.message);
      assert.equal(w.hookRuns.length, 2, 'both hooks ran once');
      assert.equal(sim.evictions().length, 1, 'n1 drained');
      assert.equal(n1()!.phase, 'Released', n1()!.message);
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    } finally {
      await w.stop();
    }
  });

  it('a Job hook due at the resume of a node uncordoned while paused is not created; an abort ends the node before it', async () => {
    const sim = emptyNode();
    const jobs = neverEndingJobs(sim);
    const w = await workers(sim, { holdSeconds: 60 }, false, jobs.activities);
    try {
      const inp = input(
        'hookgate-after-job',
        bothHooks(w.hookTq, {
          hooks: {
            beforeDrain: { workflow: { type: 'testHook', taskQueue: w.hookTq, timeoutSeconds: 3600 } },
            afterDrain: {
              job: {
                namespace: 'hooks',
                timeoutSeconds: 3600,
                template: {
                  spec: { template: { spec: { containers: [{ name: 'check', image: 'busybox' }] } } },
                },
              },
            },
          },
        }),
      );
      const h = await startPlan(w.tq, inp);
      await waitUntil(() => w.hookRuns.length === 1, 'the beforeDrain hook started');
      await h.signal(pauseSignal);
      const n1 = () => sim.lastStatus()?.nodes?.[0];
      await waitUntil(
        () => n1()?.reason === 'PausedByUser',
        'n1 paused before its afterDrain hook',
        30_000,
        '10s',
      );
      // An admin uncordons the node while the plan is paused, then the plan is resumed.
      sim.uncordonExternally('n1');
      await h.signal(resumeSignal);
      await waitUntil(
        () => n1()?.reason === 'NodeUncordonedExternally',
        'n1 blocked: uncordoned before its afterDrain hook',
        60_000,
        '10s',
      );
      assert.equal(n1()!.phase, 'Blocked');
      assert.match(n1()!.message ?? '', /before its afterDrain hook started: the hook waits/);
      await wf.skip('30m');
      assert.equal(jobs.jobs.size, 0, 'no Job created while the node is uncordoned');
      assert.equal(n1()!.hook?.name, 'beforeDrain', 'the afterDrain hook never started');
      await h.signal(abortSignal);
      const final = await resultOf(h);
      assert.equal(final.phase, 'Aborted', final.message);
      assert.equal(n1()!.phase, 'Aborted');
      assert.equal(n1()!.message, 'aborted before the afterDrain hook');
      assert.equal(sim.calls.filter((c) => c.name === 'createJob').length, 0, 'no Job was ever created');
      await assertNoWorkflowTaskFailed(wf, workflowIds(inp, ['n1']));
    } finally {
      await w.stop();
    }
  });
});
