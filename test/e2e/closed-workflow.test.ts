// test-lane: parallel
/**
 * A plan whose Temporal workflow is terminated behind its back, end to end on the real stack: the
 * operator (`drainflow run --resync-seconds 1`) notices the closed workflow without any change to the
 * plan and marks it Failed/WorkflowTerminated with one Warning Event WorkflowClosed; `drainflow
 * status` shows that status (not the replayed Running); `drainflow abort` sets spec.abort: true and
 * the operator hands the node back (uncordoned, its claim annotations gone), phase Aborted.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 * Isolation: its own kwok node (pool label), namespace, task queue and plan selector.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import {
  GROUP,
  PLURAL,
  VERSION,
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  type MaintenancePlan,
} from '../../src/api/plan.js';
import { uniqueName, waitFor, type Clients } from '../helpers/k8s.js';
import { stackClients } from '../helpers/operator-harness.js';
import { startRunProcess, type DrainflowProcess } from '../helpers/processes.js';
import { blockedPlan, runCommand, type BlockedPlan } from './cli-fixtures.js';
import { childrenQuery } from '../../src/operator/stop-children.js';

/** IDs of the running workflows plan workflow `workflowId` started (node and hook workflows). */
async function runningOfPlan(client: Client, workflowId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: childrenQuery(workflowId) })) ids.push(wf.workflowId);
  return ids;
}

const RUN_LABEL = 'drainflow.dev/e2e-closed';

describe('a plan whose workflow was terminated', () => {
  let c: Clients;
  let plan: BlockedPlan | undefined;
  let proc: DrainflowProcess | undefined;
  let connection: Connection | undefined;
  const run = uniqueName('closed');

  before(async () => {
    c = await stackClients();
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    proc = await startRunProcess({
      run,
      label: RUN_LABEL,
      leaseNamespace: false,
      args: ['--resync-seconds', '1'],
    });
  });

  after(async () => {
    // The plan first (its deletion needs the operator), then the process.
    await plan?.cleanup();
    await proc?.stop('SIGTERM');
    await connection?.close();
  });

  const planEvents = async (uid: string) =>
    (await c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.uid=${uid}` }))
      .items;

  /** The plan, a Temporal client and the plan's workflow ID, once its node workflow runs. */
  const withNodeWorkflowRunning = async (bp: BlockedPlan) => {
    const p = await bp.read();
    const client = new Client({
      connection: connection!,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    });
    const workflowId = p.status!.workflow!.workflowId;
    await waitFor(async () => (await runningOfPlan(client, workflowId)).length === 1, 15_000, {
      what: 'the node workflow Running',
    });
    return { p, client, workflowId };
  };

  it('is marked Failed/WorkflowTerminated with a Warning Event, and abort hands its node back', async () => {
    // A PDB allowing nothing keeps the plan Running (cli-fixtures' blockedPlan).
    plan = await blockedPlan(c, 'closed', { [RUN_LABEL]: run });
    const { node, name: planName, read } = plan;
    const running = await read();
    assert.equal(running.status?.phase, 'Running', 'plan Running, waiting on the PDB');
    assert.equal((await c.core.readNode({ name: node })).spec?.unschedulable, true, 'node cordoned');

    // Terminated from outside, as from the Temporal UI or CLI; the plan is not touched.
    const client = new Client({
      connection: connection!,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    });
    const workflowId = running.status!.workflow!.workflowId;
    const terminatedAt = Date.now();
    await client.workflow.getHandle(workflowId).terminate('e2e: terminated behind the plan');
    const failed = await waitFor(
      async () => {
        const p = await read();
        return p.status?.phase === 'Failed' ? p : undefined;
      },
      30_000,
      { what: 'plan Failed after the termination' },
    );
    console.log(`closed-workflow: terminated → Failed in ${Date.now() - terminatedAt} ms (resync 1 s)`);
    assert.equal(failed.status?.reason, 'WorkflowTerminated');
    assert.match(
      failed.status?.message ?? '',
      /was terminated \(close status TERMINATED\) while the plan was Running/,
    );
    assert.match(failed.status?.message ?? '', /spec\.abort: true/);
    const cond = (p: MaintenancePlan, type: string) => p.status?.conditions?.find((x) => x.type === type);
    assert.deepEqual(
      [cond(failed, 'Progressing')?.status, cond(failed, 'Progressing')?.reason],
      ['False', 'WorkflowTerminated'],
    );
    assert.deepEqual(
      [cond(failed, 'Blocked')?.status, cond(failed, 'Blocked')?.reason],
      ['True', 'WorkflowTerminated'],
    );
    assert.ok(failed.status?.completedAt, 'completedAt set');
    // The node workflow (ParentClosePolicy ABANDON) outlived the plan's; the operator stops it.
    await waitFor(async () => (await runningOfPlan(client, workflowId)).length === 0, 30_000, {
      what: 'no workflow of the plan left Running',
    });
    const stopped = await waitFor(
      async () => (await planEvents(running.metadata.uid)).find((e) => e.reason === 'ChildWorkflowsStopped'),
      15_000,
      { what: 'Event ChildWorkflowsStopped' },
    );
    assert.match(stopped.message ?? '', new RegExp(`${workflowId}-node-${node}`), stopped.message);
    assert.equal(
      (await c.core.readNode({ name: node })).spec?.unschedulable,
      true,
      'still cordoned until abort',
    );

    const warnings = async () =>
      (await planEvents(running.metadata.uid)).filter(
        (e) => e.type === 'Warning' && e.reason === 'WorkflowClosed',
      );
    await waitFor(async () => (await warnings()).length > 0, 15_000, {
      what: 'Warning Event WorkflowClosed',
    });

    const st = await runCommand(['status', planName]);
    assert.equal(st.code, 0, st.err);
    assert.match(st.out, new RegExp(`MaintenancePlan ${planName}: Failed \\(WorkflowTerminated\\)`), st.out);
    assert.doesNotMatch(st.out, /note:/, 'the status says it all');

    const paused = await runCommand(['pause', planName]);
    assert.equal(paused.code, 1);
    assert.match(paused.err, /drainflow abort \S+ has the operator hand them back/, paused.err);

    const aborted = await runCommand(['abort', planName]);
    assert.equal(aborted.code, 0, aborted.err);
    assert.match(
      aborted.out,
      /spec\.abort is set and the operator handed them back: .*handed back 1 node\(s\)/,
      aborted.out,
    );
    const done = await read();
    assert.equal(done.spec.abort, true, 'the CLI set spec.abort');
    assert.equal(done.status?.phase, 'Aborted');
    assert.equal(done.status?.reason, 'WorkflowTerminated');
    const n = await c.core.readNode({ name: node });
    assert.notEqual(n.spec?.unschedulable, true, 'node uncordoned');
    for (const a of [NODE_CLAIM_ANNOTATION, NODE_CLAIM_UID_ANNOTATION, NODE_WAS_UNSCHEDULABLE_ANNOTATION])
      assert.equal(n.metadata?.annotations?.[a], undefined, `${a} removed`);
    assert.equal((await warnings()).length, 1, 'one Warning Event WorkflowClosed');
  });

  it('a node workflow terminated (plan Failed/NodeWorkflowFailed), then the plan workflow: marked, and abort hands the node back', async () => {
    const third = await blockedPlan(c, 'closed-node', { [RUN_LABEL]: run });
    try {
      const { client, workflowId } = await withNodeWorkflowRunning(third);
      const [nodeWorkflowId] = await runningOfPlan(client, workflowId);
      await client.workflow.getHandle(nodeWorkflowId!).terminate('e2e: the node workflow terminated');
      await waitFor(async () => (await third.read()).status?.reason === 'NodeWorkflowFailed', 30_000, {
        what: 'plan Failed/NodeWorkflowFailed',
      });
      // The plan workflow stays open holding the node's claim; now it is terminated too.
      await client.workflow.getHandle(workflowId).terminate('e2e: then the plan workflow');
      const marked = await waitFor(
        async () => {
          const q = await third.read();
          return q.status?.reason === 'WorkflowTerminated' ? q : undefined;
        },
        30_000,
        { what: 'plan marked Failed/WorkflowTerminated' },
      );
      assert.equal(marked.status?.phase, 'Failed');
      const aborted = await runCommand(['abort', third.name]);
      assert.equal(aborted.code, 0, aborted.err);
      const done = await third.read();
      assert.equal(done.status?.phase, 'Aborted');
      const n = await c.core.readNode({ name: third.node });
      assert.notEqual(n.spec?.unschedulable, true, 'node uncordoned');
      assert.equal(n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], undefined, 'claim removed');
    } finally {
      await third.cleanup();
    }
  });

  it('deleted right after the termination: no workflow of the plan left Running, its node uncordoned', async () => {
    const second = await blockedPlan(c, 'closed-del', { [RUN_LABEL]: run });
    try {
      const { p, client, workflowId } = await withNodeWorkflowRunning(second);
      await client.workflow.getHandle(workflowId).terminate('e2e: terminated, then the plan deleted');
      await c.custom.deleteClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name: second.name,
      });
      const t0 = Date.now();
      await waitFor(async () => !(await second.read().catch(() => undefined)), 60_000, {
        what: 'plan deleted (finalizer removed)',
      });
      console.log(`closed-workflow: terminated and deleted → finalizer removed in ${Date.now() - t0} ms`);
      assert.deepEqual(await runningOfPlan(client, workflowId), [], 'no workflow of the plan Running');
      const n = await c.core.readNode({ name: second.node });
      assert.notEqual(n.spec?.unschedulable, true, 'node uncordoned (spec.uncordon OnDelete)');
      assert.equal(n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], undefined, 'claim removed');
      const reasons = (await planEvents(p.metadata.uid)).map((e) => e.reason);
      assert.ok(reasons.includes('ChildWorkflowsStopped'), reasons.join(', '));
    } finally {
      await second.cleanup();
    }
  });
});
