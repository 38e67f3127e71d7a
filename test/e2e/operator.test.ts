// test-lane: parallel
/**
 * The operator end to end on the real stack (issue 4): the operator and the worker run as real
 * `drainflow run` processes against kube-apiserver + kube-controller-manager + kwok and the Temporal
 * dev server; plans are written with the project's kubectl and read back with kubectl and the API.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`. Without
 * KUBECONFIG / TEMPORAL_ADDRESS every test fails with that instruction; none is skipped.
 *
 * Isolation: a unique task queue; three kwok nodes created for this file (labelled with a pool
 * label and tainted so no other test's pods land there; this file's pods tolerate the taint), so the
 * shared kwok-node-* nodes are never cordoned. Every plan is deleted at the end (waiting for the
 * finalizer cleanup), every node uncordoned and deleted. The operator takes the Lease
 * `drainflow-operator` in `default`, as a deployed one would: another operator holding it makes
 * the setup fail with the holder's name.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { V1DaemonSet, V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import {
  FINALIZER,
  GROUP,
  NODE_CLAIM_ANNOTATION,
  PLURAL,
  VERSION,
  type MaintenancePlan,
  type MaintenancePlanSpecInput,
} from '../../src/api/plan.js';
import { nodeWorkflowId, planWorkflowId } from '../../src/contract/names.js';
import { pauseSignal, resumeSignal } from '../../src/contract/plan-messages.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDaemonSet,
  makeDeployment,
  makePdb,
  setUnschedulable,
  sleep,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import {
  MERGE_PATCH,
  OperatorHarness,
  RUN_LABEL,
  createTaintedNode,
  drainflowEnv,
  kubectl,
} from '../helpers/operator-harness.js';
import { freePort, metricValue, startDrainflow, startWorkerProcess } from '../helpers/processes.js';
import { allowEvictions, denyEvictions } from '../helpers/deny-evictions.js';

const POOL_LABEL = 'drainflow.dev/pool';
const TAINT_KEY = 'drainflow.dev/e2e-operator';

describe('operator on the real stack', () => {
  const pool = uniqueName('op-pool');
  // The operator takes the Lease `drainflow-operator` in `default`, as a deployed one would.
  const h = new OperatorHarness({
    taskQueue: uniqueName('operator-e2e'),
    run: pool,
    lease: { name: 'default' },
  });
  let c: Clients;
  let ns: string;
  let client: Client;
  let nodes: [string, string, string];

  // ------------------------------------------------------------------ helpers

  /** Runs pods of this file only on this file's nodes (taint toleration + required pool affinity), preferring `prefer`. */
  function onPool<T extends V1Deployment | V1DaemonSet>(obj: T, prefer: string[] = []): T {
    const spec = obj.spec!.template.spec as V1PodSpec;
    spec.tolerations = [{ key: TAINT_KEY, operator: 'Equal', value: pool, effect: 'NoSchedule' }];
    spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: POOL_LABEL, operator: 'In', values: [pool] }] }],
        },
        ...(prefer.length
          ? {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  preference: {
                    matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: prefer }],
                  },
                },
              ],
            }
          : {}),
      },
    };
    return obj;
  }

  async function deploy(
    name: string,
    replicas: number,
    opts: { prefer?: string[]; readyDelay?: string } = {},
  ): Promise<void> {
    const d = onPool(
      makeDeployment(ns, name, replicas, opts.readyDelay ? { readyDelay: opts.readyDelay } : {}),
      opts.prefer,
    );
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    await waitPodsReady(c, ns, { app: name }, replicas, 90_000);
  }

  async function podsOn(node: string, app: string): Promise<string[]> {
    const list = await c.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${app}` });
    return list.items
      .filter((p) => p.spec?.nodeName === node && !p.metadata?.deletionTimestamp)
      .map((p) => p.metadata!.name!);
  }

  /**
   * 8 pods of Deployment `slow` on node `a` (the other nodes cordoned while they are placed),
   * replacements Ready after 3 s, behind PDB `slow` (maxUnavailable 1): a drain of `a` evicts one
   * pod every few seconds.
   */
  async function slowPodsOn(a: string): Promise<void> {
    const others = nodes.filter((n) => n !== a);
    for (const n of others) await setUnschedulable(c, n, true);
    await deploy('slow', 8, { prefer: [a], readyDelay: '3s' });
    for (const n of others) await setUnschedulable(c, n, false);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'slow', { app: 'slow' }, { maxUnavailable: 1 }),
    });
    await waitPdb(c, ns, 'slow', (p) => (p.status?.disruptionsAllowed ?? 0) >= 1);
    assert.equal((await podsOn(a, 'slow')).length, 8);
  }

  /** Sets PDB `slow`'s maxUnavailable and waits until the disruption controller allows that many. */
  async function slowBudget(maxUnavailable: number): Promise<void> {
    await c.policy.patchNamespacedPodDisruptionBudget(
      { namespace: ns, name: 'slow', body: { spec: { maxUnavailable } } },
      MERGE_PATCH,
    );
    await waitPdb(c, ns, 'slow', (p) => (p.status?.disruptionsAllowed ?? 0) <= maxUnavailable);
  }

  /** Creates or updates a plan with `kubectl apply`. */
  const applyPlan = (name: string, spec: MaintenancePlanSpecInput) => h.applyPlan(name, spec);
  const getPlan = (name: string) => h.getPlan(name);
  const waitPlan = (name: string, pred: (p: MaintenancePlan) => boolean, timeoutMs: number, what: string) =>
    h.waitPlan(name, pred, timeoutMs, what);
  const deletePlan = (name: string, timeoutMs?: number) => h.deletePlan(name, timeoutMs);

  const phaseIs = (phase: string) => (p: MaintenancePlan) => p.status?.phase === phase;

  async function isCordoned(node: string): Promise<boolean> {
    return (await c.core.readNode({ name: node })).spec?.unschedulable === true;
  }

  async function operatorActions(): Promise<number> {
    return metricValue(await h.operator!.metrics(), 'drainflow_operator_actions_total');
  }

  async function workflowRuns(workflowId: string): Promise<number> {
    let n = 0;
    for await (const run of client.workflow.list({ query: `WorkflowId="${workflowId}"` }))
      if (run.workflowId === workflowId) n++;
    return n;
  }

  const wfId = (p: MaintenancePlan) => planWorkflowId({ name: p.metadata.name, uid: p.metadata.uid });

  // ------------------------------------------------------------------ setup

  before(async () => {
    await h.connect(); // fails with the setup instructions when KUBECONFIG is unset
    c = h.c;
    client = h.client;
    // This file's operators act only on plans labelled for this run (--plan-selector).
    const existing = (await c.custom.listClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      labelSelector: `${RUN_LABEL}=${pool}`,
    })) as { items: MaintenancePlan[] };
    const foreign = existing.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
    if (foreign.length > 0) {
      throw new Error(
        `MaintenancePlans left by another test exist (${foreign.join(', ')}); the operator would act on them. Delete them first.`,
      );
    }
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(
        await createTaintedNode(c, 'df-op-node', {
          labels: { [POOL_LABEL]: pool },
          taint: { key: TAINT_KEY, value: pool },
        }),
      );
    }
    nodes = made as [string, string, string];
    ns = await createNamespace(c, 'df-op');
    await h.startProcesses();
  });

  /**
   * Hands everything back after each test, whatever its outcome: deletes its plans through the
   * operator (finalizer cleanup; forced when that does not finish), its workloads, and uncordons
   * the nodes, so one failure does not cascade into the next test.
   */
  async function handBack(): Promise<void> {
    await h.removePlans(60_000);
    if (ns) {
      await c.apps.deleteCollectionNamespacedDeployment({ namespace: ns }).catch(() => undefined);
      await c.apps.deleteCollectionNamespacedDaemonSet({ namespace: ns }).catch(() => undefined);
      await c.policy.deleteCollectionNamespacedPodDisruptionBudget({ namespace: ns }).catch(() => undefined);
      await waitFor(
        async () => (await c.core.listNamespacedPod({ namespace: ns })).items.length === 0,
        60_000,
        { what: `pods of ${ns} gone` },
      ).catch(() => undefined);
    }
    for (const n of nodes ?? []) await setUnschedulable(c, n, false).catch(() => undefined);
  }

  afterEach(handBack);

  after(async () => {
    if (c) await handBack();
    await h.stop();
    if (ns) await deleteNamespace(c, ns);
    for (const n of nodes ?? []) {
      await setUnschedulable(c, n, false).catch(() => undefined);
      await deleteNode(c, n).catch(() => undefined);
    }
  });

  // ------------------------------------------------------------------ tests

  it('drains 2 of 3 nodes from `kubectl apply`: Drained, shown by kubectl get and describe', async () => {
    const [a, b, free] = nodes;
    await deploy('web', 4, { prefer: [a, b] });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', { app: 'web' }, { maxUnavailable: 1 }),
    });
    await waitPdb(c, ns, 'web', (p) => (p.status?.disruptionsAllowed ?? 0) >= 1);
    await c.apps.createNamespacedDaemonSet({ namespace: ns, body: onPool(makeDaemonSet(ns, 'agent')) });
    await waitPodsReady(c, ns, { app: 'agent' }, 3);
    const webOnTargets = [...(await podsOn(a, 'web')), ...(await podsOn(b, 'web'))];
    assert.ok(webOnTargets.length > 0, 'some web pods run on the nodes to drain');
    const startsBefore = metricValue(await h.operator!.metrics(), 'drainflow_operator_actions_total', {
      action: 'start',
    });

    const name = uniqueName('op-drain');
    applyPlan(name, { nodeNames: [a, b] });
    const done = await waitPlan(
      name,
      (p) => ['Drained', 'Blocked', 'Failed'].includes(p.status?.phase ?? ''),
      120_000,
      'final phase',
    );
    const st = done.status!;
    assert.equal(st.phase, 'Drained', `${st.reason}: ${st.message}`);
    assert.equal(st.nodesDrained, 2);
    assert.equal(st.nodesTotal, 2);
    // Replacements of pods evicted from the first node may land on the second before it is cordoned.
    assert.equal(st.evictionProgress!.evicted, st.evictionProgress!.total);
    assert.ok(
      st.evictionProgress!.evicted >= webOnTargets.length,
      `evicted ${st.evictionProgress!.evicted} >= ${webOnTargets.length}`,
    );
    assert.equal(st.workflow?.workflowId, wfId(done));
    assert.ok(done.metadata.finalizers?.includes(FINALIZER), 'the operator put its finalizer on the plan');
    assert.equal(
      metricValue(await h.operator!.metrics(), 'drainflow_operator_actions_total', { action: 'start' }),
      startsBefore + 1,
    );
    assert.equal(await workflowRuns(wfId(done)), 1);

    // The cluster: web pods moved to the free node, DaemonSet pods stayed, targets cordoned.
    for (const n of [a, b]) {
      assert.deepEqual(await podsOn(n, 'web'), [], `no web pod left on ${n}`);
      assert.equal((await podsOn(n, 'agent')).length, 1, `DaemonSet pod skipped on ${n}`);
      assert.equal(await isCordoned(n), true, `${n} cordoned`);
    }
    assert.equal(await isCordoned(free), false, 'the third node untouched');
    await waitPodsReady(c, ns, { app: 'web' }, 4);

    // kubectl get: phase, reason, nodes drained/total, pods evicted/total.
    const table = kubectl(['get', 'mp', name]);
    const n = st.evictionProgress!.evicted;
    assert.match(table, /NAME\s+PHASE\s+REASON\s+DRAINED\s+NODES\s+EVICTED\s+PODS\s+ETA\s+AGE/);
    assert.match(table, new RegExp(`${name}\\s+Drained\\s+AllNodesDrained\\s+2\\s+2\\s+${n}\\s+${n}\\s`));
    // kubectl describe: conditions and Events.
    const described = await waitFor(
      () => {
        const out = kubectl(['describe', 'mp', name]);
        return /WorkflowStarted/.test(out) && /AllNodesDrained/.test(out.split('Events:')[1] ?? '')
          ? out
          : undefined;
      },
      15_000,
      { what: 'describe shows the Events' },
    );
    assert.match(described, /Conditions:/);
    assert.match(described, /Type:\s+Drained/);
    assert.match(described, /Events:[\s\S]*Normal\s+WorkflowStarted/);
    // Metrics: the plan is counted by phase and its drain duration recorded.
    const metrics = await waitFor(
      async () => {
        const m = await h.operator!.metrics();
        return metricValue(m, 'drainflow_drain_duration_seconds_count', { phase: 'Drained' }) >= 1
          ? m
          : undefined;
      },
      15_000,
      { what: 'drain duration recorded in /metrics' },
    );
    assert.ok(metricValue(metrics, 'drainflow_plans', { phase: 'Drained' }) >= 1);

    await deletePlan(name);
    for (const node of [a, b])
      assert.equal(await isCordoned(node), false, `${node} uncordoned after the plan was deleted`);
  });

  it('pauses through spec.paused and through the Temporal signal: no new evictions until resumed', async () => {
    const [a] = nodes;
    await slowPodsOn(a);

    const name = uniqueName('op-pause');
    applyPlan(name, { nodeNames: [a] });
    const attempts = async () => (await getPlan(name))!.status?.evictionProgress?.attempts ?? 0;
    const workerEvictions = async () => metricValue(await h.worker!.metrics(), 'drainflow_evictions_total');
    await waitPlan(name, (p) => (p.status?.evictionProgress?.evicted ?? 0) >= 1, 60_000, 'first pod evicted');

    /** Pauses with `pause`, checks nothing is evicted for a while, resumes with `resume`, checks evictions continue. */
    const pauseWindow = async (how: string, pause: () => Promise<void>, resume: () => Promise<void>) => {
      await pause();
      await waitPlan(name, phaseIs('Paused'), 15_000, `Paused (${how})`);
      await sleep(2000); // an eviction call in flight when the pause arrived finishes
      const [a0, w0] = [await attempts(), await workerEvictions()];
      await sleep(6000);
      const p = (await getPlan(name))!;
      assert.equal(p.status?.phase, 'Paused', `still Paused (${how})`);
      assert.equal(p.status?.evictionProgress?.attempts, a0, `no eviction while paused (${how})`);
      assert.equal(await workerEvictions(), w0, `the worker sent no eviction while paused (${how})`);
      assert.ok((p.status?.evictionProgress?.evicted ?? 0) < 8, 'the pause came before the end');
      await resume();
      await waitPlan(
        name,
        (x) => x.status?.phase !== 'Paused' && (x.status?.evictionProgress?.attempts ?? 0) > a0,
        30_000,
        `evicting again (${how})`,
      );
    };

    await pauseWindow(
      'spec',
      async () => void kubectl(['patch', 'mp', name, '--type', 'merge', '-p', '{"spec":{"paused":true}}']),
      async () => void kubectl(['patch', 'mp', name, '--type', 'merge', '-p', '{"spec":{"paused":false}}']),
    );
    // The pause went to the node workflow directly as well (src/operator/node-stops.ts: found by
    // the visibility query), said in the plan's one SignalSent Event.
    assert.match(
      kubectl(['describe', 'mp', name]).split('Events:')[1] ?? '',
      /sent pause \(generation \d+\) to workflow \S+ and directly to 1 running node workflow\(s\)/,
    );
    const plan = (await getPlan(name))!;
    const handle = client.workflow.getHandle(wfId(plan));
    await pauseWindow(
      'signal',
      async () => {
        await handle.signal(pauseSignal);
        // The status says where the pause came from: spec.paused stays false.
        const paused = await waitPlan(name, phaseIs('Paused'), 15_000, 'Paused (signal)');
        assert.match(paused.status?.message ?? '', /paused by a pause signal, not by spec\.paused/);
        assert.notEqual(paused.spec.paused, true);
      },
      () => handle.signal(resumeSignal),
    );
    const done = await waitPlan(name, phaseIs('Drained'), 120_000, 'Drained');
    assert.equal(done.status?.evictionProgress?.evicted, 8);
    await deletePlan(name);
  });

  it('ends Blocked/DeadlineExceeded at the deadline when a PDB allows no disruption, naming the PDB and pod', async () => {
    const [a] = nodes;
    const d = onPool(makeDeployment(ns, 'stuck', 2, { hostname: a }));
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    await waitPodsReady(c, ns, { app: 'stuck' }, 2);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'stuck', { app: 'stuck' }, { maxUnavailable: 0 }),
    });
    await waitPdb(c, ns, 'stuck');

    const name = uniqueName('op-deadline');
    applyPlan(name, { nodeNames: [a], drainTimeoutSeconds: 30 });
    const started = await waitPlan(name, (p) => Boolean(p.status?.deadline), 30_000, 'deadline in status');
    const deadlineMs = Date.parse(started.status!.deadline!);
    const blocked = await waitPlan(name, phaseIs('Blocked'), 60_000, 'Blocked');
    const seenMs = Date.now();
    assert.equal(blocked.status?.reason, 'DeadlineExceeded', blocked.status?.message);
    assert.ok(seenMs >= deadlineMs - 500, `not before the deadline (${seenMs - deadlineMs} ms)`);
    assert.ok(
      seenMs <= deadlineMs + 5000,
      `within a few seconds of the deadline (${seenMs - deadlineMs} ms late)`,
    );
    const node = blocked.status!.nodes!.find((n) => n.name === a)!;
    const blockers = node.blockedBy ?? [];
    const stuckPods = await podsOn(a, 'stuck');
    assert.ok(blockers.length >= 1, 'blockers reported');
    for (const b of blockers) {
      assert.equal(b.pdb, `${ns}/stuck`, `blocker ${JSON.stringify(b)} names the PDB`);
      assert.ok(stuckPods.map((p) => `${ns}/${p}`).includes(b.pod), `blocker names a stuck pod: ${b.pod}`);
    }
    assert.equal(await isCordoned(a), true, 'the node stays cordoned');
    assert.equal(stuckPods.length, 2, 'nothing evicted');

    await deletePlan(name);
    assert.equal(await isCordoned(a), false);
  });

  it('uncordons on delete, except a node that was cordoned before the plan', async () => {
    const [, b, c2] = nodes;
    await setUnschedulable(c, c2, true); // cordoned by somebody else before the plan
    const name = uniqueName('op-handback');
    applyPlan(name, { nodeNames: [b, c2], uncordon: 'OnDelete' });
    await waitPlan(name, phaseIs('Drained'), 60_000, 'Drained');
    assert.equal(await isCordoned(b), true);
    assert.equal(await isCordoned(c2), true);
    await deletePlan(name);
    assert.equal(await isCordoned(b), false, `${b} uncordoned`);
    assert.equal(await isCordoned(c2), true, `${c2} stays cordoned: it was cordoned before the plan`);
    for (const n of [b, c2]) {
      const ann = (await c.core.readNode({ name: n })).metadata?.annotations ?? {};
      assert.equal(ann[NODE_CLAIM_ANNOTATION], undefined, `${n}: claim released`);
    }
    await setUnschedulable(c, c2, false);
  });

  it('makes a second plan on the same node wait (NodeHeldByOtherPlan) until the first is deleted, then claims it at once', async (t) => {
    const [a] = nodes;
    const first = uniqueName('op-first');
    applyPlan(first, { nodeNames: [a] });
    await waitPlan(first, phaseIs('Drained'), 60_000, 'Drained');
    const second = uniqueName('op-second');
    // Its next try after the first comes 60 s later: a claim within seconds of the hand-back can
    // only come from its wait for the hand-back (waitClaimReleased).
    const backoffSeconds = 60;
    applyPlan(second, {
      nodeNames: [a],
      eviction: { retryBackoff: { initialSeconds: backoffSeconds, maxSeconds: 120 } },
    });
    const waiting = await waitPlan(
      second,
      (p) =>
        p.status?.nodes?.[0]?.phase === 'Waiting' &&
        Boolean(
          p.status.conditions?.some(
            (x) => x.type === 'Blocked' && x.status === 'True' && x.reason === 'NodeHeldByOtherPlan',
          ),
        ),
      30_000,
      'Waiting with NodeHeldByOtherPlan',
    );
    assert.match(waiting.status!.conditions!.find((x) => x.type === 'Blocked')!.message, new RegExp(first));
    // The claim annotation, read every 100 ms while the first plan is deleted (its cleanup hands
    // the node back): when it stops naming the first plan, and when it names the second.
    let handBackAt: number | undefined;
    let claimedAt: number | undefined;
    const tracking = (async () => {
      const end = Date.now() + 2 * backoffSeconds * 1000;
      while (claimedAt === undefined && Date.now() < end) {
        const claim = (await c.core.readNode({ name: a })).metadata?.annotations?.[NODE_CLAIM_ANNOTATION];
        if (claim !== first) handBackAt ??= Date.now();
        if (claim === second) claimedAt = Date.now();
        await sleep(100);
      }
    })();
    await deletePlan(first);
    await tracking;
    assert.ok(
      handBackAt !== undefined && claimedAt !== undefined,
      'handed back, then claimed by the second plan',
    );
    const tookMs = claimedAt - handBackAt;
    t.diagnostic(`claimed ${tookMs} ms after the hand-back`);
    assert.ok(
      tookMs < 5_000,
      `claimed ${tookMs} ms after the hand-back (its next try was ${backoffSeconds} s after the first)`,
    );
    await waitPlan(second, phaseIs('Drained'), 30_000, 'Drained after the first plan was deleted');
    assert.equal(await isCordoned(a), true, 'cordoned by the second plan');
    await deletePlan(second);
    assert.equal(await isCordoned(a), false);
  });

  it('survives kill -9 of the operator: still exactly one workflow run per plan', async () => {
    const [a, b] = nodes;
    const before1 = uniqueName('op-crash-a');
    applyPlan(before1, { nodeNames: [a] });
    const p1 = await waitPlan(
      before1,
      (p) => Boolean(p.status?.workflow?.workflowId),
      30_000,
      'workflow started',
    );
    assert.equal(await h.operator!.stop('SIGKILL'), 'SIGKILL');
    // While no operator runs: a new plan.
    const during = uniqueName('op-crash-b');
    applyPlan(during, { nodeNames: [b] });
    h.operator = await h.startOperator(); // waits for the dead leader's Lease to expire (~15 s)
    const restarted = h.operator;
    await waitFor(
      () => new RegExp(`"plan":"${before1}".*workflow exists already`).test(restarted.logs()),
      10_000,
      {
        what: 'the restarted operator finds the running workflow',
      },
    );
    const p2 = await waitPlan(
      during,
      (p) => Boolean(p.status?.workflow?.workflowId),
      30_000,
      'workflow started after the restart',
    );
    await waitPlan(before1, phaseIs('Drained'), 60_000, 'Drained');
    await waitPlan(during, phaseIs('Drained'), 60_000, 'Drained');
    assert.equal(await workflowRuns(wfId(p1)), 1, `one run of ${wfId(p1)}`);
    assert.equal(await workflowRuns(wfId(p2)), 1, `one run of ${wfId(p2)}`);
    // The new operator started only the plan created while it was down.
    const started = restarted
      .logs()
      .split('\n')
      .filter((l) => l.includes('"msg":"workflow started"'));
    assert.deepEqual(
      started.map((l) => (JSON.parse(l) as { plan: string }).plan),
      [during],
    );
    assert.equal(
      metricValue(await restarted.metrics(), 'drainflow_operator_actions_total', { action: 'start' }),
      1,
    );
    await deletePlan(before1);
    await deletePlan(during);
    assert.equal(await workflowRuns(wfId(p1)), 1);
  });

  /**
   * A plan draining node `a` (8 slow pods), the operator killed with `kill -9` after the first
   * eviction, `change` made with kubectl while it is down, and the operator restarted (once it
   * leads). Asserts the restarted operator relayed `signal` for the plan before it led.
   * @returns the plan's name and the relay's log line.
   */
  async function changeWhileOperatorDown(
    stem: string,
    signal: 'pause' | 'abort',
    change: (name: string) => void,
  ): Promise<{ name: string; relay: string }> {
    const [a] = nodes;
    await slowPodsOn(a); // the drain is still going when the operator restarts
    const name = uniqueName(stem);
    applyPlan(name, { nodeNames: [a] });
    await waitPlan(name, (p) => (p.status?.evictionProgress?.evicted ?? 0) >= 1, 60_000, 'first pod evicted');
    // The drain holds while the operator is down (the caller lets it go on with slowBudget(1)): a
    // restart takes the dead leader's Lease time and a start, which on a loaded host outlasted the
    // drain of the 8 slow pods.
    await slowBudget(0);
    assert.equal(await h.operator!.stop('SIGKILL'), 'SIGKILL'); // its Lease stays held ~15 s
    change(name);
    h.operator = await h.startOperator(); // returns once it leads (the dead leader's Lease expired)
    const lines = h.operator.logs().split('\n');
    const relayed = lines.findIndex(
      (l) =>
        l.includes('"msg":"stop relayed before leading"') &&
        l.includes(name) &&
        l.includes(`"signal":"${signal}"`),
    );
    const led = lines.findIndex((l) => l.includes('cache synced'));
    assert.ok(relayed >= 0, `the restarted operator relayed the ${signal} before leading`);
    assert.ok(relayed < led, `the ${signal} went out before the operator held the Lease`);
    return { name, relay: lines[relayed]! };
  }

  it('a pause set with kubectl while the operator is down holds before the restarted operator leads', async () => {
    const { name, relay } = await changeWhileOperatorDown('op-down-pause', 'pause', (n) =>
      kubectl(['patch', 'mp', n, '--type', 'merge', '-p', '{"spec":{"paused":true}}']),
    );
    assert.match(relay, /"nodeWorkflows":1/, 'the relay reached the node workflow directly too');
    const atLead = (await getPlan(name))!;
    assert.equal(atLead.status?.phase, 'Paused', 'Paused by the time the operator leads');
    const a0 = atLead.status?.evictionProgress?.attempts ?? 0;
    await slowBudget(1); // evictions are allowed again: only the pause holds the drain now
    await sleep(6000);
    const still = (await getPlan(name))!;
    assert.equal(still.status?.phase, 'Paused');
    assert.equal(still.status?.evictionProgress?.attempts, a0, 'no eviction while paused');
    assert.ok((still.status?.evictionProgress?.evicted ?? 0) < 8, 'the pause came before the end');

    kubectl(['patch', 'mp', name, '--type', 'merge', '-p', '{"spec":{"paused":false}}']);
    const done = await waitPlan(name, phaseIs('Drained'), 120_000, 'Drained after the resume');
    assert.equal(done.status?.evictionProgress?.evicted, 8);
    await deletePlan(name);
  });

  it('a plan deleted while the operator is down is aborted before the restarted operator leads', async () => {
    const [a] = nodes;
    const { name } = await changeWhileOperatorDown(
      'op-down-delete',
      'abort',
      (n) => kubectl(['delete', 'mp', n, '--wait=false']), // the finalizer holds it
    );
    await slowBudget(1); // evictions are allowed again: only the abort stops the drain now
    const left = (await podsOn(a, 'slow')).length;
    assert.ok(left > 0, 'the abort came before the end of the drain');
    await sleep(6000); // a pod every few seconds while the drain ran
    assert.equal((await podsOn(a, 'slow')).length, left, 'no eviction after the abort');
    await waitFor(async () => !(await getPlan(name)), 60_000, { what: 'the plan gone (finalizer removed)' });
    assert.equal(await isCordoned(a), false, 'the node handed back');
  });

  it('a pause set while the worker is down holds when it restarts: no eviction after the pause', async () => {
    const [a] = nodes;
    await slowPodsOn(a);
    // Every eviction is refused (403) until the policy goes: the pods wait out 5 s cooldowns.
    const policy = uniqueName('df-op-deny-evictions');
    await denyEvictions(c, ns, policy);
    try {
      const name = uniqueName('op-worker-down-pause');
      applyPlan(name, { nodeNames: [a], eviction: { retryBackoff: { initialSeconds: 5, maxSeconds: 5 } } });
      const plan = await waitPlan(
        name,
        (p) => (p.status?.evictionProgress?.attempts ?? 0) >= 1,
        60_000,
        'a refused eviction (cooling down)',
      );
      assert.equal(await h.worker!.stop('SIGKILL'), 'SIGKILL');
      const killedAt = Date.now();
      // The cooldown ends while no worker runs: its timer fires, so the node workflow has a workflow
      // task waiting from before the pause (and ahead of the plan's in the task queue).
      await sleep(12_000);
      allowEvictions(policy);
      kubectl(['patch', 'mp', name, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
      await waitFor(
        () =>
          h
            .operator!.logs()
            .split('\n')
            .some((l) => l.includes('"msg":"signal sent"') && l.includes(name) && l.includes('pause')),
        30_000,
        { what: 'the operator relayed the pause', intervalMs: 200 },
      );
      h.worker = await startWorkerProcess(h.opts.taskQueue, drainflowEnv());
      await waitPlan(name, phaseIs('Paused'), 30_000, 'Paused after the worker restarted');
      await sleep(6000);
      const history = await client.workflow.getHandle(nodeWorkflowId(wfId(plan), a)).fetchHistory();
      const late = (history.events ?? [])
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'evictPod')
        .map((e) => Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6))
        .filter((t) => t > killedAt);
      assert.deepEqual(
        late,
        [],
        'no eviction scheduled after the worker was killed (the pause came before its restart)',
      );
      const still = (await getPlan(name))!;
      assert.equal(still.status?.phase, 'Paused');
      assert.equal(still.status?.evictionProgress?.evicted ?? 0, 0, 'nothing evicted');

      kubectl(['patch', 'mp', name, '--type', 'merge', '-p', '{"spec":{"paused":false}}']);
      const done = await waitPlan(name, phaseIs('Drained'), 120_000, 'Drained after the resume');
      assert.equal(done.status?.evictionProgress?.evicted, 8);
      await deletePlan(name);
    } finally {
      allowEvictions(policy);
    }
  });

  it('ignores a burst of 200 status-only updates: no workflow start, no signal, no eviction', async () => {
    const [a] = nodes;
    await deploy('burst', 2, { prefer: [a] });
    const name = uniqueName('op-burst');
    applyPlan(name, { nodeNames: [a] });
    const drained = await waitPlan(name, phaseIs('Drained'), 90_000, 'Drained');
    await sleep(1500); // let the last status write land
    const actions0 = await operatorActions();
    const evictions0 = metricValue(await h.worker!.metrics(), 'drainflow_evictions_total');
    const attempts0 = (await getPlan(name))!.status!.evictionProgress!.attempts;
    const logBefore = h.operator!.logs().length;

    for (let i = 0; i < 200; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          c.custom.patchClusterCustomObjectStatus(
            {
              group: GROUP,
              version: VERSION,
              plural: PLURAL,
              name,
              body: { status: { message: `status-only update ${i + j}` } },
            },
            MERGE_PATCH,
          ),
        ),
      );
    }
    const after200 = (await getPlan(name))!;
    assert.equal(
      after200.metadata.generation,
      drained.metadata.generation,
      'status updates do not change the generation',
    );
    assert.match(after200.status!.message!, /status-only update/);
    // The operator saw the updates (debug log) and did nothing.
    await waitFor(() => h.operator!.logs().slice(logBefore).includes('no spec change'), 10_000, {
      what: 'operator saw the updates',
    });
    await sleep(3000);
    assert.equal(await operatorActions(), actions0, 'no operator action');
    assert.equal(
      metricValue(await h.worker!.metrics(), 'drainflow_evictions_total'),
      evictions0,
      'no eviction',
    );
    const later = (await getPlan(name))!;
    assert.equal(later.status!.evictionProgress!.attempts, attempts0);
    assert.equal(later.status!.phase, 'Drained');
    const newLines = h
      .operator!.logs()
      .slice(logBefore)
      .split('\n')
      .filter((l) => l.includes(`"plan":"${name}"`));
    assert.deepEqual(
      newLines.filter((l) => !l.includes('no spec change')),
      [],
      'nothing but no-ops logged for the plan',
    );
    assert.equal(await workflowRuns(wfId(drained)), 1);
    await deletePlan(name);
  });

  it('fails a plan naming a node that does not exist (NodeNotFound); it is still deletable', async () => {
    const name = uniqueName('op-missing');
    const missing = `${pool}-nope`;
    applyPlan(name, { nodeNames: [missing] });
    const failed = await waitPlan(name, phaseIs('Failed'), 60_000, 'Failed');
    assert.equal(failed.status?.reason, 'NodeNotFound');
    assert.match(failed.status?.message ?? '', new RegExp(missing));
    await deletePlan(name, 30_000);
  });

  it('kubectl get mp shows the node count of a plan that failed before resolving its nodes, -o wide its cordon policy and workflow', async () => {
    const name = uniqueName('op-count');
    applyPlan(name, { nodeNames: [`${pool}-nope-1`, `${pool}-nope-2`, `${pool}-nope-3`] });
    await waitPlan(name, phaseIs('Failed'), 60_000, 'Failed');
    // The workflow's final status has no nodes (nodesTotal 0); the operator fills in the count once.
    const plan = await waitPlan(name, (p) => p.status?.nodesTotal === 3, 30_000, 'nodesTotal 3');
    assert.equal(plan.status?.reason, 'NodeNotFound');
    const rows = (args: string[]) =>
      kubectl(['get', 'mp', name, ...args])
        .trim()
        .split('\n')
        .map((l) => l.trim().split(/\s+/));
    const [header, row] = rows([]);
    assert.deepEqual(header, [
      'NAME',
      'PHASE',
      'REASON',
      'DRAINED',
      'NODES',
      'EVICTED',
      'PODS',
      'ETA',
      'AGE',
    ]);
    assert.deepEqual(row?.slice(0, 5), [name, 'Failed', 'NodeNotFound', '0', '3']);
    const [wideHeader, wideRow] = rows(['-o', 'wide']);
    assert.deepEqual(wideHeader?.slice(-2), ['CORDON', 'WORKFLOW']);
    assert.deepEqual(wideRow?.slice(-2), ['PerNode', wfId(plan)]);
    await deletePlan(name, 30_000);
  });

  it('hands the Lease to a standby replica within seconds when the leader stops', async () => {
    const standby = await startDrainflow({ args: h.operatorArgs(await freePort()), env: drainflowEnv() });
    try {
      await sleep(3000);
      assert.doesNotMatch(standby.logs(), /became leader/, 'a standby does not act while the leader runs');
      const stoppedAt = Date.now();
      assert.equal(await h.operator!.stop('SIGTERM'), 0, 'the leader exits cleanly');
      assert.match(h.operator!.logs(), /released the Lease/);
      await waitFor(() => standby.logs().includes('cache synced'), 10_000, {
        what: 'standby takes over',
        intervalMs: 100,
      });
      const tookMs = Date.now() - stoppedAt;
      assert.ok(tookMs < 6000, `took over after ${tookMs} ms`);
      h.operator = standby; // the after() hook stops it
      const name = uniqueName('op-handover');
      applyPlan(name, { nodeNames: [nodes[0]] });
      await waitPlan(name, phaseIs('Drained'), 30_000, 'Drained under the new leader');
      await deletePlan(name);
    } catch (err) {
      if (h.operator !== standby) await standby.stop('SIGTERM');
      throw err;
    }
  });
});
