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
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import {
  GROUP,
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  PLURAL,
  VERSION,
  type MaintenancePlan,
} from '../../src/api/plan.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { createPlanObject } from '../helpers/direct-plan.js';
import { freePort, nodePath, startDrainflow, type DrainflowProcess } from '../helpers/processes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const RUN_LABEL = 'drainflow.dev/e2e-closed';

/** Runs `drainflow <args>` like a user would; never throws. */
function drainflow(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(nodePath(), [join(root, 'bin', 'drainflow.js'), ...args], {
    encoding: 'utf8',
    env: process.env,
    timeout: 60_000,
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

describe('a plan whose workflow was terminated', () => {
  let c: Clients;
  let ns: string;
  let node: string | undefined;
  let proc: DrainflowProcess | undefined;
  let connection: Connection | undefined;
  const run = uniqueName('closed');
  const planName = uniqueName('closed-plan');

  before(async () => {
    assert.ok(
      process.env.TEMPORAL_ADDRESS,
      'TEMPORAL_ADDRESS is not set: run `npm run stack -- up` and eval its env',
    );
    c = clients();
    await applyCrds(c);
    ns = await createNamespace(c, 'df-closed');
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    const port = await freePort();
    proc = await startDrainflow({
      args: [
        'run',
        '--operator-port',
        String(port),
        '--worker-port',
        String(await freePort()),
        '--task-queue',
        run,
        '--plan-selector',
        `${RUN_LABEL}=${run}`,
        '--no-leader-election',
        '--resync-seconds',
        '1',
      ],
      readyPort: port,
    });
  });

  after(async () => {
    await c.custom
      .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: planName })
      .catch(() => undefined);
    await waitFor(
      async () =>
        !(await c.custom
          .getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: planName })
          .catch(() => undefined)),
      60_000,
      { what: 'plan deleted' },
    ).catch(() => undefined);
    await proc?.stop('SIGTERM');
    await connection?.close();
    if (ns) await deleteNamespace(c, ns);
    if (node) await deleteNode(c, node).catch(() => undefined);
  });

  it('is marked Failed/WorkflowTerminated with a Warning Event, and abort hands its node back', async () => {
    const pool = { 'drainflow.dev/pool': run };
    node = await createNode(c, 'df-closed-node', { labels: pool });
    const web = makeDeployment(ns, 'web', 1);
    web.spec!.template.spec!.nodeSelector = pool;
    await c.apps.createNamespacedDeployment({ namespace: ns, body: web });
    await waitPodsReady(c, ns, { app: 'web' }, 1);
    // A PDB allowing nothing keeps the plan Running.
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', { app: 'web' }, { maxUnavailable: 0 }),
    });
    const created = await createPlanObject(c, planName, { nodeNames: [node] }, { [RUN_LABEL]: run });
    const read = async () =>
      (await c.custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name: planName,
      })) as MaintenancePlan;
    const running = await waitFor(
      async () => {
        const p = await read();
        return p.status?.phase === 'Running' && p.status.nodes?.[0]?.blockedBy?.length ? p : undefined;
      },
      60_000,
      { what: 'plan Running, waiting on the PDB' },
    );
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
    assert.equal(
      (await c.core.readNode({ name: node })).spec?.unschedulable,
      true,
      'still cordoned until abort',
    );

    const warnings = async () =>
      (
        await c.core.listNamespacedEvent({
          namespace: 'default',
          fieldSelector: `involvedObject.uid=${created.metadata.uid}`,
        })
      ).items.filter((e) => e.type === 'Warning' && e.reason === 'WorkflowClosed');
    await waitFor(async () => (await warnings()).length > 0, 15_000, {
      what: 'Warning Event WorkflowClosed',
    });

    const st = drainflow('status', planName);
    assert.equal(st.code, 0, st.err);
    assert.match(st.out, new RegExp(`MaintenancePlan ${planName}: Failed \\(WorkflowTerminated\\)`), st.out);
    assert.doesNotMatch(st.out, /note:/, 'the status says it all');

    const paused = drainflow('pause', planName);
    assert.equal(paused.code, 1);
    assert.match(paused.err, /drainflow abort \S+ has the operator hand them back/, paused.err);

    const aborted = drainflow('abort', planName);
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
});
