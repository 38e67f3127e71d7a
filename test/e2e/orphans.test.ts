// test-lane: parallel
/**
 * Fault paths of the operator, end to end on the real stack:
 *
 * - orphans: a plan deleted without drainflow's cleanup (its finalizer removed by hand while the
 *   operator was down) leaves a running workflow and a claimed, cordoned node; the operator that
 *   starts next (holding the Lease) terminates the workflow, hands the node back (uncordoned, claim
 *   gone) with a Warning Event OrphanHandedBack on the node, and a new plan for the node proceeds.
 *   A plan restored from a backup (same name, new UID) gets the node once the orphan is ended.
 * - Temporal lost its data: the plan's workflow (and its node workflow) deleted from Temporal, as a
 *   dev server restarted without its database leaves it; the operator marks the plan
 *   Failed/WorkflowNotFound with a Warning Event naming the missing workflow, and deleting the plan
 *   or `drainflow abort` (pause refused) hands the node back.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 * Isolation: its own kwok nodes (pool label), namespaces, task queue, plan selector and Lease.
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
import { MERGE_PATCH, stackClients } from '../helpers/operator-harness.js';
import { startRunProcess, type DrainflowProcess } from '../helpers/processes.js';
import { createPlanObject } from '../helpers/direct-plan.js';
import { blockedPlan, runCommand, type BlockedPlan } from './cli-fixtures.js';

const RUN_LABEL = 'drainflow.dev/e2e-orphans';

describe('operator fault paths: orphans and a workflow Temporal lost', () => {
  let c: Clients;
  let connection: Connection;
  let client: Client;
  let proc: DrainflowProcess | undefined;
  const plans: BlockedPlan[] = [];
  const run = uniqueName('orphans');

  /** The run's operator and worker: Lease election on (its own Lease, named after the selector). */
  const startOperator = () =>
    startRunProcess({
      run,
      label: RUN_LABEL,
      args: ['--resync-seconds', '1'],
      env: { DRAINFLOW_ORPHAN_SWEEP_SECONDS: '2' },
    });

  before(async () => {
    c = await stackClients();
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    proc = await startOperator();
  });

  after(async () => {
    for (const p of plans.reverse()) await p.cleanup();
    await proc?.stop('SIGTERM');
    await connection?.close();
  });

  const planApi = {
    get: async (name: string) =>
      (await c.custom
        .getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
        .catch(() => undefined)) as MaintenancePlan | undefined,
    /** Deletes the plan without drainflow's cleanup: its finalizer removed by hand. */
    forceDelete: async (name: string) => {
      await c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name });
      await c.custom.patchClusterCustomObject(
        { group: GROUP, version: VERSION, plural: PLURAL, name, body: { metadata: { finalizers: null } } },
        MERGE_PATCH,
      );
      await waitFor(async () => !(await planApi.get(name)), 30_000, { what: `plan ${name} gone` });
    },
  };
  const status = async (id: string) => (await client.workflow.getHandle(id).describe()).status.name;
  const claimOf = async (node: string) => {
    const n = await c.core.readNode({ name: node });
    const ann = n.metadata?.annotations ?? {};
    return {
      unschedulable: n.spec?.unschedulable === true,
      holder: ann[NODE_CLAIM_ANNOTATION],
      uid: ann[NODE_CLAIM_UID_ANNOTATION],
      was: ann[NODE_WAS_UNSCHEDULABLE_ANNOTATION],
    };
  };
  const nodeEvents = async (node: string, reason: string) =>
    (
      await c.core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.kind=Node,involvedObject.name=${node},reason=${reason}`,
      })
    ).items;

  it('a plan deleted while the operator was down: its workflow terminated, the node handed back, a new plan proceeds', async () => {
    const bp = await blockedPlan(c, 'orph', { [RUN_LABEL]: run });
    plans.push(bp);
    const old = await bp.read();
    const workflowId = old.status!.workflow!.workflowId;
    assert.equal(old.status?.phase, 'Running');
    assert.deepEqual(await claimOf(bp.node), {
      unschedulable: true,
      holder: bp.name,
      uid: old.metadata.uid,
      was: 'false',
    });

    // The operator (and its worker) down; the plan deleted with its finalizer removed by hand.
    await proc!.stop('SIGTERM');
    proc = undefined;
    await planApi.forceDelete(bp.name);
    assert.equal(await status(workflowId), 'RUNNING', 'the workflow outlives its plan');
    assert.equal((await claimOf(bp.node)).holder, bp.name, 'the node stays claimed');

    const t0 = Date.now();
    proc = await startOperator();
    const handedBack = await waitFor(
      async () => {
        const cl = await claimOf(bp.node);
        return cl.holder === undefined && !cl.unschedulable ? cl : undefined;
      },
      60_000,
      { what: 'the orphan node handed back (uncordoned, claim removed)' },
    );
    const backMs = Date.now() - t0;
    assert.deepEqual(handedBack, {
      unschedulable: false,
      holder: undefined,
      uid: undefined,
      was: undefined,
    });
    assert.equal(await status(workflowId), 'TERMINATED', 'the orphan workflow terminated');
    const [ev] = await waitFor(async () => {
      const evs = await nodeEvents(bp.node, 'OrphanHandedBack');
      return evs.length > 0 ? evs : undefined;
    }, 15_000);
    assert.equal(ev!.type, 'Warning');
    assert.match(
      ev!.message ?? '',
      new RegExp(`plan ${bp.name} \\(uid ${old.metadata.uid}\\) no longer exists`),
    );
    assert.match(ev!.message ?? '', new RegExp(`workflow ${workflowId} was terminated`));
    assert.match(ev!.message ?? '', /handed back \(uncordoned\)/);

    // A new plan for the node proceeds: it claims and cordons the node, and waits on the PDB.
    const next = uniqueName('orph-next');
    const created = await createPlanObject(c, next, { nodeNames: [bp.node] }, { [RUN_LABEL]: run });
    plans.push({
      ...bp,
      name: next,
      read: async () => (await planApi.get(next))!,
      cleanup: async () => {
        await c.custom
          .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: next })
          .catch(() => undefined);
        await waitFor(async () => !(await planApi.get(next)), 60_000).catch(() => undefined);
      },
    });
    const claimed = await waitFor(
      async () => {
        const cl = await claimOf(bp.node);
        return cl.uid === created.metadata.uid && cl.unschedulable ? cl : undefined;
      },
      60_000,
      { what: 'the new plan claimed and cordoned the node' },
    );
    assert.equal(claimed.holder, next);
    await waitFor(async () => (await planApi.get(next))?.status?.nodes?.[0]?.blockedBy?.length, 60_000, {
      what: 'the new plan Running, draining the node (waiting on the PDB)',
    });
    console.log(`orphans: operator started → orphan node handed back in ${backMs} ms`);
  });

  it('a plan restored from a backup (same name, new UID): the old workflow ends and the restored plan gets the node', async () => {
    const bp = await blockedPlan(c, 'orph-restore', { [RUN_LABEL]: run });
    plans.push(bp);
    const old = await bp.read();
    const oldWorkflow = old.status!.workflow!.workflowId;
    await proc!.stop('SIGTERM');
    proc = undefined;
    // The backup is restored while the operator is down: the plan deleted by hand, created again.
    await planApi.forceDelete(bp.name);
    const restored = await createPlanObject(
      c,
      bp.name,
      old.spec as Record<string, unknown>,
      old.metadata.labels,
    );
    assert.notEqual(restored.metadata.uid, old.metadata.uid);
    const t0 = Date.now();
    proc = await startOperator();
    const claimed = await waitFor(
      async () => {
        const cl = await claimOf(bp.node);
        return cl.uid === restored.metadata.uid && cl.unschedulable ? cl : undefined;
      },
      60_000,
      { what: 'the restored plan (new UID) claimed the node' },
    );
    const ms = Date.now() - t0;
    assert.equal(claimed.holder, bp.name);
    assert.equal(await status(oldWorkflow), 'TERMINATED', 'the old workflow terminated');
    const evs = await nodeEvents(bp.node, 'OrphanHandedBack');
    assert.equal(evs.length, 1, 'one Warning Event OrphanHandedBack on the node');
    assert.match(evs[0]!.message ?? '', /the plan of that name now is another one/);
    await waitFor(async () => (await bp.read()).status?.nodes?.[0]?.blockedBy?.length, 60_000, {
      what: 'the restored plan draining the node (waiting on the PDB)',
    });
    console.log(`orphans: restored plan got the node ${ms} ms after the operator started`);
  });

  /**
   * A blocked plan whose workflow (and node workflow) Temporal lost, as a dev server restarted
   * without its database leaves it, once the restarted operator marked it Failed/WorkflowNotFound
   * with one Warning naming the workflow; the node still claimed. `failedMs`: operator start to Failed.
   */
  const lostWorkflowPlan = async (prefix: string) => {
    const bp = await blockedPlan(c, prefix, { [RUN_LABEL]: run });
    plans.push(bp);
    const p = await bp.read();
    const workflowId = p.status!.workflow!.workflowId;
    const ns = process.env.TEMPORAL_NAMESPACE ?? 'default';
    const ids = [workflowId];
    for await (const wf of client.workflow.list({ query: `WorkflowId STARTS_WITH "${workflowId}-node-"` }))
      ids.push(wf.workflowId);
    assert.equal(ids.length, 2, 'the plan and its node workflow');
    // What a dev server restarted without its database shows: no such workflow. The operator is
    // down meanwhile: a delete terminates first, and a resync in between would see TERMINATED.
    await proc!.stop('SIGTERM');
    proc = undefined;
    for (const id of ids)
      await client.workflowService.deleteWorkflowExecution({
        namespace: ns,
        workflowExecution: { workflowId: id },
      });
    for (const id of ids)
      await waitFor(
        async () => (await status(id).catch((e: Error) => e.name)) === 'WorkflowNotFoundError',
        30_000,
        {
          what: `Temporal no longer knows ${id}`,
        },
      );
    const t0 = Date.now();
    proc = await startOperator();
    const failed = await waitFor(
      async () => {
        const q = await bp.read();
        return q.status?.phase === 'Failed' ? q : undefined;
      },
      30_000,
      { what: 'plan Failed' },
    );
    const failedMs = Date.now() - t0;
    assert.equal(failed.status?.reason, 'WorkflowNotFound');
    assert.match(
      failed.status?.message ?? '',
      new RegExp(`Temporal workflow ${workflowId} is not known to Temporal any more`),
    );
    const cond = failed.status?.conditions?.find((x) => x.type === 'Progressing');
    assert.deepEqual([cond?.status, cond?.reason], ['False', 'WorkflowNotFound']);
    const warnings = await waitFor(async () => {
      const evs = (
        await c.core.listNamespacedEvent({
          namespace: 'default',
          fieldSelector: `involvedObject.uid=${p.metadata.uid},reason=WorkflowNotFound`,
        })
      ).items;
      return evs.length > 0 ? evs : undefined;
    }, 15_000);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.type, 'Warning');
    assert.match(warnings[0]!.message ?? '', new RegExp(workflowId));
    assert.equal((await claimOf(bp.node)).holder, bp.name, 'the node stays claimed until abort or deletion');
    return { bp, failedMs };
  };

  it('Temporal lost the workflow: Failed/WorkflowNotFound with a Warning naming it; deleting the plan hands the node back', async () => {
    const { bp, failedMs } = await lostWorkflowPlan('lost');
    const t1 = Date.now();
    await c.custom.deleteClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name: bp.name,
    });
    await waitFor(async () => !(await planApi.get(bp.name)), 60_000, { what: 'the plan deletion completed' });
    const deleteMs = Date.now() - t1;
    assert.deepEqual(await claimOf(bp.node), {
      unschedulable: false,
      holder: undefined,
      uid: undefined,
      was: undefined,
    });
    console.log(
      `lost workflow: operator started → plan Failed/WorkflowNotFound in ${failedMs} ms; plan deletion completed in ${deleteMs} ms`,
    );
  });

  it('Temporal lost the workflow: drainflow abort (not pause) has the operator hand the node back, phase Aborted', async () => {
    const { bp } = await lostWorkflowPlan('lost-abort');
    const paused = await runCommand(['pause', bp.name]);
    assert.equal(paused.code, 1, paused.out);
    assert.match(
      paused.err,
      /has ended \(plan phase Failed\/WorkflowNotFound\); nothing to pause/,
      paused.err,
    );
    const aborted = await runCommand(['abort', bp.name]);
    assert.equal(aborted.code, 0, aborted.err);
    assert.match(aborted.out, /spec\.abort is set and the operator handed them back/, aborted.out);
    const done = await bp.read();
    assert.equal(done.spec.abort, true, 'the CLI set spec.abort');
    assert.deepEqual([done.status?.phase, done.status?.reason], ['Aborted', 'WorkflowNotFound']);
    assert.deepEqual(await claimOf(bp.node), {
      unschedulable: false,
      holder: undefined,
      uid: undefined,
      was: undefined,
    });
    console.log(`lost workflow: drainflow abort handed the node back in ${aborted.ms} ms`);
  });
});
