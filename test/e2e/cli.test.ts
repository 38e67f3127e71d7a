// test-lane: parallel
/**
 * The `drainflow` plan commands against the real stack, with a real operator and worker:
 * status, pause (the spec follows, so kubectl can resume), abort, and the errors for an unknown
 * plan and a finished workflow.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUP, PLURAL, VERSION, type MaintenancePlan } from '../../src/api/plan.js';
import {
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
import { stackClients } from '../helpers/operator-harness.js';
import { freePort, nodePath, startRunProcess, type DrainflowProcess } from '../helpers/processes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const RUN_LABEL = 'drainflow.dev/e2e-cli';

/** Runs `drainflow <args>` like a user would; never throws. */
function drainflow(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(nodePath(), [join(root, 'bin', 'drainflow.js'), ...args], {
    encoding: 'utf8',
    env: process.env,
    timeout: 60_000,
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

describe('drainflow CLI plan commands', () => {
  let c: Clients;
  let ns: string;
  const nodes: string[] = [];
  let proc: DrainflowProcess | undefined;
  const run = uniqueName('cli');
  const planName = uniqueName('cli-plan');

  before(async () => {
    c = await stackClients();
    ns = await createNamespace(c, 'df-cli');
    proc = await startRunProcess({ run, label: RUN_LABEL });
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
    if (ns) await deleteNamespace(c, ns);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  it('status, pause (spec follows, kubectl resumes), abort, and readable errors', async () => {
    const pool = { 'drainflow.dev/pool': run };
    const target = await createNode(c, 'df-cli-node', { labels: pool });
    nodes.push(target);
    const web = makeDeployment(ns, 'web', 2);
    web.spec!.template.spec!.nodeSelector = pool;
    await c.apps.createNamespacedDeployment({ namespace: ns, body: web });
    await waitPodsReady(c, ns, { app: 'web' }, 2);
    // A PDB allowing nothing keeps the plan running, so it can be paused and aborted.
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', { app: 'web' }, { maxUnavailable: 0 }),
    });
    await createPlanObject(c, planName, { nodeNames: [target] }, { [RUN_LABEL]: run });
    const read = async () =>
      (await c.custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name: planName,
      })) as MaintenancePlan;
    await waitFor(async () => (await read()).status?.nodes?.[0]?.blockedBy?.length, 60_000, {
      what: 'plan Running, waiting on the PDB',
    });

    const st = drainflow('status', planName);
    assert.equal(st.code, 0, st.err);
    assert.match(st.out, new RegExp(`MaintenancePlan ${planName}: Running`));
    assert.match(st.out, /blocked by .*PodDisruptionBudget/);

    // The wrong Temporal namespace, or a Temporal that is not there, is named as such; the status
    // the plan last wrote is still shown.
    const wrongNs = drainflow('status', planName, '--temporal-namespace', 'no-such-namespace');
    assert.equal(wrongNs.code, 0, wrongNs.err);
    assert.match(wrongNs.out, new RegExp(`MaintenancePlan ${planName}: Running`));
    assert.match(
      wrongNs.out,
      /note: the Temporal server at \S+ has no namespace "no-such-namespace" \(the operator started this plan's workflow in namespace "default"\)/,
    );
    const closed = `127.0.0.1:${await freePort()}`;
    const away = drainflow('status', planName, '--temporal-address', closed);
    assert.equal(away.code, 1, away.out);
    assert.match(away.out, new RegExp(`MaintenancePlan ${planName}: Running`), 'the written status');
    assert.match(away.err, new RegExp(`the Temporal server at ${closed} is unreachable`));
    assert.doesNotMatch(away.out + away.err, /operator/, 'the operator is not blamed');

    const paused = drainflow('pause', planName);
    assert.equal(paused.code, 0, paused.err);
    assert.match(paused.out, /pause: accepted by the workflow/);
    assert.equal((await read()).spec.paused, true, 'the spec follows the CLI');
    await waitFor(async () => (await read()).status?.phase === 'Paused', 30_000, { what: 'plan Paused' });
    // The Update carries the generation of the spec the CLI wrote, as the operator's signals do.
    const pausedPlan = await read();
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
    try {
      const history = await new Client({
        connection,
        namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
      }).workflow
        .getHandle(pausedPlan.status!.workflow!.workflowId!)
        .fetchHistory();
      const updates = (history.events ?? [])
        .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input)
        .filter((i) => i?.name === 'control')
        .map((i) => JSON.parse(Buffer.from(i!.args!.payloads![0]!.data!).toString('utf8')) as unknown);
      assert.deepEqual(updates, [{ action: 'pause', generation: pausedPlan.metadata.generation }]);
    } finally {
      await connection.close();
    }

    // kubectl's way resumes what the CLI paused.
    await c.custom.patchClusterCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, name: planName, body: { spec: { paused: false } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitFor(async () => (await read()).status?.phase === 'Running', 30_000, {
      what: 'plan Running again',
    });

    const aborted = drainflow('abort', planName);
    assert.equal(aborted.code, 0, aborted.err);
    // The CLI waits for the phase the abort leads to instead of printing the old one.
    assert.match(aborted.out, /abort: accepted by the workflow of plan \S+ \(phase Aborted\)/, aborted.out);
    await waitFor(async () => (await read()).status?.phase === 'Aborted', 60_000, { what: 'plan Aborted' });
    assert.notEqual((await c.core.readNode({ name: target })).spec?.unschedulable, true, 'node handed back');

    const late = drainflow('pause', planName);
    assert.equal(late.code, 1);
    assert.match(late.err, /has ended/);
    const unknown = drainflow('status', 'no-such-plan-anywhere');
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no MaintenancePlan named "no-such-plan-anywhere"/);
  });
});
