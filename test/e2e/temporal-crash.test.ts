// test-lane: parallel
/**
 * A crash of the Temporal server mid-drain (issue 31): `kill -9` of the server while a node's pods
 * are being evicted, then the server started again on the same SQLite file and ports. The drain
 * goes on from where the server's state was and ends Drained, every pod evicted, and no pod
 * evicted twice: the worker logs every Eviction API answer (`eviction answered`, with the pod and
 * the outcome), and no pod gets a call after its `Evicted` (2xx) answer (whatever that call's
 * answer: 201 on a terminating pod, 404 on a gone one). No workflow task fails or times out.
 *
 * The Temporal server is the test's own (test/helpers/private-temporal.ts: the stack's pinned
 * binary with the stack's flags, on free ports and a file in a temporary directory), so the shared
 * server is never touched and the file runs in the parallel lane. The worker is a real
 * `drainflow run --worker` process against it; the plan workflow is started directly (no
 * operator). The pods are 6 replicas behind a PodDisruptionBudget allowing 1 disruption, each
 * replacement Ready 2 s after it starts (kwok's ready-delay), so evictions go one at a time over
 * about 15 s; the server is killed as soon as the first pod is evicted, and stays down
 * {@link OUTAGE_MS}.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { EventType } from '../helpers/workflow-harness.js';
import { nodeWorkflowId } from '../../src/contract/names.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { createDirectPlan, deletePlanObject, planFinished, showStatus } from '../helpers/direct-plan.js';
import {
  clients,
  deleteNamespace,
  deleteNode,
  uniqueName,
  waitFor,
  applyCrds,
  type Clients,
} from '../helpers/k8s.js';
import { drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess, type DrainflowProcess } from '../helpers/processes.js';
import { evictedAgain, evictionAnswers, pacedWorkload } from '../helpers/eviction-log.js';
import { startPrivateTemporal, type PrivateTemporal } from '../helpers/private-temporal.js';

const POOL_LABEL = 'drainflow.dev/pool';
const TAINT_KEY = 'drainflow.dev/e2e-temporal-crash';
/** Pods on the drained node. */
const REPLICAS = 6;
/** How long the killed server stays down before it is started again, ms. */
const OUTAGE_MS = 3000;

describe('Temporal server killed mid-drain', () => {
  const pool = uniqueName('tcrash');
  const taskQueue = uniqueName('temporal-crash-e2e');
  const planName = uniqueName('tcrash-plan');
  let c: Clients;
  let ns = '';
  const nodes: string[] = [];
  let temporal: PrivateTemporal | undefined;
  let connection: Connection | undefined;
  let client: Client;
  let worker: DrainflowProcess | undefined;
  let workflowId = '';

  before(async () => {
    c = clients();
    await applyCrds(c);
    const server = startPrivateTemporal().then((t) => (temporal = t));
    const fixture = (async () => {
      const w = await pacedWorkload(c, {
        prefix: 'tcrash',
        pool,
        labelKey: POOL_LABEL,
        taintKey: TAINT_KEY,
        replicas: REPLICAS,
      });
      ns = w.ns;
      nodes.push(...w.nodes);
    })();
    const results = await Promise.allSettled([server, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
    connection = await Connection.connect({ address: temporal!.address });
    client = new Client({ connection, namespace: 'default' });
    worker = await startWorkerProcess(taskQueue, { ...drainflowEnv(), TEMPORAL_ADDRESS: temporal!.address });
  });

  after(async () => {
    if (workflowId && temporal?.pid())
      await client.workflow
        .getHandle(workflowId)
        .signal(abortSignal)
        .catch(() => undefined);
    await worker?.stop('SIGTERM', 10_000).catch(() => undefined);
    if (process.exitCode || process.env.E2E_KEEP_LOGS)
      console.error(`worker log: ${worker?.logFile}\nTemporal log: ${temporal?.logFile}`);
    await connection?.close();
    await temporal?.stop({ keepFiles: Boolean(process.exitCode || process.env.E2E_KEEP_LOGS) });
    if (c) {
      await deletePlanObject(c, planName).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
    }
  });

  it('drains every pod once after kill -9 of the server during the evictions', async () => {
    const [target] = nodes;
    const originals = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items
      .filter((p) => p.spec?.nodeName === target)
      .map((p) => `${ns}/${p.metadata!.name}`)
      .sort();
    assert.equal(originals.length, REPLICAS);
    const plan = await createDirectPlan(c, planName, {
      nodeNames: [target!],
      drainTimeoutSeconds: 300,
      eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 2 } },
    });
    workflowId = plan.workflowId;
    await client.workflow.start('drainPlanWorkflow', { taskQueue, workflowId, args: [plan.input] });

    // The first pod evicted: the others are still to go, one at a time.
    await waitFor(() => evictionAnswers(worker!.logs()).some((a) => a.outcome === 'Evicted'), 60_000, {
      what: 'the first eviction',
      intervalMs: 25,
    });
    await temporal!.kill('SIGKILL');
    const evictedBefore = evictionAnswers(worker!.logs()).filter((a) => a.outcome === 'Evicted').length;
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await temporal!.restart();

    const final = await planFinished(c, planName, { timeoutMs: 90_000 });
    assert.equal(final.phase, 'Drained', showStatus(final));
    assert.equal(final.evictionProgress?.evicted, REPLICAS, showStatus(final));
    const left = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items.filter(
      (p) => p.spec?.nodeName === target && !p.metadata?.deletionTimestamp,
    );
    assert.deepEqual(
      left.map((p) => p.metadata!.name),
      [],
      'no pod left on the drained node',
    );

    // Every original pod evicted, and no eviction call for a pod after its Evicted answer (a 429
    // before it would be a refusal retried, not a second eviction); the calls after the restart
    // included.
    const answers = evictionAnswers(worker!.logs());
    const { again, evicted } = evictedAgain(answers);
    assert.deepEqual(again, [], 'eviction calls for pods already evicted');
    assert.deepEqual(evicted, originals, 'each pod of the node evicted');
    assert.ok(evictedBefore < REPLICAS, `${evictedBefore} evicted before the kill: the kill came mid-drain`);
    console.log(
      `evicted before the kill: ${evictedBefore}; eviction calls: ${answers.length} (${answers
        .map((a) => a.outcome)
        .join(', ')})`,
    );

    // No workflow is stuck: the plan waits for its release (uncordon OnDelete), its node workflow
    // has ended.
    const planDesc = await client.workflow.getHandle(workflowId).describe();
    assert.equal(planDesc.status.name, 'RUNNING');
    // The node's final report reaches the plan (and its status) just before the node workflow
    // closes: wait for the close, bounded.
    const nodeStatus = await waitFor(
      async () => {
        const d = await client.workflow.getHandle(nodeWorkflowId(workflowId, target!)).describe();
        return d.status.name === 'RUNNING' ? undefined : d.status.name;
      },
      30_000,
      { what: 'the node workflow closed', intervalMs: 250 },
    );
    assert.equal(nodeStatus, 'COMPLETED');
    // No workflow task failed or timed out; an activity whose result the kill lost timed out and
    // ran again (reported, not counted: which one depends on where the kill landed).
    const taskFailures: string[] = [];
    const activityTimeouts: string[] = [];
    for (const id of [workflowId, nodeWorkflowId(workflowId, target!)]) {
      const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
      const typeOf = new Map(
        events.map((e) => [Number(e.eventId), e.activityTaskScheduledEventAttributes?.activityType?.name]),
      );
      for (const e of events) {
        const t = EventType[e.eventType ?? 0] ?? '';
        if (/WORKFLOW_TASK_(FAILED|TIMED_OUT)/.test(t)) taskFailures.push(`${id}: ${t}`);
        const timedOut = e.activityTaskTimedOutEventAttributes;
        if (timedOut) activityTimeouts.push(String(typeOf.get(Number(timedOut.scheduledEventId))));
      }
    }
    assert.deepEqual(taskFailures, [], 'no workflow task failed or timed out');
    console.log(
      `activities timed out (their result lost by the kill): ${activityTimeouts.join(', ') || 'none'}`,
    );
  });
});
