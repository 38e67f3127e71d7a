// test-lane: parallel
/**
 * Soak, end to end on the real stack: 40 MaintenancePlans created and deleted at random moments
 * (each deleted 1-6 s after its creation, 4 alive at a time) over 8 kwok nodes whose 16 pods are
 * behind one PodDisruptionBudget (minAvailable 12). Plans name 1 or 2 random nodes of the 8, so
 * they wait for each other's claims, are deleted before their workflow started, while cordoning,
 * while evicting, or once drained. Afterwards: no plan, no claim annotation, no cordon, no running
 * workflow on the run's task queue; and the PDB, sampled all along, never showed currentHealthy
 * below desiredHealthy. Bounded: under 5 minutes.
 *
 * The random choices come from a seeded generator; the seed is printed (DRAINFLOW_SOAK_SEED replays it).
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 * Isolation: its own kwok nodes (pool label), namespace, task queue, plan selector and Lease.
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
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { stackClients } from '../helpers/operator-harness.js';
import { startRunProcess, type DrainflowProcess } from '../helpers/processes.js';
import { createPlanObject } from '../helpers/direct-plan.js';

const RUN_LABEL = 'drainflow.dev/e2e-soak';
const PLANS = 40;
const ALIVE = 4;
const NODES = 8;
const REPLICAS = 16;
const MIN_AVAILABLE = 12;

/** mulberry32: a small seeded generator of numbers in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('soak: 40 plans created and deleted at random moments over 8 nodes behind one PDB', () => {
  let c: Clients;
  let connection: Connection;
  let client: Client;
  let proc: DrainflowProcess | undefined;
  let namespace: string | undefined;
  const nodes: string[] = [];
  const run = uniqueName('soak');

  before(async () => {
    c = await stackClients();
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    proc = await startRunProcess({ run, label: RUN_LABEL });
  });

  after(async () => {
    await proc?.stop('SIGTERM');
    if (namespace) await deleteNamespace(c, namespace);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
    await connection?.close();
  });

  const listPlans = async () =>
    (
      (await c.custom.listClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        labelSelector: `${RUN_LABEL}=${run}`,
      })) as { items: MaintenancePlan[] }
    ).items;

  it(
    'leaves no plan, claim, cordon or running workflow, and the PDB never below desiredHealthy',
    { timeout: 300_000 },
    async () => {
      const seed = Number(process.env.DRAINFLOW_SOAK_SEED ?? Date.now() % 1_000_000);
      const rand = seeded(seed);
      console.log(`soak: seed ${seed}`);
      const pool = { 'drainflow.dev/pool': run };
      nodes.push(
        ...(await Promise.all(
          Array.from({ length: NODES }, () => createNode(c, 'df-soak', { labels: pool })),
        )),
      );
      namespace = await createNamespace(c, 'df-soak');
      const web = makeDeployment(namespace, 'web', REPLICAS);
      web.spec!.template.spec!.nodeSelector = pool;
      await c.apps.createNamespacedDeployment({ namespace, body: web });
      await waitPodsReady(c, namespace, { app: 'web' }, REPLICAS);
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace,
        body: makePdb(namespace, 'web', { app: 'web' }, { minAvailable: MIN_AVAILABLE }),
      });
      await waitPdb(c, namespace, 'web', (p) => p.status?.currentHealthy === REPLICAS);

      // The PDB, sampled until the plans are gone.
      const ns = namespace;
      let sampling = true;
      const samples: Array<{ current: number; desired: number }> = [];
      const sampler = (async () => {
        while (sampling) {
          const p = await c.policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: ns });
          samples.push({ current: p.status?.currentHealthy ?? 0, desired: p.status?.desiredHealthy ?? 0 });
          await sleep(100);
        }
      })();

      const t0 = Date.now();
      let created = 0;
      const lifetimes: number[] = [];
      const deletions: number[] = [];
      const slot = async () => {
        while (created < PLANS) {
          const i = created++;
          const count = rand() < 0.5 ? 1 : 2;
          const picked = new Set<string>();
          while (picked.size < count) picked.add(nodes[Math.floor(rand() * NODES)]!);
          const name = `${run}-${i}`;
          const lifetime = 1000 + Math.floor(rand() * 5000);
          await createPlanObject(c, name, { nodeNames: [...picked] }, { [RUN_LABEL]: run });
          await sleep(lifetime); // the scenario: deleted at a random moment of its drain
          lifetimes.push(lifetime);
          const d0 = Date.now();
          await c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name });
          await waitFor(
            async () =>
              !(await c.custom
                .getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
                .then(() => true)
                .catch(() => false)),
            120_000,
            { what: `plan ${name} deletion completed` },
          );
          deletions.push(Date.now() - d0);
        }
      };
      await Promise.all(Array.from({ length: ALIVE }, slot));
      const soakMs = Date.now() - t0;
      sampling = false;
      await sampler;

      assert.deepEqual(await listPlans(), [], 'no plan left');
      for (const n of nodes) {
        const node = await c.core.readNode({ name: n });
        const ann = node.metadata?.annotations ?? {};
        assert.deepEqual(
          [
            node.spec?.unschedulable === true,
            ann[NODE_CLAIM_ANNOTATION],
            ann[NODE_CLAIM_UID_ANNOTATION],
            ann[NODE_WAS_UNSCHEDULABLE_ANNOTATION],
          ],
          [false, undefined, undefined, undefined],
          `node ${n}: not cordoned, not claimed`,
        );
      }
      const runningIds: string[] = [];
      for await (const wf of client.workflow.list({
        query: `TaskQueue = "${run}" AND ExecutionStatus = "Running"`,
      }))
        runningIds.push(wf.workflowId);
      assert.deepEqual(runningIds, [], 'no workflow of the run still running');
      const below = samples.filter((s) => s.current < s.desired);
      assert.deepEqual(below, [], `PDB never below desiredHealthy (${samples.length} samples)`);
      const minMargin = Math.min(...samples.map((s) => s.current - s.desired));
      deletions.sort((a, b) => a - b);
      console.log(
        `soak: ${PLANS} plans in ${soakMs} ms; deletion completed in median ${deletions[deletions.length >> 1]} ms, max ${deletions.at(-1)} ms; PDB ${samples.length} samples, min currentHealthy - desiredHealthy ${minMargin}`,
      );
    },
  );
});
