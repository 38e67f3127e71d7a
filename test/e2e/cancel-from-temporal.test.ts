// test-lane: parallel
/**
 * A workflow cancelled from Temporal (the Temporal UI's Cancel, `temporal workflow cancel`), end to
 * end on the real stack with the operator (`drainflow run --resync-seconds 1`); each plan holds one
 * kwok node whose 2 pods sit behind a PDB with maxUnavailable 0, so the drain is still running:
 *
 * - the plan's workflow cancelled: the plan ends Aborted/WorkflowCanceled, its node uncordoned and
 *   its claim annotations gone, no workflow of the plan left running, the workflow closed
 *   CANCELLED with no failed workflow task; deleting the plan then completes;
 * - one node's workflow cancelled: the node ends Aborted/WorkflowCanceled (workflow CANCELLED) and
 *   stays cordoned and claimed; deleting the plan (an abort) hands it back and completes.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 * Isolation: its own kwok nodes (pool label), namespaces, task queue and plan selector.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import {
  GROUP,
  PLURAL,
  VERSION,
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
} from '../../src/api/plan.js';
import { childrenQuery } from '../../src/operator/stop-children.js';
import { uniqueName, waitFor, type Clients } from '../helpers/k8s.js';
import { stackClients } from '../helpers/operator-harness.js';
import { startRunProcess, type DrainflowProcess } from '../helpers/processes.js';
import { blockedPlan, type BlockedPlan } from './cli-fixtures.js';

const RUN_LABEL = 'drainflow.dev/e2e-cancel';

/** IDs of the running workflows plan workflow `workflowId` started (node and hook workflows). */
async function runningOfPlan(client: Client, workflowId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: childrenQuery(workflowId) })) ids.push(wf.workflowId);
  return ids;
}

/** The workflow task failures in a workflow's history (a cancel once made every task fail). */
async function failedTasks(h: WorkflowHandle): Promise<string[]> {
  const history = await h.fetchHistory();
  return (history.events ?? [])
    .filter((e) => e.workflowTaskFailedEventAttributes)
    .map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '?');
}

describe('a workflow cancelled from Temporal (real stack)', () => {
  let c: Clients;
  let client: Client;
  let connection: Connection | undefined;
  let proc: DrainflowProcess | undefined;
  const plans: BlockedPlan[] = [];
  const run = uniqueName('cancel');

  before(async () => {
    c = await stackClients();
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    proc = await startRunProcess({
      run,
      label: RUN_LABEL,
      leaseNamespace: false,
      args: ['--resync-seconds', '1'],
    });
  });

  after(async () => {
    // The plans first (their deletion needs the operator), then the process.
    for (const p of plans) await p.cleanup();
    await proc?.stop('SIGTERM');
    await connection?.close();
  });

  /** A blocked plan and its workflow ID, once its node workflow runs. */
  const runningPlan = async (prefix: string) => {
    const bp = await blockedPlan(c, prefix, { [RUN_LABEL]: run });
    plans.push(bp);
    const workflowId = (await bp.read()).status!.workflow!.workflowId;
    const [nodeWorkflowId] = await waitFor(
      async () => {
        const ids = await runningOfPlan(client, workflowId);
        return ids.length === 1 ? ids : undefined;
      },
      15_000,
      { what: 'the node workflow Running' },
    );
    assert.equal((await c.core.readNode({ name: bp.node })).spec?.unschedulable, true, 'node cordoned');
    return { bp, workflowId, nodeWorkflowId: nodeWorkflowId! };
  };

  /** Deletes the plan and waits for the deletion to complete (the finalizer removed); @returns ms. */
  const deletePlan = async (bp: BlockedPlan): Promise<number> => {
    const t0 = Date.now();
    await c.custom.deleteClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name: bp.name,
    });
    await waitFor(async () => !(await bp.read().catch(() => undefined)), 60_000, {
      what: `plan ${bp.name} deleted (finalizer removed)`,
    });
    return Date.now() - t0;
  };

  const assertHandedBack = async (node: string) => {
    const n = await c.core.readNode({ name: node });
    assert.notEqual(n.spec?.unschedulable, true, 'node uncordoned');
    for (const a of [NODE_CLAIM_ANNOTATION, NODE_CLAIM_UID_ANNOTATION, NODE_WAS_UNSCHEDULABLE_ANNOTATION])
      assert.equal(n.metadata?.annotations?.[a], undefined, `${a} removed`);
  };

  it("the plan's workflow cancelled: Aborted/WorkflowCanceled, node handed back, CANCELLED; the deletion completes", async () => {
    const { bp, workflowId } = await runningPlan('cancel-plan');
    const handle = client.workflow.getHandle(workflowId);
    const t0 = Date.now();
    await handle.cancel();
    const aborted = await waitFor(
      async () => {
        const p = await bp.read();
        return p.status?.phase === 'Aborted' ? p : undefined;
      },
      30_000,
      { what: 'plan Aborted after the cancel' },
    );
    const abortedMs = Date.now() - t0;
    assert.equal(aborted.status?.reason, 'WorkflowCanceled', aborted.status?.message);
    assert.equal(aborted.status?.nodes?.[0]?.phase, 'Aborted');
    await assertHandedBack(bp.node);
    await waitFor(async () => (await handle.describe()).status.name === 'CANCELLED', 15_000, {
      what: 'the plan workflow closed CANCELLED',
    });
    await waitFor(async () => (await runningOfPlan(client, workflowId)).length === 0, 15_000, {
      what: 'no workflow of the plan left Running',
    });
    assert.deepEqual(await failedTasks(handle), [], 'no workflow task failed');
    const deletedMs = await deletePlan(bp);
    console.log(
      `cancel: plan workflow cancelled → Aborted in ${abortedMs} ms; deletion completed in ${deletedMs} ms`,
    );
  });

  it('a node workflow cancelled: the node Aborted/WorkflowCanceled, still cordoned; the deletion hands it back', async () => {
    const { bp, workflowId, nodeWorkflowId } = await runningPlan('cancel-node');
    const nodeHandle = client.workflow.getHandle(nodeWorkflowId);
    const t0 = Date.now();
    await nodeHandle.cancel();
    const ended = await waitFor(
      async () => {
        const p = await bp.read();
        return p.status?.nodes?.[0]?.phase === 'Aborted' ? p : undefined;
      },
      30_000,
      { what: 'the node Aborted after the cancel' },
    );
    const endedMs = Date.now() - t0;
    assert.equal(ended.status?.nodes?.[0]?.reason, 'WorkflowCanceled', ended.status?.nodes?.[0]?.message);
    await waitFor(async () => (await nodeHandle.describe()).status.name === 'CANCELLED', 15_000, {
      what: 'the node workflow closed CANCELLED',
    });
    assert.deepEqual(await failedTasks(nodeHandle), [], 'no workflow task of the node failed');
    const n = await c.core.readNode({ name: bp.node });
    assert.equal(n.spec?.unschedulable, true, 'still cordoned until the plan hands it back');
    assert.ok(n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], 'still claimed by the plan');
    const planHandle = client.workflow.getHandle(workflowId);
    assert.equal((await planHandle.describe()).status.name, 'RUNNING', 'the plan workflow goes on');
    const deletedMs = await deletePlan(bp);
    await assertHandedBack(bp.node);
    assert.deepEqual(await failedTasks(planHandle), [], 'no workflow task of the plan failed');
    console.log(
      `cancel: node workflow cancelled → node Aborted in ${endedMs} ms (plan ${ended.status?.phase}/${ended.status?.reason}); deletion completed in ${deletedMs} ms`,
    );
  });
});
