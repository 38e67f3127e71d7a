// test-lane: parallel
/**
 * Rolling maintenance on the real stack (kube-apiserver, kube-controller-manager with its Job
 * controller, kwok completing Job pods — scripts/stack/kwok-stages.yaml `drainflow-pod-complete` —,
 * the Temporal dev server, a `drainflow run --worker` process; the plan workflows started directly):
 *
 * - the CRD refuses a hook with both or neither of job and workflow, and uncordon AfterEachNode
 *   with cordon AllAtStart or with onDeadline DeletePods but no nodeDrainTimeoutSeconds;
 * - a Job afterDrain hook per node (two nodes, maxUnavailableNodes 1, uncordon AfterEachNode):
 *   each node's Job runs on that node (pod spec.nodeName), after its drain and before its uncordon,
 *   and at no moment are both nodes cordoned;
 * - a failing Job hook (kwok fails its pod, stage `drainflow-pod-fail`): the node is blocked with
 *   the pod's termination message, a Warning Event HookFailed goes out, and after a per-node
 *   release the plan ends Completed/HandedBackWithHookFailures;
 * - an abort while a Job hook runs (kwok keeps the pod running, annotation drainflow.dev/test-hold):
 *   the Job is deleted with foreground propagation and gone before the node is handed back;
 * - a per-node release through the CLI (`drainflow release P --node N`) and through the node
 *   annotation drainflow.dev/release=true (removed again by the hand-back).
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, type V1Job } from '@kubernetes/client-node';
import { HOOK_LABELS } from '../../src/activities/jobs.js';
import {
  NODE_RELEASE_ANNOTATION,
  type MaintenancePlanSpecInput,
  type MaintenancePlanStatus,
} from '../../src/api/plan.js';
import { abortSignal, releaseNodeUpdate } from '../../src/contract/plan-messages.js';
import { planFinished, refusedPlanStatus, readPlanStatus, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { MERGE_PATCH, directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';
import { runCommand } from './cli-fixtures.js';

describe('rolling maintenance on the real stack', () => {
  const h = directHarness('rolling-e2e', 'rolling-run');
  let c: Clients;
  let batch: BatchV1Api;
  let ns = '';
  const nodes: string[] = [];
  const workflows: string[] = [];
  const plans: string[] = [];

  before(async () => {
    await h.connect();
    c = h.c;
    batch = c.kc.makeApiClient(BatchV1Api);
    const worker = startWorkerProcess(h.opts.taskQueue, drainflowEnv()).then((p) => (h.worker = p));
    const fixture = (async () => {
      ns = await createNamespace(c, 'rolling');
      for (let i = 0; i < 2; i++) nodes.push(await createNode(c, `rolling-node-${i}`));
    })();
    const results = await Promise.allSettled([worker, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    for (const id of workflows) {
      const handle = h.client.workflow.getHandle(id);
      await handle.signal(abortSignal).catch(() => undefined);
      const giveUp = new Promise((resolve) => setTimeout(resolve, 20_000).unref());
      await Promise.race([handle.result().catch(() => undefined), giveUp]);
    }
    await h.stop();
    if (c) {
      for (const p of plans) await h.deletePlanObject(p).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
    }
  });

  /** One Deployment pod on each node (nodeSelector hostname), Ready. */
  async function workload(app: string): Promise<void> {
    for (const [i, node] of nodes.entries())
      await c.apps.createNamespacedDeployment({
        namespace: ns,
        body: makeDeployment(ns, `${app}-${i}`, 1, { hostname: node }),
      });
    for (let i = 0; i < nodes.length; i++) await waitPodsReady(c, ns, { app: `${app}-${i}` }, 1);
  }

  /** Creates the plan and starts its workflow. */
  async function startPlan(prefix: string, spec: MaintenancePlanSpecInput): Promise<string> {
    const name = uniqueName(prefix);
    const { workflowId } = await h.startDirectPlan(name, spec);
    plans.push(name);
    workflows.push(workflowId);
    return name;
  }

  const finished = (name: string, timeoutMs = 90_000): Promise<MaintenancePlanStatus> =>
    planFinished(c, name, { timeoutMs, active: ['Pending', 'Running', 'Paused'] });

  const invalid: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      'a hook with both job and workflow',
      {
        hooks: {
          afterDrain: {
            job: {
              namespace: 'x',
              template: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } } },
            },
            workflow: { type: 'patch', taskQueue: 'ops' },
          },
        },
      },
      /spec\.hooks\.afterDrain: .*exactly one of job and workflow must be set/,
    ],
    [
      'a hook with neither',
      { hooks: { beforeDrain: {} } },
      /spec\.hooks\.beforeDrain: .*exactly one of job and workflow must be set/,
    ],
    [
      'uncordon AfterEachNode with cordon AllAtStart',
      { uncordon: 'AfterEachNode', cordon: 'AllAtStart' },
      /spec\.cordon: .*must not be AllAtStart with uncordon AfterEachNode/,
    ],
    [
      'uncordon AfterEachNode with onDeadline DeletePods and no per-node deadline',
      { uncordon: 'AfterEachNode', onDeadline: 'DeletePods' },
      /spec\.onDeadline: .*DeletePods with uncordon AfterEachNode needs nodeDrainTimeoutSeconds/,
    ],
  ];
  for (const [name, fields, message] of invalid)
    it(`the API server refuses a plan with ${name}, readably`, async () => {
      const bad = uniqueName('rolling-bad');
      const status = await refusedPlanStatus(c, bad, { nodeNames: ['a'], ...fields });
      assert.equal(status.code, 422);
      assert.match(status.message ?? '', message);
    });

  it('a Job afterDrain hook per node runs on that node after its drain and before its uncordon, one node at a time', async () => {
    await workload('hooked');
    const name = await startPlan('rolling-jobs', {
      nodeNames: nodes,
      maxUnavailableNodes: 1,
      uncordon: 'AfterEachNode',
      drainTimeoutSeconds: 300,
      hooks: {
        afterDrain: {
          job: {
            namespace: ns,
            timeoutSeconds: 60,
            template: {
              spec: { template: { spec: { containers: [{ name: 'reboot', image: 'busybox' }] } } },
            },
          },
        },
      },
    });
    // Sample the cluster while the plan runs: cordons, the workload's pods, the hook Jobs.
    type Sample = { atMs: number; cordoned: string[]; workload: string[]; jobs: V1Job[] };
    const samples: Sample[] = [];
    let done = false;
    const sampling = (async () => {
      while (!done) {
        const [nodeList, pods, jobs] = await Promise.all([
          c.core.listNode(),
          c.core.listNamespacedPod({ namespace: ns }),
          batch.listNamespacedJob({ namespace: ns, labelSelector: `${HOOK_LABELS.plan}=${name}` }),
        ]);
        samples.push({
          atMs: Date.now(),
          cordoned: nodeList.items
            .filter((n) => nodes.includes(n.metadata!.name!) && n.spec?.unschedulable)
            .map((n) => n.metadata!.name!),
          workload: pods.items
            .filter(
              (p) =>
                !p.metadata?.labels?.[HOOK_LABELS.node] && !p.metadata?.deletionTimestamp && p.spec?.nodeName,
            )
            .map((p) => p.spec!.nodeName!),
          jobs: jobs.items,
        });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    let final: MaintenancePlanStatus;
    try {
      final = await finished(name);
    } finally {
      done = true;
      await sampling;
    }
    assert.equal(final.phase, 'Completed', showStatus(final));
    assert.equal(final.reason, 'AllNodesHandedBack', showStatus(final));
    assert.ok(
      samples.every((s) => s.cordoned.length <= 1),
      `at most one node cordoned at a time: ${JSON.stringify(samples.filter((s) => s.cordoned.length > 1).slice(0, 3))}`,
    );
    const jobs = (
      await batch.listNamespacedJob({ namespace: ns, labelSelector: `${HOOK_LABELS.plan}=${name}` })
    ).items;
    assert.equal(jobs.length, nodes.length, 'one Job per node');
    for (const node of nodes) {
      const job = jobs.find((j) => j.metadata?.labels?.[HOOK_LABELS.node] === node);
      assert.ok(job, `a Job for ${node}`);
      assert.equal(job.metadata?.labels?.[HOOK_LABELS.hook], 'afterDrain');
      assert.equal(job.metadata?.ownerReferences?.[0]?.name, name, 'owned by the plan');
      assert.ok((job.status?.succeeded ?? 0) >= 1, `the Job of ${node} completed`);
      const pods = (
        await c.core.listNamespacedPod({
          namespace: ns,
          labelSelector: `batch.kubernetes.io/job-name=${job.metadata!.name}`,
        })
      ).items;
      assert.ok(
        pods.length >= 1 && pods.every((p) => p.spec?.nodeName === node),
        `the Job's pod ran on ${node}`,
      );
      assert.ok(
        pods[0]!.spec?.tolerations?.some((t) => t.key === 'node.kubernetes.io/unschedulable'),
        'tolerates the cordon taint',
      );
      // In the samples: the Job appears only once the node is cordoned and its workload pod gone,
      // and the node is uncordoned only once the Job completed.
      const first = samples.findIndex((s) =>
        s.jobs.some((j) => j.metadata?.labels?.[HOOK_LABELS.node] === node),
      );
      assert.ok(first >= 0, `the Job of ${node} was seen while the plan ran`);
      assert.ok(samples[first]!.cordoned.includes(node), `${node} cordoned when its Job appeared`);
      assert.ok(!samples[first]!.workload.includes(node), `${node} drained when its Job appeared`);
      const uncordoned = samples.findIndex((s, i) => i > first && !s.cordoned.includes(node));
      assert.ok(uncordoned > first, `${node} uncordoned after its Job appeared`);
      const jobThen = samples[uncordoned]!.jobs.find((j) => j.metadata?.labels?.[HOOK_LABELS.node] === node);
      assert.ok(
        (jobThen?.status?.succeeded ?? 0) >= 1,
        `the Job of ${node} had completed when ${node} was uncordoned`,
      );
      const st = final.nodes!.find((n) => n.name === node)!;
      assert.equal(st.phase, 'Released');
      assert.equal(st.hook?.phase, 'Succeeded');
      assert.equal(st.hook?.ref, `${ns}/${job.metadata!.name}`);
    }
    for (const node of nodes)
      assert.notEqual((await c.core.readNode({ name: node })).spec?.unschedulable, true);
  });

  it("a failing Job hook blocks its node with the pod's failure message and sends a Warning Event", async () => {
    // kwok fails the hook's pod (scripts/stack/kwok-stages.yaml `drainflow-pod-fail`): exit code 1
    // with the annotation's text as the container's termination message.
    const failure = 'kernel-patch: package linux-5.15 not found';
    const name = await startPlan('rolling-jobfail', {
      nodeNames: [nodes[0]!],
      uncordon: 'AfterEachNode',
      drainTimeoutSeconds: 300,
      hooks: {
        afterDrain: {
          job: {
            namespace: ns,
            timeoutSeconds: 60,
            template: {
              spec: {
                template: {
                  metadata: { annotations: { 'drainflow.dev/test-fail-message': failure } },
                  spec: { containers: [{ name: 'patch', image: 'busybox' }] },
                },
              },
            },
          },
        },
      },
    });
    const node = await waitFor(
      async () => {
        const n = (await readPlanStatus(c, name))?.nodes?.[0];
        return n?.reason === 'HookFailed' ? n : undefined;
      },
      90_000,
      { what: `plan ${name}: node blocked by its hook`, intervalMs: 250 },
    );
    assert.equal(node.phase, 'Blocked');
    assert.match(
      node.message ?? '',
      new RegExp(`afterDrain hook failed: pod .* container patch: ${failure} \\(exit code 1\\)`),
    );
    assert.equal(node.hook?.phase, 'Failed');
    const plan = await c.custom.getClusterCustomObject({
      group: 'maintenance.drainflow.dev',
      version: 'v1alpha1',
      plural: 'maintenanceplans',
      name,
    });
    const uid = (plan as { metadata: { uid: string } }).metadata.uid;
    const events = await waitFor(
      async () => {
        const l = (await h.planEvents(name, uid)).filter((e) => e.reason === 'HookFailed');
        return l.length > 0 ? l : undefined;
      },
      30_000,
      { what: 'the HookFailed Event', intervalMs: 250 },
    );
    assert.equal(events[0]!.type, 'Warning');
    assert.match(
      events[0]!.message ?? '',
      new RegExp(`^node ${nodes[0]}: afterDrain hook failed: .*${failure}`),
    );
    assert.equal((await c.core.readNode({ name: nodes[0]! })).spec?.unschedulable, true, 'still cordoned');
    // A per-node release hands it back; the plan completes, saying a hook failed.
    await h.client.workflow
      .getHandle(workflows.at(-1)!)
      .executeUpdate(releaseNodeUpdate, { args: [{ node: nodes[0]! }] });
    const final = await finished(name);
    assert.equal(final.phase, 'Completed', showStatus(final));
    assert.equal(final.reason, 'HandedBackWithHookFailures', showStatus(final));
    assert.match(final.message ?? '', new RegExp(`handed back by hand after a failed hook: ${nodes[0]}`));
    assert.notEqual((await c.core.readNode({ name: nodes[0]! })).spec?.unschedulable, true, 'uncordoned');
  });

  it('an abort while a Job hook runs deletes the Job (foreground: its pod first) before the node is handed back', async () => {
    // kwok runs the hook's pod until it is deleted (scripts/stack/kwok-stages.yaml: a Job pod
    // annotated drainflow.dev/test-hold never completes).
    const node = nodes[1]!;
    const name = await startPlan('rolling-jobabort', {
      nodeNames: [node],
      uncordon: 'AfterEachNode',
      drainTimeoutSeconds: 600,
      hooks: {
        afterDrain: {
          job: {
            namespace: ns,
            timeoutSeconds: 600,
            template: {
              spec: {
                template: {
                  metadata: { annotations: { 'drainflow.dev/test-hold': 'true' } },
                  spec: { containers: [{ name: 'patch', image: 'busybox' }] },
                },
              },
            },
          },
        },
      },
    });
    const status = await waitFor(
      async () => {
        const n = (await readPlanStatus(c, name))?.nodes?.[0];
        return n?.hook?.phase === 'Running' && n.hook.ref ? n : undefined;
      },
      90_000,
      { what: `plan ${name}: the afterDrain hook runs`, intervalMs: 250 },
    );
    const jobName = status.hook!.ref!.split('/')[1]!;
    const podsOfJob = async () =>
      (
        await c.core.listNamespacedPod({
          namespace: ns,
          labelSelector: `batch.kubernetes.io/job-name=${jobName}`,
        })
      ).items;
    await waitFor(async () => (await podsOfJob()).some((p) => p.status?.phase === 'Running'), 60_000, {
      what: `the pod of Job ${jobName} running on ${node}`,
      intervalMs: 250,
    });
    const readJob = () =>
      batch.readNamespacedJob({ namespace: ns, name: jobName }).then(
        (j) => j,
        () => undefined,
      );
    assert.ok(await readJob(), 'the Job runs');
    const abortedAt = Date.now();
    await h.client.workflow.getHandle(workflows.at(-1)!).signal(abortSignal);
    // Sample until the node is handed back: the Job must be gone by then.
    const samples: { job: boolean; uncordoned: boolean }[] = [];
    await waitFor(
      async () => {
        const [job, n] = await Promise.all([readJob(), c.core.readNode({ name: node })]);
        samples.push({ job: job !== undefined, uncordoned: n.spec?.unschedulable !== true });
        return samples.at(-1)!.uncordoned;
      },
      120_000,
      { what: `${node} handed back`, intervalMs: 100 },
    );
    const handedBackAfterMs = Date.now() - abortedAt;
    assert.ok(
      samples.every((x) => !(x.uncordoned && x.job)),
      'no sample saw the node uncordoned while the Job existed',
    );
    assert.ok(
      samples.some((x) => !x.uncordoned),
      'the node was still cordoned right after the abort',
    );
    assert.equal(await readJob(), undefined, 'the Job is gone');
    assert.deepEqual(await podsOfJob(), [], "the Job's pod is gone");
    const final = await finished(name);
    assert.equal(final.phase, 'Aborted', showStatus(final));
    const n = final.nodes![0]!;
    assert.equal(n.phase, 'Aborted', showStatus(final));
    assert.match(
      n.message ?? '',
      new RegExp(`aborted during the afterDrain hook; its Job ${ns}/${jobName} was deleted`),
    );
    assert.equal(n.hook?.phase, 'Stopped');
    console.log(
      `[e2e] abort during a Job hook: node handed back ${handedBackAfterMs} ms after the abort, Job gone first`,
    );
  });

  it('a per-node release through the CLI and through the node annotation', async () => {
    await workload('released');
    const name = await startPlan('rolling-release', {
      nodeNames: nodes,
      maxUnavailableNodes: 1,
      uncordon: 'AfterEachNode',
      drainTimeoutSeconds: 300,
    });
    const node = async (n: string) => (await readPlanStatus(c, name))?.nodes?.find((x) => x.name === n);
    await waitFor(async () => (await node(nodes[0]!))?.reason === 'AwaitingRelease', 60_000, {
      what: `${nodes[0]} awaiting release`,
      intervalMs: 250,
    });
    assert.equal((await node(nodes[1]!))?.phase, 'Pending', 'the second node waits for the first');
    assert.equal((await c.core.readNode({ name: nodes[0]! })).spec?.unschedulable, true);

    const cli = await runCommand(['release', name, '--node', nodes[0]!]);
    assert.equal(cli.code, 0, cli.err);
    assert.match(cli.out, new RegExp(`release: node ${nodes[0]} of plan ${name} accepted`));
    await waitFor(async () => (await node(nodes[0]!))?.phase === 'Released', 30_000, {
      what: `${nodes[0]} released`,
      intervalMs: 250,
    });
    assert.notEqual((await c.core.readNode({ name: nodes[0]! })).spec?.unschedulable, true);
    const refused = await runCommand(['release', name, '--node', 'not-in-the-plan']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.err, /node "not-in-the-plan" is not a node of plan/);

    await waitFor(async () => (await node(nodes[1]!))?.reason === 'AwaitingRelease', 60_000, {
      what: `${nodes[1]} awaiting release`,
      intervalMs: 250,
    });
    await c.core.patchNode(
      { name: nodes[1]!, body: { metadata: { annotations: { [NODE_RELEASE_ANNOTATION]: 'true' } } } },
      MERGE_PATCH,
    );
    const final = await finished(name, 60_000);
    assert.equal(final.phase, 'Completed', showStatus(final));
    assert.deepEqual(
      final.nodes?.map((n) => n.phase),
      ['Released', 'Released'],
    );
    const n2 = await c.core.readNode({ name: nodes[1]! });
    assert.notEqual(n2.spec?.unschedulable, true);
    assert.equal(n2.metadata?.annotations?.[NODE_RELEASE_ANNOTATION], undefined, 'the annotation is used up');
  });
});
