// test-lane: parallel
/**
 * "No hook start on a node an admin uncordoned" on the real stack (kube-apiserver,
 * kube-controller-manager with its Job controller, kwok completing Job pods —
 * scripts/stack/kwok-stages.yaml `drainflow-pod-complete` —, the Temporal dev server, a `drainflow
 * run --worker` process; the plan workflow started directly, no operator):
 *
 * A plan with a beforeDrain Job hook is paused after its node is cordoned and before the hook
 * starts; an admin uncordons the node while it is paused; the plan is resumed. No hook Job is
 * created while the node is uncordoned, the node reads Blocked/NodeUncordonedExternally saying the
 * hook waits, and a Warning Event says so; once the admin cordons it again the Job is created, runs,
 * and the node is drained.
 *
 * The pause must land between the cordon and the hook's start, which are one step of the node's
 * workflow: a ValidatingWebhookConfiguration whose endpoint does not answer (failurePolicy Fail)
 * makes the API server answer the cordon's patch of this test's node with 500, so the cordon is
 * retried (a retryable activity) until the test has paused the plan and removed the webhook.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdmissionregistrationV1Api, BatchV1Api, type V1Job } from '@kubernetes/client-node';
import { HOOK_LABELS } from '../../src/activities/jobs.js';
import type { MaintenancePlanStatus } from '../../src/api/plan.js';
import { nodeWorkflowId } from '../../src/contract/names.js';
import { nodeControlSignal } from '../../src/contract/node-messages.js';
import { abortSignal, pauseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import { planFinished, readPlanStatus, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  errorCode,
  makeDeployment,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { MERGE_PATCH, directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';

/** The label that selects this file's node for the failing webhook. */
const GATE_LABEL = 'drainflow.dev/e2e-hook-gate';

describe('a hook never starts on a node an admin uncordoned (real stack)', () => {
  const h = directHarness('hook-gate-e2e', 'hook-gate-run');
  let c: Clients;
  let batch: BatchV1Api;
  let admission: AdmissionregistrationV1Api;
  let ns = '';
  let node = '';
  const webhook = uniqueName('hook-gate-slow-cordon');
  const workflows: string[] = [];

  before(async () => {
    await h.connect();
    c = h.c;
    batch = c.kc.makeApiClient(BatchV1Api);
    admission = c.kc.makeApiClient(AdmissionregistrationV1Api);
    const worker = startWorkerProcess(h.opts.taskQueue, drainflowEnv()).then((p) => (h.worker = p));
    const fixture = (async () => {
      ns = await createNamespace(c, 'hook-gate');
      node = await createNode(c, 'hook-gate-node', { labels: { [GATE_LABEL]: webhook } });
    })();
    const results = await Promise.allSettled([worker, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    if (admission)
      await admission.deleteValidatingWebhookConfiguration({ name: webhook }).catch(() => undefined);
    for (const id of workflows) {
      const handle = h.client.workflow.getHandle(id);
      await handle.signal(abortSignal).catch(() => undefined);
      const giveUp = new Promise((resolve) => setTimeout(resolve, 20_000).unref());
      await Promise.race([handle.result().catch(() => undefined), giveUp]);
    }
    await h.stop();
    if (c) {
      for (const name of h.allPlans) await h.deletePlanObject(name).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      if (node) await deleteNode(c, node).catch(() => undefined);
    }
  });

  /** The API server answers every patch of this file's node (not its status) with 500 until removed. */
  async function failNodePatches(): Promise<void> {
    await admission.createValidatingWebhookConfiguration({
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: webhook, labels: { 'drainflow.dev/test': 'true' } },
        webhooks: [
          {
            name: 'unreachable.hook-gate.drainflow.dev',
            rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['nodes'] }],
            // Nothing listens on port 1: the call fails at once, and failurePolicy Fail makes it a 500.
            clientConfig: { url: 'https://127.0.0.1:1/validate' },
            objectSelector: { matchLabels: { [GATE_LABEL]: webhook } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 2,
            failurePolicy: 'Fail',
          },
        ],
      },
    });
    // In force once a dry-run patch of the node is refused (the API server loads it within a moment).
    await waitFor(
      async () => {
        try {
          await c.core.patchNode(
            { name: node, body: { metadata: { labels: { 'drainflow.dev/probe': 'x' } } }, dryRun: 'All' },
            MERGE_PATCH,
          );
          return false;
        } catch (err) {
          return errorCode(err) === 500;
        }
      },
      30_000,
      { what: `the webhook ${webhook} refusing patches of ${node}`, intervalMs: 200 },
    );
  }

  const setUnschedulable = (unschedulable: boolean) =>
    c.core.patchNode({ name: node, body: { spec: { unschedulable } } }, MERGE_PATCH);

  const hookJobs = async (plan: string): Promise<V1Job[]> =>
    (await batch.listNamespacedJob({ namespace: ns, labelSelector: `${HOOK_LABELS.plan}=${plan}` })).items;

  const nodeStatus = (
    plan: string,
    want: (n: NonNullable<MaintenancePlanStatus['nodes']>[number]) => boolean,
    what: string,
    timeoutMs = 90_000,
  ) =>
    waitFor(
      async () => {
        const n = (await readPlanStatus(c, plan))?.nodes?.[0];
        return n && want(n) ? n : undefined;
      },
      timeoutMs,
      { what: `plan ${plan}: ${what}`, intervalMs: 250 },
    );

  it('paused between the cordon and its beforeDrain Job hook, uncordoned, resumed: no Job until cordoned again, then the hook and the drain', async () => {
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'gated', 1, { hostname: node }),
    });
    await waitPodsReady(c, ns, { app: 'gated' }, 1);
    await failNodePatches();

    const name = uniqueName('hook-gate');
    const { workflowId, uid } = await h.startDirectPlan(name, {
      nodeNames: [node],
      drainTimeoutSeconds: 600,
      eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 5 } },
      hooks: {
        beforeDrain: {
          job: {
            namespace: ns,
            timeoutSeconds: 60,
            template: {
              spec: { template: { spec: { containers: [{ name: 'precheck', image: 'busybox' }] } } },
            },
          },
        },
      },
    });
    workflows.push(workflowId);
    const plan = h.client.workflow.getHandle(workflowId);
    const nodeWf = h.client.workflow.getHandle(nodeWorkflowId(workflowId, node));
    // The cordon is refused (500) and retried: pause the plan now, and wait until the node's
    // workflow has the pause, before the cordon can go through.
    await waitFor(
      async () => {
        const d = await nodeWf.describe().catch(() => undefined);
        const cordon = d?.raw.pendingActivities?.find((a) => a.activityType?.name === 'cordonNode');
        return (cordon?.attempt ?? 0) >= 2;
      },
      60_000,
      { what: `the cordon of ${node} refused and retried`, intervalMs: 250 },
    );
    await plan.signal(pauseSignal);
    await waitFor(
      async () => {
        const history = await nodeWf.fetchHistory();
        return history.events?.some(
          (e) => e.workflowExecutionSignaledEventAttributes?.signalName === nodeControlSignal.name,
        );
      },
      30_000,
      { what: `the node workflow of ${node} got the pause`, intervalMs: 250 },
    );
    await admission.deleteValidatingWebhookConfiguration({ name: webhook });
    const paused = await nodeStatus(
      name,
      (n) =>
        n.reason === 'PausedByUser' &&
        /beforeDrain hook starts when the plan is resumed/.test(n.message ?? ''),
      'cordoned, paused before its beforeDrain hook',
    );
    assert.equal(paused.phase, 'Paused');
    assert.equal((await c.core.readNode({ name: node })).spec?.unschedulable, true, 'cordoned by the plan');
    assert.deepEqual(await hookJobs(name), [], 'no Job while paused');

    // An admin uncordons the node while the plan is paused; then the plan is resumed.
    await setUnschedulable(false);
    const resumedAt = Date.now();
    await plan.signal(resumeSignal);
    // Sample the hook's Jobs from the resume until the node shows the wait, and 10 s more.
    const jobsSeen = new Set<string>();
    const sample = async () => {
      for (const j of await hookJobs(name)) jobsSeen.add(j.metadata!.name!);
    };
    const blocked = await waitFor(
      async () => {
        await sample();
        const n = (await readPlanStatus(c, name))?.nodes?.[0];
        return n?.reason === 'NodeUncordonedExternally' ? n : undefined;
      },
      60_000,
      { what: `plan ${name}: ${node} blocked, uncordoned before its hook`, intervalMs: 200 },
    );
    const noticedAfterMs = Date.now() - resumedAt;
    const quietUntil = Date.now() + 10_000;
    while (Date.now() < quietUntil) {
      await sample();
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.deepEqual([...jobsSeen], [], 'no hook Job created while the node is uncordoned');
    assert.equal(blocked.phase, 'Blocked');
    assert.match(
      blocked.message ?? '',
      new RegExp(
        `^node ${node} was uncordoned by someone else before its beforeDrain hook started: the hook waits until the node is cordoned again \\(kubectl cordon ${node}\\)`,
      ),
    );
    assert.equal(blocked.hook, undefined, 'no hook started');
    const still = (await readPlanStatus(c, name))!.nodes![0]!;
    assert.equal(still.reason, 'NodeUncordonedExternally', showStatus(await readPlanStatus(c, name)));
    const pods = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=gated' })).items;
    assert.ok(
      pods.length === 1 && !pods[0]!.metadata?.deletionTimestamp,
      `nothing evicted: ${pods.map((p) => p.metadata?.name).join(', ')}`,
    );
    const events = await waitFor(
      async () => {
        const l = (await h.planEvents(name, uid)).filter((e) => e.reason === 'NodeUncordonedExternally');
        return l.length > 0 ? l : undefined;
      },
      30_000,
      { what: 'the NodeUncordonedExternally Event', intervalMs: 250 },
    );
    assert.equal(events[0]!.type, 'Warning');

    // Cordoned again: the hook's Job is created, runs, and the node is drained.
    const cordonedAt = Date.now();
    await setUnschedulable(true);
    const final = await planFinished(c, name, {
      timeoutMs: 120_000,
      active: ['Pending', 'Running', 'Paused'],
    });
    const startedAfterMs = Date.now() - cordonedAt;
    assert.equal(final.phase, 'Drained', showStatus(final));
    const n = final.nodes![0]!;
    assert.equal(n.phase, 'Drained', showStatus(final));
    assert.equal(n.hook?.name, 'beforeDrain');
    assert.equal(n.hook?.phase, 'Succeeded', showStatus(final));
    assert.ok(Date.parse(n.hook!.started!) >= cordonedAt - 1000, 'the hook started after the cordon');
    const jobs = await hookJobs(name);
    assert.equal(jobs.length, 1, 'one Job');
    assert.ok((jobs[0]!.status?.succeeded ?? 0) >= 1, 'the Job completed');
    console.log(
      `[e2e] hook gate: uncordon noticed ${noticedAfterMs} ms after the resume, no Job in the 10 s after; the plan drained ${startedAfterMs} ms after the cordon`,
    );
  });
});
