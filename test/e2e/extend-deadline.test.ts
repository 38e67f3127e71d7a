// test-lane: parallel
/**
 * A plan Blocked at its deadline (onDeadline Stop) given more time, end to end on the real stack
 * with the operator and a worker (`drainflow run --resync-seconds 1`): a kwok node of its own pool
 * whose 2 pods sit behind a PDB with maxUnavailable 0, and a plan with drainTimeoutSeconds 20.
 * Once the plan reads Blocked/DeadlineExceeded:
 *
 * - `drainflow resume` refuses and says how to extend; `drainflow extend P --by 10m` brings the
 *   plan back to Running; the PDB deleted, the plan ends Drained; a DeadlineExtended Event names who;
 * - the same through `kubectl patch` of spec.drainTimeoutSeconds (the operator's relay); lowering
 *   it is refused by the CRD.
 *
 * In both, the node is sampled every 200 ms from the first cordon to the Drained plan: never
 * uncordoned, its claim never removed. `drainflow release` then hands it back.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 * Isolation: its own kwok nodes (pool label), namespaces, task queue and plan selector.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GROUP, NODE_CLAIM_ANNOTATION, PLURAL, VERSION, type MaintenancePlan } from '../../src/api/plan.js';
import {
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  sleep,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { createPlanObject } from '../helpers/direct-plan.js';
import { EVENT_NAMESPACE, drainflowEnv, kubectl, stackClients } from '../helpers/operator-harness.js';
import { startRunProcess, type DrainflowProcess } from '../helpers/processes.js';
import { runCommand } from './cli-fixtures.js';

const RUN_LABEL = 'drainflow.dev/e2e-extend';

describe('a plan Blocked at its deadline, extended (real stack)', () => {
  let c: Clients;
  let proc: DrainflowProcess | undefined;
  const run = uniqueName('extend');
  const cleanups: (() => Promise<void>)[] = [];

  before(async () => {
    c = await stackClients();
    proc = await startRunProcess({
      run,
      label: RUN_LABEL,
      leaseNamespace: false,
      args: ['--resync-seconds', '1'],
    });
  });

  after(async () => {
    for (const f of cleanups) await f().catch(() => undefined);
    await proc?.stop('SIGTERM');
  });

  const read = async (name: string) =>
    (await c.custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name,
    })) as MaintenancePlan;

  const phaseIs = async (name: string, phase: string, reason: string | undefined, ms: number) =>
    waitFor(
      async () => {
        const p = await read(name);
        return p.status?.phase === phase && (reason === undefined || p.status.reason === reason)
          ? p
          : undefined;
      },
      ms,
      { what: `plan ${name} ${phase}${reason ? `/${reason}` : ''}` },
    );

  /** A node with 2 pods behind PDB web (maxUnavailable 0) and a plan of 20 s on it, Blocked at its deadline. */
  async function blockedAtDeadline(prefix: string) {
    const name = uniqueName(`${prefix}-plan`);
    const namespace = await createNamespace(c, `df-${prefix}`);
    const pool = { 'drainflow.dev/pool': name };
    const node = await createNode(c, `df-${prefix}-node`, { labels: pool });
    const web = makeDeployment(namespace, 'web', 2);
    web.spec!.template.spec!.nodeSelector = pool;
    await c.apps.createNamespacedDeployment({ namespace, body: web });
    await waitPodsReady(c, namespace, { app: 'web' }, 2);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace,
      body: makePdb(namespace, 'web', { app: 'web' }, { maxUnavailable: 0 }),
    });
    await createPlanObject(
      c,
      name,
      { nodeNames: [node], drainTimeoutSeconds: 20, onDeadline: 'Stop', uncordon: 'OnRelease' },
      { [RUN_LABEL]: run },
    );
    cleanups.push(async () => {
      await c.custom
        .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
        .catch(() => undefined);
      await waitFor(async () => !(await read(name).catch(() => undefined)), 60_000).catch(() => undefined);
      await deleteNamespace(c, namespace);
      await deleteNode(c, node).catch(() => undefined);
    });
    // From the first cordon on, the node is sampled: it must never be uncordoned nor lose the claim.
    await waitFor(async () => (await c.core.readNode({ name: node })).spec?.unschedulable === true, 30_000, {
      what: `node ${node} cordoned`,
    });
    const seen: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const n = await c.core.readNode({ name: node }).catch(() => undefined);
        if (n && n.spec?.unschedulable !== true) seen.push(`uncordoned at ${new Date().toISOString()}`);
        if (n && n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION] !== name)
          seen.push(
            `claim ${n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION] ?? 'none'} at ${new Date().toISOString()}`,
          );
        await sleep(200);
      }
    })();
    const blocked = await phaseIs(name, 'Blocked', 'DeadlineExceeded', 90_000);
    return {
      name,
      node,
      namespace,
      blocked,
      async stopSampling(): Promise<string[]> {
        sampling = false;
        await sampler;
        return seen;
      },
    };
  }

  const env = () => ({ ...process.env, ...drainflowEnv() });

  /** The blocker goes; the plan drains; the node stayed cordoned and claimed; release hands it back. */
  async function drainAfterBlockerRemoved(p: Awaited<ReturnType<typeof blockedAtDeadline>>, by: RegExp) {
    const running = await phaseIs(p.name, 'Running', undefined, 15_000);
    assert.ok(
      Date.parse(running.status!.deadline!) > Date.parse(p.blocked.status!.deadline!),
      'a later deadline',
    );
    // The node's drain runs again and meets the PDB.
    await waitFor(async () => (await read(p.name)).status?.nodes?.[0]?.blockedBy?.length, 30_000, {
      what: 'the node drained again, blocked by the PDB',
    });
    const t0 = Date.now();
    await c.policy.deleteNamespacedPodDisruptionBudget({ namespace: p.namespace, name: 'web' });
    const drained = await phaseIs(p.name, 'Drained', 'AllNodesDrained', 60_000);
    const drainedMs = Date.now() - t0;
    const seen = await p.stopSampling();
    assert.deepEqual(seen, [], 'the node stayed cordoned and claimed from the first cordon to Drained');
    assert.equal(drained.status?.nodes?.[0]?.phase, 'Drained');
    const events = await c.core.listNamespacedEvent({
      namespace: EVENT_NAMESPACE,
      fieldSelector: `involvedObject.name=${p.name},reason=DeadlineExtended`,
    });
    assert.equal(events.items.length, 1, 'one DeadlineExtended Event');
    assert.equal(events.items[0]!.type, 'Normal');
    assert.match(events.items[0]!.message ?? '', by);
    const rel = await runCommand(['release', p.name], { env: env() });
    assert.equal(rel.code, 0, rel.err);
    await phaseIs(p.name, 'Completed', 'Released', 30_000);
    assert.notEqual(
      (await c.core.readNode({ name: p.node })).spec?.unschedulable,
      true,
      'uncordoned at the release',
    );
    console.log(`# ${p.name}: Drained ${drainedMs} ms after the PDB was deleted`);
  }

  it('drainflow extend --by: Running again from where it stopped, drained once the PDB goes, never uncordoned', async () => {
    const p = await blockedAtDeadline('ext-cli');
    const resume = await runCommand(['resume', p.name], { env: env() });
    assert.notEqual(resume.code, 0, 'resume does not pretend to resume');
    assert.match(resume.err, /Blocked at its deadline \(DeadlineExceeded\): resume gives it no more time/);
    assert.match(resume.err, new RegExp(`drainflow extend ${p.name} --by 30m`));
    const ext = await runCommand(['extend', p.name, '--by', '10m', '--as', 'e2e-admin'], { env: env() });
    assert.equal(ext.code, 0, ext.err);
    assert.match(
      ext.out,
      /extend: accepted by the workflow of plan .* \(by e2e-admin\); deadline .*, phase Running/,
    );
    const again = await runCommand(['extend', p.name, '--to', '2000-01-01T00:00:00Z'], { env: env() });
    assert.notEqual(again.code, 0);
    assert.match(again.err, /refused the extension: the new deadline .* is not later than the current one/);
    await drainAfterBlockerRemoved(p, /by e2e-admin at .*node\(s\) .* drain again, their claims kept/);
  });

  it('spec.drainTimeoutSeconds raised with kubectl: the operator relays it, same outcome; lowering is refused', async () => {
    const p = await blockedAtDeadline('ext-spec');
    const patch = (seconds: number) => [
      'patch',
      'mp',
      p.name,
      '--type',
      'merge',
      '-p',
      JSON.stringify({ spec: { drainTimeoutSeconds: seconds } }),
    ];
    assert.throws(() => kubectl(patch(10)), /drainTimeoutSeconds can only be raised/);
    kubectl(patch(900));
    await drainAfterBlockerRemoved(p, /by spec\.drainTimeoutSeconds 900 \(generation \d+\)/);
  });
});
