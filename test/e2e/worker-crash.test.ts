// test-lane: parallel
/**
 * A crash of the worker does not lose or shorten a cooldown: `kill -9` of the worker process while
 * a pod waits out the backoff after a refused eviction, then a new worker: no eviction of that pod
 * is sent before the `nextActionAt` the status showed, and the plan completes once evictions are
 * allowed again. The refusal is real: a ValidatingAdmissionPolicy on `pods/eviction` (scoped to the
 * test's namespace) denies every eviction with 403 Forbidden, which the drain retries after
 * `retryBackoff` (a PDB allowing nothing makes no call at all: the drain waits for the PDB to
 * change instead, so it has no cooldown to lose).
 * Real stack, real worker processes, the plan workflow started directly (no operator).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { GROUP, PLURAL, VERSION } from '../../src/api/plan.js';
import { nodeWorkflowId } from '../../src/contract/names.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { createDirectPlan, readPlanStatus } from '../helpers/direct-plan.js';
import { requireEnv } from '../helpers/operator-harness.js';
import {
  applyCrds,
  clients,
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
import { startWorkerProcess, type DrainflowProcess } from '../helpers/processes.js';
import { allowEvictions, denyEvictions } from '../helpers/deny-evictions.js';

describe('worker crash during a cooldown', () => {
  let c: Clients;
  let ns: string;
  const nodes: string[] = [];
  let connection: Connection;
  let client: Client;
  const procs: DrainflowProcess[] = [];
  const taskQueue = uniqueName('crash-e2e');
  const pool = uniqueName('pool');
  const planName = uniqueName('crash');
  let workflowId = '';

  before(async () => {
    const address = requireEnv('TEMPORAL_ADDRESS');
    c = clients();
    await applyCrds(c);
    ns = await createNamespace(c, 'df-crash');
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  });

  const policyName = uniqueName('df-crash-deny-evictions');

  after(async () => {
    try {
      allowEvictions(policyName);
    } catch {
      // best effort
    }
    if (workflowId)
      await client.workflow
        .getHandle(workflowId)
        .signal(abortSignal)
        .catch(() => undefined);
    for (const p of procs) await p.stop('SIGTERM').catch(() => undefined);
    await connection?.close();
    await c.custom
      .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: planName })
      .catch(() => undefined);
    if (ns) await deleteNamespace(c, ns);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  async function startWorker(): Promise<DrainflowProcess> {
    const p = await startWorkerProcess(taskQueue);
    procs.push(p);
    return p;
  }

  it('sends no eviction before nextActionAt after kill -9 of the worker, then completes', async () => {
    const onPool = { 'drainflow.dev/pool': pool };
    const target = await createNode(c, 'df-crash-node', { labels: onPool });
    nodes.push(target);
    const web = makeDeployment(ns, 'web', 2);
    web.spec!.template.spec!.nodeSelector = onPool;
    await c.apps.createNamespacedDeployment({ namespace: ns, body: web });
    await waitPodsReady(c, ns, { app: 'web' }, 2);
    nodes.push(await createNode(c, 'df-crash-spare', { labels: onPool })); // room for replacements
    await denyEvictions(c, ns, policyName);

    const spec = {
      nodeNames: [target],
      drainTimeoutSeconds: 600,
      eviction: { retryBackoff: { initialSeconds: 15, maxSeconds: 60 } },
    };
    const plan = await createDirectPlan(c, planName, spec);
    const input = plan.input;
    workflowId = plan.workflowId;
    const worker1 = await startWorker();
    await client.workflow.start('drainPlanWorkflow', { taskQueue, workflowId, args: [input] });

    const readStatus = () => readPlanStatus(c, planName);
    // Every eviction is refused (403): the pods wait out the backoff, with its end in status.
    const cooling = await waitFor(
      async () => {
        const s = await readStatus();
        return s?.evictionProgress?.nextActionAt ? s : undefined;
      },
      60_000,
      { what: 'status.evictionProgress.nextActionAt' },
    );
    const nextActionAt = Date.parse(cooling.evictionProgress!.nextActionAt!);
    assert.ok(nextActionAt > Date.now(), 'the cooldown is still running');

    await worker1.stop('SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    await startWorker();
    // Let the cooldown pass with evictions still refused, then allow them.
    await waitFor(async () => Date.now() > nextActionAt + 2000, 120_000, { what: 'the cooldown to pass' });
    allowEvictions(policyName);
    const drained = await waitFor(
      async () => {
        const s = await readStatus();
        return s?.phase === 'Drained' ? s : undefined;
      },
      240_000,
      { what: 'plan Drained', intervalMs: 500 },
    );
    assert.equal(drained.evictionProgress?.evicted, 2);

    // Every eviction of the node's workflow, from its history: none scheduled between the kill
    // and the cooldown's end.
    const history = await client.workflow.getHandle(nodeWorkflowId(workflowId, target)).fetchHistory();
    const evictions = (history.events ?? [])
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'evictPod')
      .map((e) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6));
    assert.ok(evictions.length >= 2, `${evictions.length} eviction calls`);
    const early = evictions.filter((t) => t >= killedAt - 1000 && t < nextActionAt - 5);
    assert.deepEqual(
      early,
      [],
      `eviction(s) sent before nextActionAt ${new Date(nextActionAt).toISOString()}`,
    );
  });
});
