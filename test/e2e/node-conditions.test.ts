// test-lane: parallel
/**
 * The node lifecycle conditions on the real stack (issue 35): while a plan holds a node, the Node
 * carries MaintenancePlanned / DrainInProgress / Drained (KEP-5683) naming the plan; they are gone
 * after the hand-back (spec.release, a release while the operator is down, the plan's deletion);
 * a node outside the plan, or held by another plan, never gets this plan's conditions; the
 * kubelet's (kwok's) conditions and another writer's stay.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`. Without
 * KUBECONFIG / TEMPORAL_ADDRESS every test fails with that instruction; none is skipped.
 *
 * Isolation: a unique task queue and run label, the operator's Lease in a namespace of its own,
 * three tainted kwok nodes of this file (pods of this file tolerate the taint), deleted at the end.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { V1Deployment, V1NodeCondition, V1PodSpec } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { NODE_CLAIM_ANNOTATION, type MaintenancePlan } from '../../src/api/plan.js';
import { planWorkflowId } from '../../src/contract/names.js';
import { releaseSignal } from '../../src/contract/plan-messages.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  setUnschedulable,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { OperatorHarness, createTaintedNode } from '../helpers/operator-harness.js';

const POOL_LABEL = 'drainflow.dev/pool';
const TAINT_KEY = 'drainflow.dev/e2e-node-conditions';
const LIFECYCLE = ['MaintenancePlanned', 'DrainInProgress', 'Drained'];
const SMP = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** Another writer's condition, set before the plan: it must stay through the drain and the hand-back. */
const VENDOR: V1NodeCondition = {
  type: 'ExampleVendorHealthy',
  status: 'True',
  reason: 'ProbeSucceeded',
  message: 'set by the test',
};

describe('node lifecycle conditions on the real stack', () => {
  const pool = uniqueName('nc-pool');
  const h = new OperatorHarness({
    taskQueue: uniqueName('node-conditions-e2e'),
    run: pool,
    lease: { create: 'df-nc-lease' },
  });
  let c: Clients;
  let ns: string;
  let nodes: [string, string, string];

  /** The node's conditions, by type. */
  async function conditions(node: string): Promise<Map<string, V1NodeCondition>> {
    const n = await c.core.readNode({ name: node });
    return new Map((n.status?.conditions ?? []).map((x) => [x.type, x]));
  }

  /** `Type=Status/Reason` of the node's lifecycle conditions, in type order. */
  async function lifecycle(node: string): Promise<string[]> {
    const m = await conditions(node);
    return LIFECYCLE.filter((t) => m.has(t)).map((t) => `${t}=${m.get(t)!.status}/${m.get(t)!.reason}`);
  }

  function onPool(d: V1Deployment, prefer: string): V1Deployment {
    const spec = d.spec!.template.spec as V1PodSpec;
    spec.tolerations = [{ key: TAINT_KEY, operator: 'Equal', value: pool, effect: 'NoSchedule' }];
    spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: POOL_LABEL, operator: 'In', values: [pool] }] }],
        },
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            preference: {
              matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [prefer] }],
            },
          },
        ],
      },
    };
    return d;
  }

  /** 6 pods on node `a` behind a PDB of maxUnavailable 1, replacements Ready after 2 s: the drain takes a while. */
  async function slowPodsOn(a: string): Promise<void> {
    const others = nodes.filter((n) => n !== a);
    for (const n of others) await setUnschedulable(c, n, true);
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: onPool(makeDeployment(ns, 'slow', 6, { readyDelay: '2s' }), a),
    });
    await waitPodsReady(c, ns, { app: 'slow' }, 6, 90_000);
    for (const n of others) await setUnschedulable(c, n, false);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'slow', { app: 'slow' }, { maxUnavailable: 1 }),
    });
    await waitPdb(c, ns, 'slow', (p) => (p.status?.disruptionsAllowed ?? 0) >= 1);
  }

  const phaseIs =
    (...phases: string[]) =>
    (p: MaintenancePlan) =>
      phases.includes(p.status?.phase ?? '');

  before(async () => {
    await h.connect();
    c = h.c;
    const made: string[] = [];
    for (let i = 0; i < 3; i++)
      made.push(
        await createTaintedNode(c, 'df-nc-node', {
          labels: { [POOL_LABEL]: pool },
          taint: { key: TAINT_KEY, value: pool },
        }),
      );
    nodes = made as [string, string, string];
    ns = await createNamespace(c, 'df-nc');
    await h.startProcesses();
  });

  afterEach(async () => {
    await h.removePlans(60_000);
    await c.apps.deleteCollectionNamespacedDeployment({ namespace: ns }).catch(() => undefined);
    await c.policy.deleteCollectionNamespacedPodDisruptionBudget({ namespace: ns }).catch(() => undefined);
    for (const n of nodes) await setUnschedulable(c, n, false).catch(() => undefined);
  });

  after(async () => {
    await h.stop();
    if (ns) await deleteNamespace(c, ns);
    for (const n of nodes ?? []) await deleteNode(c, n).catch(() => undefined);
  });

  it('present while the node is drained and drained (naming the plan), gone after spec.release; the other nodes never get them', async () => {
    const [a, , free] = nodes;
    await c.core.patchNodeStatus({ name: a, body: { status: { conditions: [VENDOR] } } }, SMP);
    await slowPodsOn(a);

    const name = uniqueName('nc-release');
    h.applyPlan(name, { nodeNames: [a], uncordon: 'OnRelease' });
    const seen = new Set<string>();
    const done = await waitFor(
      async () => {
        const [here, there, plan] = await Promise.all([lifecycle(a), lifecycle(free), h.getPlan(name)]);
        seen.add(here.join(' '));
        assert.deepEqual(there, [], `${free} is not in the plan: no lifecycle condition`);
        return plan && phaseIs('Drained', 'Blocked', 'Failed')(plan) ? plan : undefined;
      },
      120_000,
      { what: `${name} drained`, intervalMs: 200 },
    );
    assert.equal(done.status?.phase, 'Drained', `${done.status?.reason}: ${done.status?.message}`);
    assert.ok(
      seen.has(
        'MaintenancePlanned=True/PlanHoldsNode DrainInProgress=True/DrainRunning Drained=False/DrainNotCompleted',
      ),
      `DrainInProgress True was seen while draining; seen: ${[...seen].join(' | ')}`,
    );
    const drained = await waitFor(
      async () => {
        const m = await conditions(a);
        return m.get('Drained')?.status === 'True' ? m : undefined;
      },
      20_000,
      { what: `${a} Drained=True` },
    );
    assert.deepEqual(await lifecycle(a), [
      'MaintenancePlanned=True/PlanHoldsNode',
      'DrainInProgress=False/DrainCompleted',
      'Drained=True/DrainCompleted',
    ]);
    for (const t of LIFECYCLE)
      assert.match(drained.get(t)!.message ?? '', new RegExp(`^MaintenancePlan ${name}: `));
    assert.equal(drained.get('Ready')?.status, 'True', "kwok's Ready stays");
    assert.deepEqual(
      { ...drained.get(VENDOR.type), lastHeartbeatTime: undefined, lastTransitionTime: undefined },
      { ...VENDOR, lastHeartbeatTime: undefined, lastTransitionTime: undefined },
      "another writer's condition stays",
    );

    h.applyPlan(name, { nodeNames: [a], uncordon: 'OnRelease', release: true });
    await h.waitPlan(name, phaseIs('Completed'), 60_000, 'Completed after the release');
    const after = await conditions(a);
    assert.deepEqual(await lifecycle(a), [], 'no lifecycle condition after the hand-back');
    assert.equal(
      after.get(VENDOR.type)?.status,
      'True',
      "another writer's condition stays after the hand-back",
    );
    assert.equal(after.get('Ready')?.status, 'True');
    assert.deepEqual(await lifecycle(free), []);
  });

  it('gone after a release the worker hands back while the operator is down', async () => {
    const [, b] = nodes;
    const name = uniqueName('nc-opdown');
    h.applyPlan(name, { nodeNames: [b], uncordon: 'OnRelease' });
    const plan = await h.waitPlan(name, phaseIs('Drained'), 60_000, 'Drained');
    await waitFor(async () => (await lifecycle(b)).includes('Drained=True/DrainCompleted'), 20_000, {
      what: `${b} Drained=True`,
    });
    await h.operator!.stop('SIGTERM');
    try {
      // What the operator would relay on spec.release, sent straight to the workflow.
      await h.client.workflow
        .getHandle(planWorkflowId({ name, uid: plan.metadata.uid }))
        .signal(releaseSignal, {});
      await waitFor(
        async () =>
          (await c.core.readNode({ name: b })).metadata?.annotations?.[NODE_CLAIM_ANNOTATION] === undefined,
        60_000,
        { what: `${b} handed back` },
      );
      assert.deepEqual(await lifecycle(b), [], 'removed by the hand-back itself');
    } finally {
      h.operator = await h.startOperator();
    }
  });

  it("plan deletion removes them; a node held by another plan carries that plan's conditions only", async () => {
    const [, b] = nodes;
    const first = uniqueName('nc-first');
    const second = uniqueName('nc-second');
    h.applyPlan(first, { nodeNames: [b] });
    await h.waitPlan(first, phaseIs('Drained'), 60_000, 'Drained');
    h.applyPlan(second, { nodeNames: [b] });
    await h.waitPlan(
      second,
      (p) => p.status?.nodes?.[0]?.phase === 'Waiting',
      60_000,
      'its node Waiting (held by the first plan)',
    );
    const held = await waitFor(
      async () => {
        const m = await conditions(b);
        return m.get('Drained')?.status === 'True' ? m : undefined;
      },
      20_000,
      { what: `${b} Drained=True` },
    );
    for (const t of LIFECYCLE)
      assert.match(held.get(t)!.message ?? '', new RegExp(`^MaintenancePlan ${first}: `));

    // The first plan deleted: its hand-back removes its conditions; the second claims the node and writes its own.
    await h.deletePlan(first);
    await h.waitPlan(second, phaseIs('Drained'), 60_000, 'Drained after the first plan handed the node back');
    const mine = await waitFor(
      async () => {
        const m = await conditions(b);
        const msg = m.get('Drained')?.message ?? '';
        return msg.startsWith(`MaintenancePlan ${second}: `) && m.get('Drained')?.status === 'True'
          ? m
          : undefined;
      },
      20_000,
      { what: `${b} carries the second plan's conditions` },
    );
    for (const t of LIFECYCLE) assert.doesNotMatch(mine.get(t)!.message ?? '', new RegExp(`${first}:`));

    await h.deletePlan(second);
    assert.deepEqual(await lifecycle(b), [], 'no lifecycle condition after the deletion');
  });
});
