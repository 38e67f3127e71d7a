// test-lane: parallel
/**
 * onDeadline SkipNode and the whole-plan `spec.release`, through the operator (issue 31): a
 * MaintenancePlan written with kubectl, the operator starting its workflow, and the release a
 * `kubectl patch` of `spec.release` that the operator relays (no signal sent by the test).
 *
 * One plan of three kwok nodes of this file, one at a time (maxUnavailableNodes 1), a node's
 * deadline 10 s (nodeDrainTimeoutSeconds: room for one eviction on a loaded host, where 5 s was
 * not), uncordon OnRelease:
 * - `stuck`: one pod behind a PodDisruptionBudget with minAvailable 1 (1 replica), never evictable:
 *   at its deadline it is handed back undrained (uncordoned, its claim removed, the pod left on
 *   it), reported Skipped/SkippedAtDeadline with one NodeSkipped Warning, and frees its slot;
 * - `free`: one evictable pod: drained after `stuck` is skipped, and kept cordoned and claimed
 *   (Drained) until the release;
 * - `down`: unschedulable before the plan, no pod: drained, and never uncordoned by the plan.
 * The plan ends Blocked/NodesSkipped; then `kubectl patch mp … spec.release: true` hands `free` and
 * `down` back per uncordon OnRelease (`free` uncordoned, `down` left unschedulable, both claims
 * removed) and the plan ends Completed/Released.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 * Isolation: a unique task queue and run label, the operator's Lease in a namespace of its own,
 * three tainted kwok nodes of this file (only this file's pods tolerate the taint).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { NODE_CLAIM_ANNOTATION, type MaintenancePlan } from '../../src/api/plan.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  uniqueName,
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { OperatorHarness, createTaintedNode, kubectl } from '../helpers/operator-harness.js';

const TAINT_KEY = 'drainflow.dev/e2e-skip-release';

describe('SkipNode and spec.release through the operator', () => {
  const run = uniqueName('skip-release');
  const h = new OperatorHarness({
    taskQueue: uniqueName('skip-release-e2e'),
    run,
    lease: { create: 'df-skrel-lease' },
  });
  let c: Clients;
  let ns = '';
  const nodes = { stuck: '', free: '', down: '' };

  /** `unschedulable` and the claim annotation of a node. */
  async function handedOut(name: string): Promise<{ cordoned: boolean; claim: string | undefined }> {
    const n: V1Node = await c.core.readNode({ name });
    return {
      cordoned: n.spec?.unschedulable === true,
      claim: n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION],
    };
  }

  /** A Deployment `app` of one pod on `node` (it tolerates the file's taint). */
  async function podOn(app: string, node: string): Promise<void> {
    const d = makeDeployment(ns, app, 1, { hostname: node });
    d.spec!.template.spec!.tolerations = [
      { key: TAINT_KEY, operator: 'Equal', value: run, effect: 'NoSchedule' },
    ];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    await waitPodsReady(c, ns, { app }, 1);
  }

  before(async () => {
    await h.connect();
    c = h.c;
    const processes = h.startProcesses();
    const fixture = (async () => {
      ns = await createNamespace(c, 'df-skrel');
      const taint = { key: TAINT_KEY, value: run };
      [nodes.stuck, nodes.free, nodes.down] = await Promise.all([
        createTaintedNode(c, 'df-skrel-stuck', { taint }),
        createTaintedNode(c, 'df-skrel-free', { taint }),
        createTaintedNode(c, 'df-skrel-down', { taint, unschedulable: true }),
      ]);
      await Promise.all([podOn('stuck', nodes.stuck), podOn('free', nodes.free)]);
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: makePdb(ns, 'stuck', { app: 'stuck' }, { minAvailable: 1 }),
      });
      await waitPdb(c, ns, 'stuck', (p) => p.status?.currentHealthy === 1);
    })();
    const results = await Promise.allSettled([processes, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    await h.removePlans(30_000);
    await h.stop();
    if (c) {
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      for (const n of Object.values(nodes)) if (n) await deleteNode(c, n).catch(() => undefined);
    }
  });

  it('skips the blocked node at its deadline, drains the others, and the release hands them back', async () => {
    const name = uniqueName('skrel');
    h.applyPlan(name, {
      nodeNames: [nodes.stuck, nodes.free, nodes.down],
      onDeadline: 'SkipNode',
      nodeDrainTimeoutSeconds: 10,
      drainTimeoutSeconds: 120,
      uncordon: 'OnRelease',
    });
    const final = (p: MaintenancePlan) => !['Pending', 'Running'].includes(p.status?.phase ?? 'Pending');
    const settled = await h.waitPlan(name, final, 60_000, 'settled');
    const st = settled.status!;
    const show = JSON.stringify(st, null, 1);
    assert.equal(st.phase, 'Blocked', show);
    assert.equal(st.reason, 'NodesSkipped', show);
    const byName = new Map((st.nodes ?? []).map((n) => [n.name, n]));
    assert.deepEqual(
      [nodes.stuck, nodes.free, nodes.down].map((n) => `${byName.get(n)?.phase}/${byName.get(n)?.reason}`),
      ['Skipped/SkippedAtDeadline', 'Drained/Drained', 'Drained/Drained'],
      show,
    );
    // The skipped node is handed back undrained; the drained ones stay held until the release.
    assert.deepEqual(
      await handedOut(nodes.stuck),
      { cordoned: false, claim: undefined },
      'the skipped node handed back: uncordoned, its claim removed',
    );
    const stuckPods = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=stuck' })).items;
    assert.deepEqual(
      stuckPods.map((p) => [p.spec?.nodeName, p.metadata?.deletionTimestamp]),
      [[nodes.stuck, undefined]],
      'the guarded pod stays on the skipped node',
    );
    const freePods = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=free' })).items;
    assert.ok(
      freePods.every((p) => p.spec?.nodeName !== nodes.free || p.metadata?.deletionTimestamp),
      'the free node was drained',
    );
    for (const n of [nodes.free, nodes.down]) {
      const held = await handedOut(n);
      assert.equal(held.cordoned, true, `${n} cordoned until the release`);
      assert.ok(held.claim, `${n} claimed until the release`);
    }
    const events = await h.planEvents(name, settled.metadata.uid!);
    const skipped = events.filter((e) => e.reason === 'NodeSkipped');
    assert.deepEqual(
      skipped.map((e) => [e.type, e.count ?? 1]),
      [['Warning', 1]],
      'one NodeSkipped Warning',
    );
    assert.match(skipped[0]!.message ?? '', new RegExp(nodes.stuck));

    // The release, as a user writes it: the operator relays it to the workflow.
    kubectl(['patch', 'mp', name, '--type', 'merge', '-p', JSON.stringify({ spec: { release: true } })]);
    const released = await h.waitPlan(name, (p) => p.status?.phase === 'Completed', 30_000, 'Completed');
    assert.equal(released.status?.reason, 'Released', JSON.stringify(released.status, null, 1));
    assert.deepEqual(
      await handedOut(nodes.free),
      { cordoned: false, claim: undefined },
      'uncordoned (OnRelease)',
    );
    assert.deepEqual(
      await handedOut(nodes.down),
      { cordoned: true, claim: undefined },
      'unschedulable before the plan: left so',
    );
    assert.deepEqual(await handedOut(nodes.stuck), { cordoned: false, claim: undefined });
  });
});
