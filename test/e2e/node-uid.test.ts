// test-lane: parallel
/**
 * A node deleted and created again under the same name mid-drain, end to end on the real stack
 * (kube-apiserver, controller-manager, scheduler, kwok, Temporal dev server, one `drainflow run`
 * process: operator and worker). Nodes are identified by UID: the claimed Node ends
 * Deleted/NodeDeleted, and the new one is neither drained nor handed back (uncordoned) by the plan.
 *
 * Each case holds a plan Running on a kwok node whose two pods wait behind a PDB that allows no
 * eviction, then deletes the Node object and creates one under its name. In the first two cases
 * this happens while the `drainflow run` process is stopped, so that the drain's first look after
 * its restart sees the new Node and never the gap between the two (a drain that sees the gap ends
 * Deleted as before):
 *
 * - from the saved manifest (annotations and `spec.unschedulable` kept, as a restore from a backup
 *   or `kubectl get node -o yaml` + delete + create does): the new Node carries a copy of the
 *   plan's claim and cordon. Deleting the plan must leave it as it is (cordoned, copy untouched);
 * - the same, with the plan's workflow terminated first: the operator hands back without a
 *   workflow, and must not take the copied claim for the plan's;
 * - a fresh Node (no claim, schedulable): the drain ends Deleted instead of Blocked on a node it
 *   takes for uncordoned by someone else.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 * Isolation: its own kwok nodes (pool label), namespaces, task queue, plan selector and Lease.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import {
  GROUP,
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_NODE_UID_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  PLURAL,
  VERSION,
  type MaintenancePlan,
} from '../../src/api/plan.js';
import { NodeReason } from '../../src/api/reasons.js';
import { uniqueName, waitFor, type Clients } from '../helpers/k8s.js';
import { stackClients } from '../helpers/operator-harness.js';
import { startRunProcess, type DrainflowProcess } from '../helpers/processes.js';
import { blockedPlan, type BlockedPlan } from './cli-fixtures.js';

const RUN_LABEL = 'drainflow.dev/e2e-node-uid';
const CLAIM_KEYS = [
  NODE_CLAIM_ANNOTATION,
  NODE_CLAIM_UID_ANNOTATION,
  NODE_WAS_UNSCHEDULABLE_ANNOTATION,
  NODE_CLAIM_NODE_UID_ANNOTATION,
];

describe('a node deleted and created again under the same name mid-drain', () => {
  let c: Clients;
  let connection: Connection;
  let client: Client;
  let proc: DrainflowProcess | undefined;
  const plans: BlockedPlan[] = [];
  const run = uniqueName('nodeuid');
  const start = () => startRunProcess({ run, label: RUN_LABEL, args: ['--resync-seconds', '1'] });

  before(async () => {
    c = await stackClients();
    connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
    proc = await start();
  });

  after(async () => {
    for (const p of plans.reverse()) await p.cleanup();
    await proc?.stop('SIGTERM');
    await connection?.close();
  });

  const readPlan = async (name: string) =>
    (await c.custom
      .getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
      .catch(() => undefined)) as MaintenancePlan | undefined;
  const deletePlan = async (name: string) => {
    await c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name });
    await waitFor(async () => !(await readPlan(name)), 60_000, { what: `plan ${name} deleted` });
  };
  const claimOf = (n: V1Node) => Object.fromEntries(CLAIM_KEYS.map((k) => [k, n.metadata?.annotations?.[k]]));
  const podUids = async (ns: string) =>
    (await c.core.listNamespacedPod({ namespace: ns })).items
      .map((p: V1Pod) => `${p.metadata?.name}/${p.metadata?.uid}`)
      .sort();

  /**
   * Deletes the Node and creates one under its name at once: from `manifest` (the saved Node, its
   * uid, resourceVersion and creationTimestamp dropped) or fresh (kwok's annotation and the labels).
   * @returns the new Node.
   */
  async function recreate(name: string, keepManifest: boolean): Promise<{ old: V1Node; now: V1Node }> {
    const old = await c.core.readNode({ name });
    const meta = old.metadata!;
    const body: V1Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: meta.labels,
        annotations: keepManifest
          ? meta.annotations
          : { 'kwok.x-k8s.io/node': meta.annotations?.['kwok.x-k8s.io/node'] ?? 'fake' },
      },
      spec: keepManifest ? { unschedulable: old.spec?.unschedulable } : {},
    };
    await c.core.deleteNode({ name });
    await waitFor(async () => !(await c.core.readNode({ name }).catch(() => undefined)), 30_000, {
      what: `node ${name} gone`,
      intervalMs: 20,
    });
    const now = await c.core.createNode({ body });
    assert.notEqual(now.metadata?.uid, meta.uid, 'the API server gives the new Node a new uid');
    return { old, now };
  }

  /** Waits until the plan reports its node's end; @returns that node's status. */
  async function nodeEnded(name: string) {
    return waitFor(
      async () => {
        const n = (await readPlan(name))?.status?.nodes?.[0];
        return n && ['Deleted', 'Drained', 'Blocked', 'Failed', 'Aborted'].includes(n.phase) ? n : undefined;
      },
      60_000,
      { what: `plan ${name}: its node ended`, intervalMs: 200 },
    );
  }

  /** The plan's Warning Events of `reason` (the operator writes them in `default`). */
  const planEvents = async (plan: MaintenancePlan, reason: string) =>
    (
      await c.core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.uid=${plan.metadata.uid},reason=${reason}`,
      })
    ).items;

  for (const keepManifest of [true, false])
    it(`${keepManifest ? 'from its saved manifest (claim and cordon copied)' : 'fresh (no claim, schedulable)'}: the old node ends Deleted, the new one is not drained nor handed back`, async () => {
      const bp = await blockedPlan(c, 'nuid', { [RUN_LABEL]: run });
      plans.push(bp);
      const plan = (await bp.read())!;
      const podsBefore = await podUids(bp.namespace);
      await proc!.stop('SIGTERM');
      proc = undefined;
      const { old, now } = await recreate(bp.node, keepManifest);
      const t0 = Date.now();
      proc = await start();

      const n = await nodeEnded(bp.name);
      const seconds = (Date.now() - t0) / 1000;
      assert.equal(n.phase, 'Deleted', JSON.stringify(n));
      assert.equal(n.reason, NodeReason.NodeDeleted);
      assert.match(n.message ?? '', /created again under its name/);
      assert.ok(n.message?.includes(now.metadata!.uid!), n.message);
      const [ev] = await waitFor(
        async () => {
          const e = await planEvents(plan, NodeReason.NodeDeleted);
          return e.length ? e : undefined;
        },
        30_000,
        { what: 'the NodeDeleted Warning' },
      );
      assert.equal(ev!.type, 'Warning');
      assert.match(ev!.message ?? '', /created again under its name/);
      // The pods still bound to the name were not evicted (the pod garbage collector leaves pods of
      // a Node that is back within its quarantine).
      assert.deepEqual(await podUids(bp.namespace), podsBefore);

      const before = await c.core.readNode({ name: bp.node });
      await deletePlan(bp.name);
      const after = await c.core.readNode({ name: bp.node });
      assert.equal(after.metadata?.uid, now.metadata?.uid);
      assert.equal(after.spec?.unschedulable === true, keepManifest, 'the new node keeps its own cordon');
      assert.deepEqual(claimOf(after), claimOf(before), 'the copy of the claim is left as it is');
      if (keepManifest) assert.equal(claimOf(after)[NODE_CLAIM_NODE_UID_ANNOTATION], old.metadata?.uid);
      console.log(
        `re-created ${keepManifest ? 'from its manifest' : 'fresh'}: node ${n.phase}/${n.reason} after ${seconds.toFixed(1)} s; ` +
          `after the plan's deletion the new node is ${after.spec?.unschedulable ? 'cordoned (its own copy)' : 'schedulable'}`,
      );
    });

  it("the operator's hand-back without a workflow leaves a node re-created from its manifest alone", async () => {
    const bp = await blockedPlan(c, 'nuidop', { [RUN_LABEL]: run });
    plans.push(bp);
    const plan = (await bp.read())!;
    const workflowId = plan.status!.workflow!.workflowId;
    await client.workflow.getHandle(workflowId).terminate('test: a workflow gone');
    // The operator sees the closed workflow; the node workflow it left running is stopped at the
    // deletion. Re-create the node before that, then delete the plan.
    const { old } = await recreate(bp.node, true);
    await deletePlan(bp.name);
    const after = await c.core.readNode({ name: bp.node });
    assert.equal(after.spec?.unschedulable, true, 'not uncordoned by the hand-back');
    assert.equal(claimOf(after)[NODE_CLAIM_ANNOTATION], bp.name, 'the copy of the claim is left as it is');
    assert.equal(claimOf(after)[NODE_CLAIM_NODE_UID_ANNOTATION], old.metadata?.uid);
  });
});
