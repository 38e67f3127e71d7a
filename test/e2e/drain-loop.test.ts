// test-lane: parallel
/**
 * The level-triggered node drain (src/drain/node/) end to end on the real stack: the plan's
 * drain reacts to what happens to the cluster while it runs, as the loop's rules say.
 *
 * 1. An externally uncordoned node gets no eviction and is never Drained while schedulable; cordoned
 *    again, it drains.
 * 2. A node deleted mid-drain ends Deleted/NodeDeleted; the plan finishes and can be deleted.
 * 3. A blocker that goes away (the second of two PDBs over a pod) lets the node drain, same plan.
 * 4. maxUnavailableNodes holds for the whole run; at the deadline the nodes never started are
 *    reported.
 * 5. Pods queued behind a PDB whose namespace is deleted count as gone, not as blockers.
 *
 * The operator and the worker run as real `drainflow run` processes against kube-apiserver +
 * kube-controller-manager + kwok and the Temporal dev server; plans are written with kubectl and
 * read back through the API (status, core Events whose involvedObject is the plan) and kubectl.
 *
 * Isolation (other engineers run e2e tests on the same cluster at the same time): a unique task
 * queue; the operator acts only on plans labelled for this run (`--plan-selector`) and takes its
 * Lease in a namespace of its own; every test creates its own kwok nodes (`dl-*`, tainted so no
 * other pod lands there) and namespaces (`dl-*`), and its pods are bare pods bound to those nodes
 * by nodeName (no scheduler, no replacements). Plans, their Events, nodes and namespaces are
 * deleted after each test.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`. Without
 * KUBECONFIG / TEMPORAL_ADDRESS every test fails with that instruction; none is skipped.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { CoreV1Event, V1Node } from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  NODE_CLAIM_ANNOTATION,
  type MaintenancePlan,
  type MaintenancePlanSpecInput,
  type NodeStatus,
} from '../../src/api/plan.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import type { NodeProgress } from '../../src/contract/progress.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  ignoreNotFound,
  makePdb,
  makePod,
  sleep,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodReady,
  type Clients,
} from '../helpers/k8s.js';
import {
  MERGE_PATCH,
  OperatorHarness,
  RUN_LABEL,
  createTaintedNode,
  kubectl,
} from '../helpers/operator-harness.js';
import { showStatus } from '../helpers/direct-plan.js';

const TAINT_KEY = 'drainflow.dev/e2e-drain-loop';
/** Short backoff so cooldowns and observation bounds stay within a few seconds. */
const FAST_EVICTION = { retryBackoff: { initialSeconds: 1, maxSeconds: 5 } };

const show = showStatus;

describe('level-triggered drain loop on the real stack', () => {
  const run = uniqueName('dl-run');
  const h = new OperatorHarness({
    taskQueue: uniqueName('dl-e2e'),
    run,
    lease: { create: 'dl-lease' },
    pollMs: 200,
  });
  let c: Clients;
  let client: Client;
  /** Nodes and namespaces of the current test (deleted after it). */
  let testNodes: string[] = [];
  let testNamespaces: string[] = [];

  // ------------------------------------------------------------------ helpers

  /** A kwok node `dl-node-*` for this test only: tainted, so only this file's bare pods run there. */
  async function newNode(): Promise<string> {
    const node = await createTaintedNode(c, 'dl-node', {
      labels: { [RUN_LABEL]: run },
      taint: { key: TAINT_KEY, value: run },
    });
    testNodes.push(node);
    return node;
  }

  async function newNamespace(): Promise<string> {
    const ns = await createNamespace(c, 'dl');
    testNamespaces.push(ns);
    return ns;
  }

  /** Bare pods (no controller) bound to `node`, Ready; labelled `app=<app>`. */
  async function barePods(ns: string, node: string, app: string, count: number): Promise<string[]> {
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const name = `${app}-${i}`;
      await c.core.createNamespacedPod({
        namespace: ns,
        body: makePod(ns, name, { nodeName: node, labels: { app } }),
      });
      names.push(name);
    }
    for (const name of names) await waitPodReady(c, ns, name);
    return names;
  }

  /** Pods bound to `node` (all namespaces), terminating ones included. */
  async function podsOn(node: string): Promise<string[]> {
    const list = await c.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
    return list.items.map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`).sort();
  }

  const applyPlan = (name: string, spec: MaintenancePlanSpecInput) => h.applyPlan(name, spec);
  const getPlan = (name: string) => h.getPlan(name);
  const deletePlanObject = (name: string) => h.deletePlanObject(name);
  const waitPlanGone = (name: string, timeoutMs: number) => h.waitPlanGone(name, timeoutMs);
  /** Waits until `pred` holds for the plan; the error shows the last status. */
  const waitPlan = (
    name: string,
    pred: (p: MaintenancePlan) => boolean,
    timeoutMs: number,
    what: string,
    onEach?: (p: MaintenancePlan) => void,
  ) => h.waitPlan(name, pred, timeoutMs, what, onEach);

  const nodeOf = (p: MaintenancePlan | undefined, node: string): NodeStatus | undefined =>
    p?.status?.nodes?.find((n) => n.name === node);

  /** The core Events whose involvedObject is the plan (its uid). */
  const planEvents = (plan: MaintenancePlan): Promise<CoreV1Event[]> =>
    h.planEvents(plan.metadata.name, plan.metadata.uid);

  async function waitEvent(plan: MaintenancePlan, type: string, reason: string): Promise<CoreV1Event> {
    let seen: CoreV1Event[] = [];
    try {
      return await waitFor(
        async () => {
          seen = await planEvents(plan);
          return seen.find((e) => e.type === type && e.reason === reason);
        },
        15_000,
        { what: `${type} Event ${reason} on plan ${plan.metadata.name}`, intervalMs: 250 },
      );
    } catch (err) {
      throw new Error(
        `${String(err)}\nevents: ${JSON.stringify(seen.map((e) => [e.type, e.reason, e.message]))}`,
        { cause: err },
      );
    }
  }

  async function readNode(name: string): Promise<V1Node | undefined> {
    return ignoreNotFound(() => c.core.readNode({ name }));
  }

  /** The final report of a node's drain workflow (its result). */
  async function nodeResult(plan: MaintenancePlan, node: string): Promise<NodeProgress> {
    const wf = planWorkflowId({ name: plan.metadata.name, uid: plan.metadata.uid });
    return (await client.workflow.getHandle(nodeWorkflowId(wf, node)).result()) as NodeProgress;
  }

  /** Whether a drain workflow was ever started for the node. */
  async function nodeWorkflowExists(plan: MaintenancePlan, node: string): Promise<boolean> {
    const wf = planWorkflowId({ name: plan.metadata.name, uid: plan.metadata.uid });
    try {
      await client.workflow.getHandle(nodeWorkflowId(wf, node)).describe();
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  // ------------------------------------------------------------------ setup

  before(async () => {
    await h.connect(); // fails with the setup instructions when KUBECONFIG is unset
    c = h.c;
    client = h.client;
    await h.startProcesses();
  });

  /** After each test, whatever its outcome: its plans (through the operator, else forced), namespaces, nodes. */
  async function cleanUp(): Promise<void> {
    await h.removePlans(30_000);
    for (const ns of testNamespaces) await deleteNamespace(c, ns).catch(() => undefined);
    for (const n of testNodes) await deleteNode(c, n).catch(() => undefined);
    testNamespaces = [];
    testNodes = [];
  }

  afterEach(cleanUp);

  after(async () => {
    if (c) await cleanUp();
    await h.stop();
  });

  // ------------------------------------------------------------------ tests

  it('external uncordon mid-drain: Blocked/NodeUncordonedExternally, no eviction while schedulable; cordoned again it drains', async () => {
    const node = await newNode();
    const ns = await newNamespace();
    await barePods(ns, node, 'guarded', 2);
    // minAvailable = every pod: the PDB allows no disruption, so the drain waits behind it.
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'guarded', { app: 'guarded' }, { minAvailable: 2 }),
    });
    await waitPdb(
      c,
      ns,
      'guarded',
      (p) => p.status?.currentHealthy === 2 && p.status.disruptionsAllowed === 0,
    );

    const name = uniqueName('dl-uncordon');
    applyPlan(name, {
      nodeNames: [node],
      drainTimeoutSeconds: 180,
      podSelection: { force: true },
      eviction: FAST_EVICTION,
    });
    // Draining, both pods waiting for the PDB, the node cordoned by the plan.
    const draining = await waitPlan(
      name,
      (p) => {
        const n = nodeOf(p, node);
        return (
          n?.phase === 'Draining' &&
          (n.blockedBy ?? []).filter((b) => b.reason === 'DisruptionBudget').length === 2
        );
      },
      60_000,
      'node Draining, 2 pods waiting for the PDB',
    );
    assert.equal((await readNode(node))?.spec?.unschedulable, true, 'the plan cordoned the node');
    assert.equal(draining.status!.evictionProgress!.attempts, 0, show(draining.status));

    // Sample from the uncordon on: while the node is schedulable no pod may leave, no call go out,
    // and the node never be Drained.
    let schedulable = true;
    const violations: string[] = [];
    let samples = 0;
    const checkSchedulable = (p: MaintenancePlan) => {
      if (!schedulable) return;
      samples++;
      const n = nodeOf(p, node);
      if (n?.phase === 'Drained') violations.push(`Drained while schedulable: ${show(p.status)}`);
      if ((p.status?.evictionProgress?.attempts ?? 0) > 0)
        violations.push(`eviction attempted while schedulable: ${show(p.status)}`);
      if ((n?.podsEvicted ?? 0) > 0)
        violations.push(`pod counted evicted while schedulable: ${show(p.status)}`);
    };
    const uncordonedAt = Date.now();
    kubectl(['uncordon', node]);
    const blocked = await waitPlan(
      name,
      (p) => nodeOf(p, node)?.phase === 'Blocked' && p.status?.reason === 'NodeUncordonedExternally',
      15_000,
      'node Blocked, plan reason NodeUncordonedExternally',
      checkSchedulable,
    );
    const reactionMs = Date.now() - uncordonedAt;
    assert.equal(blocked.status!.phase, 'Running', show(blocked.status));
    const cond = blocked.status!.conditions!.find((x) => x.type === 'Blocked');
    assert.equal(cond?.status, 'True', show(blocked.status));
    assert.equal(cond?.reason, 'NodeUncordonedExternally', show(blocked.status));
    const ev = await waitEvent(blocked, 'Warning', 'NodeUncordonedExternally');
    assert.match(ev.message ?? '', new RegExp(node));
    assert.match(kubectl(['describe', 'mp', name]), /Warning\s+NodeUncordonedExternally/);

    // Now let the PDB allow both evictions while the node is still schedulable: the drain sees the
    // budget (its "waiting for the PDB" blockers go away) and still evicts nothing.
    await c.policy.patchNamespacedPodDisruptionBudget(
      { name: 'guarded', namespace: ns, body: { spec: { minAvailable: 0 } } },
      MERGE_PATCH,
    );
    await waitPdb(c, ns, 'guarded', (p) => p.status?.disruptionsAllowed === 2);
    const sawBudget = await waitPlan(
      name,
      (p) => nodeOf(p, node)?.phase === 'Blocked' && (nodeOf(p, node)?.blockedBy ?? []).length === 0,
      15_000,
      'the drain saw the PDB allow 2 (no DisruptionBudget blockers), still Blocked',
      checkSchedulable,
    );
    // Keep sampling a few observation rounds past that point (observeNode answers within 0.5 s of a
    // change; decisions follow at once).
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      const p = await getPlan(name);
      if (p) checkSchedulable(p);
      await sleep(200);
    }
    assert.deepEqual(
      violations.length,
      0,
      `${violations.length} violations, first: ${violations.slice(0, 2).join('\n')}`,
    );
    assert.ok(samples >= 10, `sampled ${samples} times while schedulable`);
    assert.deepEqual(
      await podsOn(node),
      [`${ns}/guarded-0`, `${ns}/guarded-1`],
      `no pod left the schedulable node; ${show(sawBudget.status)}`,
    );

    // Cordoned again by the admin: the drain goes on and ends Drained, one call per pod.
    schedulable = false;
    kubectl(['cordon', node]);
    const drained = await waitPlan(
      name,
      (p) => ['Drained', 'Failed', 'Blocked'].includes(p.status?.phase ?? ''),
      60_000,
      'plan final',
    );
    const st = drained.status!;
    assert.equal(st.phase, 'Drained', show(st));
    assert.equal(nodeOf(drained, node)?.phase, 'Drained', show(st));
    assert.equal(nodeOf(drained, node)?.podsEvicted, 2, show(st));
    assert.equal(st.evictionProgress!.attempts, 2, `one eviction call per pod; ${show(st)}`);
    assert.deepEqual(await podsOn(node), []);
    assert.equal((await readNode(node))?.spec?.unschedulable, true);
    // One Warning for the whole time the node was schedulable: neither a second Event nor a repeat
    // of the first (the recorder counts repeats in `count`).
    const warnings = (await planEvents(drained)).filter(
      (e) => e.type === 'Warning' && e.reason === 'NodeUncordonedExternally',
    );
    assert.equal(warnings.length, 1, JSON.stringify(warnings.map((e) => [e.message, e.count])));
    assert.equal(warnings[0]!.count ?? 1, 1, `the Warning was repeated: ${warnings[0]!.message}`);
    console.log(`[drain-loop] uncordon → Blocked/NodeUncordonedExternally in status after ${reactionMs} ms`);
  });

  it('node deleted mid-drain: Deleted/NodeDeleted, the plan finishes Drained (DrainedWithNodesDeleted) naming it, its pods still counted, and can be deleted', async () => {
    const node = await newNode();
    const ns = await newNamespace();
    await barePods(ns, node, 'stuck', 2);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'stuck', { app: 'stuck' }, { minAvailable: 2 }),
    });
    await waitPdb(c, ns, 'stuck', (p) => p.status?.currentHealthy === 2 && p.status.disruptionsAllowed === 0);

    const name = uniqueName('dl-nodedel');
    applyPlan(name, {
      nodeNames: [node],
      drainTimeoutSeconds: 180,
      podSelection: { force: true },
      eviction: FAST_EVICTION,
    });
    await waitPlan(
      name,
      (p) => nodeOf(p, node)?.phase === 'Draining' && (nodeOf(p, node)?.blockedBy ?? []).length === 2,
      60_000,
      'node Draining, 2 pods waiting for the PDB',
    );

    const deletedAt = Date.now();
    await c.core.deleteNode({ name: node });
    await waitFor(async () => (await readNode(node)) === undefined, 15_000, { what: `node ${node} gone` });
    const done = await waitPlan(
      name,
      (p) => nodeOf(p, node)?.phase === 'Deleted' && p.status?.phase !== 'Running',
      20_000,
      'node Deleted, plan finished',
    );
    const reactionMs = Date.now() - deletedAt;
    const st = done.status!;
    assert.equal(st.phase, 'Drained', show(st));
    // The two pods never evicted stay counted, gone with the node (not a clean AllNodesDrained).
    assert.equal(st.reason, 'DrainedWithNodesDeleted', show(st));
    assert.match(st.message ?? '', new RegExp(`deleted during the drain: ${node}`), show(st));
    assert.match(st.message ?? '', /2 pod\(s\) on the deleted node\(s\) left without eviction/, show(st));
    assert.equal(st.evictionProgress!.attempts, 0, show(st));
    assert.equal(st.evictionProgress!.total, 2, show(st));
    assert.equal(st.evictionProgress!.evicted, 0, show(st));
    assert.equal(st.evictionProgress!.goneWithoutEviction, 2, show(st));
    const result = await nodeResult(done, node);
    assert.equal(result.phase, 'Deleted', JSON.stringify(result));
    assert.equal(result.reason, 'NodeDeleted', JSON.stringify(result));
    const ev = await waitEvent(done, 'Warning', 'NodeDeleted');
    assert.match(ev.message ?? '', new RegExp(node));

    // Deleting the plan goes through the operator's finalizer (abort → hand back a node that is gone).
    await deletePlanObject(name);
    await waitPlanGone(name, 30_000);
    console.log(`[drain-loop] node deletion → plan ${st.phase} in ${reactionMs} ms`);
  });

  it('blocker removed: a pod under two PDBs blocks the node until the second PDB is deleted, then it drains', async () => {
    const node = await newNode();
    const ns = await newNamespace();
    await barePods(ns, node, 'dual', 1);
    for (const pdb of ['dual-a', 'dual-b'])
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: makePdb(ns, pdb, { app: 'dual' }, { minAvailable: 0 }),
      });
    for (const pdb of ['dual-a', 'dual-b'])
      await waitPdb(c, ns, pdb, (p) => p.status?.disruptionsAllowed === 1);

    const name = uniqueName('dl-twopdb');
    applyPlan(name, {
      nodeNames: [node],
      drainTimeoutSeconds: 180,
      podSelection: { force: true },
      eviction: FAST_EVICTION,
    });
    const blocked = await waitPlan(
      name,
      (p) => nodeOf(p, node)?.phase === 'Blocked' && p.status?.reason === 'PodsNotEvictable',
      60_000,
      'node Blocked, plan Running/PodsNotEvictable',
    );
    let st = blocked.status!;
    assert.equal(st.phase, 'Running', show(st));
    const blockers = nodeOf(blocked, node)!.blockedBy ?? [];
    assert.deepEqual(
      blockers.map((b) => [b.pod, b.reason]),
      [[`${ns}/dual-0`, 'MultiplePodDisruptionBudgets']],
      show(st),
    );
    assert.equal(st.evictionProgress!.attempts, 0, `blocked without a call; ${show(st)}`);
    const planUid = blocked.metadata.uid;
    await waitEvent(blocked, 'Warning', 'MultiplePodDisruptionBudgets');

    await c.policy.deleteNamespacedPodDisruptionBudget({ name: 'dual-b', namespace: ns });
    const drained = await waitPlan(
      name,
      (p) => ['Drained', 'Failed', 'Blocked'].includes(p.status?.phase ?? ''),
      30_000,
      'plan final',
    );
    st = drained.status!;
    assert.equal(st.phase, 'Drained', show(st));
    assert.equal(drained.metadata.uid, planUid, 'the same plan');
    assert.equal(nodeOf(drained, node)?.phase, 'Drained', show(st));
    assert.equal(nodeOf(drained, node)?.podsEvicted, 1, show(st));
    assert.equal(nodeOf(drained, node)?.blockedBy, undefined, show(st));
    assert.equal(st.evictionProgress!.attempts, 1, show(st));
    assert.deepEqual(await podsOn(node), []);
  });

  it('maxUnavailableNodes 1 holds throughout; at the deadline the plan is Blocked/DeadlineExceeded and the nodes never started are Blocked, untouched', async () => {
    const nodes = [await newNode(), await newNode(), await newNode()];
    const ns = await newNamespace();
    for (const [i, n] of nodes.entries()) await barePods(ns, n, `bare${i}`, 1);

    const name = uniqueName('dl-maxun');
    const deadlineSeconds = 30;
    // No force: every node's bare pod blocks it (NoController), so the first node keeps its slot.
    applyPlan(name, {
      nodeNames: nodes,
      maxUnavailableNodes: 1,
      drainTimeoutSeconds: deadlineSeconds,
      eviction: FAST_EVICTION,
    });

    let maxCordoned = 0;
    let samples = 0;
    const everCordoned = new Set<string>();
    const overlaps: string[] = [];
    let final: MaintenancePlan | undefined;
    const started = Date.now();
    while (Date.now() - started < (deadlineSeconds + 40) * 1000) {
      const [plan, ...states] = await Promise.all([getPlan(name), ...nodes.map(readNode)]);
      const cordoned = states
        .filter(
          (n) => n?.spec?.unschedulable === true && n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION] === name,
        )
        .map((n) => n!.metadata!.name!);
      samples++;
      for (const n of cordoned) everCordoned.add(n);
      maxCordoned = Math.max(maxCordoned, cordoned.length);
      if (cordoned.length > 1) overlaps.push(`${new Date().toISOString()}: ${cordoned.join(', ')}`);
      if (plan?.status?.phase && plan.status.phase !== 'Running' && plan.status.phase !== 'Pending') {
        final = plan;
        break;
      }
      await sleep(200);
    }
    assert.ok(final, `plan did not end within ${deadlineSeconds + 40} s`);
    const st = final.status!;
    assert.deepEqual(overlaps, [], `more than one node cordoned at a time; ${show(st)}`);
    assert.equal(maxCordoned, 1, `exactly one node was cordoned by the plan; samples ${samples}`);
    assert.ok(samples > deadlineSeconds, `sampled ${samples} times`);
    assert.equal(st.phase, 'Blocked', show(st));
    assert.equal(st.reason, 'DeadlineExceeded', show(st));
    assert.ok(st.completedAt, show(st));
    const endedAfter = Date.parse(st.completedAt) - Date.parse(st.startedAt!);
    assert.ok(
      endedAfter >= deadlineSeconds * 1000 && endedAfter < (deadlineSeconds + 20) * 1000,
      `ended ${endedAfter} ms after the start; ${show(st)}`,
    );

    // The first node was drained as far as it goes (its bare pod blocks it); the others never started.
    const [first, ...rest] = nodes as [string, string, string];
    assert.deepEqual([...everCordoned], [first], show(st));
    const n0 = nodeOf(final, first)!;
    assert.equal(n0.phase, 'Blocked', show(st));
    assert.deepEqual(
      (n0.blockedBy ?? []).map((b) => [b.pod, b.reason]),
      [[`${ns}/bare0-0`, 'NoController']],
      show(st),
    );
    assert.equal((await nodeResult(final, first)).reason, 'DeadlineExceeded');
    for (const n of rest) {
      const entry: NodeStatus = nodeOf(final, n)!;
      assert.equal(entry.phase, 'Blocked', `${n}: ${show(st)}`);
      assert.equal(entry.podsTotal, 0, `${n} was never looked at; ${show(st)}`);
      assert.equal(await nodeWorkflowExists(final, n), false, `no drain was started for ${n}`);
      assert.notEqual((await readNode(n))?.spec?.unschedulable, true, `${n} never cordoned`);
    }
    const ev = await waitEvent(final, 'Warning', 'DeadlineExceeded');
    assert.match(ev.message ?? '', /deadline passed/);
  });

  it('namespace deleted while its pods are queued behind a PDB: they count as gone, not as blockers, and the node drains', async () => {
    const node = await newNode();
    const queuedNs = await newNamespace();
    const freeNs = await newNamespace();
    await barePods(queuedNs, node, 'queued', 2);
    await barePods(freeNs, node, 'free', 1);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: queuedNs,
      body: makePdb(queuedNs, 'queued', { app: 'queued' }, { minAvailable: 2 }),
    });
    await waitPdb(
      c,
      queuedNs,
      'queued',
      (p) => p.status?.currentHealthy === 2 && p.status.disruptionsAllowed === 0,
    );

    const name = uniqueName('dl-nsdel');
    applyPlan(name, {
      nodeNames: [node],
      drainTimeoutSeconds: 180,
      podSelection: { force: true },
      eviction: FAST_EVICTION,
    });
    const queued = await waitPlan(
      name,
      (p) => {
        const n = nodeOf(p, node);
        return (
          n?.podsEvicted === 1 &&
          (n.blockedBy ?? []).length === 2 &&
          (n.blockedBy ?? []).every((b) => b.reason === 'DisruptionBudget')
        );
      },
      60_000,
      'free pod evicted, 2 pods queued behind the PDB',
    );
    assert.equal(nodeOf(queued, node)?.podsTotal, 3, show(queued.status));

    // From here on, record every blocker reason the queued pods get.
    const reasons = new Set<string>();
    await deleteNamespace(c, queuedNs);
    const done = await waitPlan(
      name,
      (p) => ['Drained', 'Failed', 'Blocked'].includes(p.status?.phase ?? ''),
      60_000,
      'plan final',
      (p) => {
        for (const b of nodeOf(p, node)?.blockedBy ?? []) reasons.add(b.reason);
      },
    );
    const st = done.status!;
    assert.equal(st.phase, 'Drained', show(st));
    const n = nodeOf(done, node)!;
    assert.equal(n.phase, 'Drained', show(st));
    assert.equal(n.podsTotal, 3, show(st));
    // The free pod was evicted; the two queued ones left with their namespace, without an eviction.
    assert.equal(n.podsEvicted, 1, `one pod evicted; ${show(st)}`);
    assert.equal(n.podsGoneWithoutEviction, 2, `the deleted namespace's pods count as gone; ${show(st)}`);
    assert.equal(st.evictionProgress!.goneWithoutEviction, 2, show(st));
    assert.equal(st.evictionProgress!.failed, 0, show(st));
    assert.equal(n.blockedBy, undefined, show(st));
    const blockerReasons = [...reasons].filter((r) => r !== 'DisruptionBudget');
    assert.deepEqual(blockerReasons, [], `the queued pods became blockers; ${show(st)}`);
    // The PDB that queued them (minAvailable: all its pods) may have been diagnosed Never before
    // the namespace went (one DisruptionBlocked Warning at first sight); nothing else warns.
    const warnings = (await planEvents(done)).filter(
      (e) => e.type === 'Warning' && e.reason !== 'DisruptionBlocked',
    );
    assert.deepEqual(
      warnings.map((e) => [e.reason, e.message]),
      [],
      'no Warning Event but the PDB diagnosis: nothing else blocked the node',
    );
    assert.deepEqual(await podsOn(node), []);
  });
});
