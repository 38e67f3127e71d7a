// test-lane: parallel
/**
 * Issue 34, the diagnosis kinds a lasting block shows, on the real stack (kube-apiserver with its
 * Deployment, ReplicaSet and disruption controllers, kube-scheduler, kwok, the Temporal dev server,
 * a `drainflow run --worker` process; the plan workflow started directly, no operator). Each case
 * has nodes of its own (tainted: no other pod lands there), a namespace and a plan:
 *
 * - ReplacementsUnschedulable: a Deployment of 2 pods that fit only the node to drain (its hostname
 *   as nodeSelector) behind `minAvailable: 1`. The plan cordons the node and evicts one pod; its
 *   replacement stays Pending (the only node it fits is cordoned), so the PDB allows nothing for
 *   the other pod. The blocker, the DisruptionBlocked condition, its Warning Event and
 *   `drainflow status` name the kind and quote the scheduler's message from the Pending pod's
 *   PodScheduled condition.
 * - UnhealthyElsewhere: a Deployment of 3 pods behind `minAvailable: 2`, one on the node to drain
 *   and two on another node, both of those made not Ready (their Ready condition set False, as a
 *   kubelet reports a failing readiness probe; kwok sets Ready once and not again). currentHealthy
 *   1 < desiredHealthy 2: the kind names the two pods, their node and their state (NotReady). One
 *   pod not Ready would not do: with a budget that is not Never (desiredHealthy below the pods
 *   expected), all the others Ready keep currentHealthy at desiredHealthy or above, which the
 *   diagnosis reads as Transient (src/drain/pdb-diagnosis.ts).
 *
 * Each: exactly one DisruptionBlocked Warning Event (one per PDB and kind, not per attempt),
 * counted after waiting for it (the plan sends Events as activities side by side) and again after
 * more observations. The pods are read only once a block lasted 30 s (LASTING_BLOCK_MS of
 * src/activities/pdb-diagnose.ts, a product rule), so each case waits that out; the two cases run
 * side by side to pay it once. `eviction.retryBackoff.maxSeconds` 5 makes the blocked node look
 * again every 5 s at most, so the read comes soon after the 30 s.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { abortSignal } from '../../src/contract/plan-messages.js';
import type { Blocker, MaintenancePlanStatus } from '../../src/api/plan.js';
import { readPlanStatus, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
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
  EVENT_NAMESPACE,
  MERGE_PATCH,
  createTaintedNode,
  directHarness,
  drainflowEnv,
} from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';
import { runCommand } from './cli-fixtures.js';

const TAINT_KEY = 'drainflow.dev/e2e-pdb-kinds';
const TOLERATION = { key: TAINT_KEY, operator: 'Equal', value: 'x', effect: 'NoSchedule' };
/** The node looks again every 5 s at most while blocked (default 120 s). */
const FAST_EVICTION = { retryBackoff: { initialSeconds: 1, maxSeconds: 5 } };
/** How long a case waits for its kind: the 30 s before the pods are read, observations, margin. */
const KIND_WITHIN_MS = 90_000;

/** The scheduler's words for a pod that fits only a cordoned node (kube-scheduler 1.34). */
const UNSCHEDULABLE_WORDS = /^0\/\d+ nodes are available: .*\d+ node\(s\) were unschedulable/;
/** `0/7 nodes are available: ...` with the node counts as `N` (other files add and remove nodes). */
const countsAway = (s: string) => s.replace(/\d+/g, 'N');

describe('the kinds of a lasting PodDisruptionBudget block (issue 34)', { concurrency: true }, () => {
  const h = directHarness('pdbkinds-e2e', 'pdbkinds-run');
  let c: Clients;
  const namespaces: string[] = [];
  const nodes: string[] = [];
  const workflowIds: string[] = [];

  before(async () => {
    await h.connect();
    c = h.c;
    h.worker = await startWorkerProcess(h.opts.taskQueue, drainflowEnv());
  });

  after(async () => {
    for (const id of workflowIds) {
      const handle = h.client.workflow.getHandle(id);
      await handle.signal(abortSignal).catch(() => undefined);
      const giveUp = new Promise((resolve) => setTimeout(resolve, 20_000).unref());
      await Promise.race([handle.result().catch(() => undefined), giveUp]);
    }
    await h.stop();
    if (!c) return;
    for (const name of h.allPlans) await h.deletePlanObject(name).catch(() => undefined);
    for (const ns of namespaces) await deleteNamespace(c, ns).catch(() => undefined);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  async function node(prefix: string, labels?: Record<string, string>): Promise<string> {
    const n = await createTaintedNode(c, prefix, {
      taint: { key: TAINT_KEY, value: 'x' },
      ...(labels ? { labels } : {}),
    });
    nodes.push(n);
    return n;
  }

  async function namespace(prefix: string): Promise<string> {
    const ns = await createNamespace(c, prefix);
    namespaces.push(ns);
    return ns;
  }

  /** Starts a plan for `target`. @returns its name and the time it started (ms since epoch). */
  async function startPlan(tag: string, target: string): Promise<{ name: string; startedAt: number }> {
    const name = uniqueName(`pdbkinds-${tag}`);
    const startedAt = Date.now();
    const { workflowId } = await h.startDirectPlan(name, {
      nodeNames: [target],
      drainTimeoutSeconds: 600,
      eviction: FAST_EVICTION,
    });
    workflowIds.push(workflowId);
    return { name, startedAt };
  }

  /**
   * Waits until the plan's node reports a blocker of `kind`. @returns it, the status then, and how
   * long after the plan's start it came (ms); also since the first blocker of any kind (ms).
   */
  async function blockerOfKind(name: string, startedAt: number, kind: string) {
    let firstBlockedAt: number | undefined;
    let last: MaintenancePlanStatus | undefined;
    const st = await waitFor(
      async () => {
        last = await readPlanStatus(c, name);
        const bs = last?.nodes?.[0]?.blockedBy ?? [];
        if (bs.length > 0) firstBlockedAt ??= Date.now();
        return bs.some((b) => b.kind === kind) ? last : undefined;
      },
      KIND_WITHIN_MS,
      { what: `a ${kind} blocker in plan ${name}`, intervalMs: 250 },
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${showStatus(last)}`, { cause: err });
    });
    const at = Date.now();
    const b = st.nodes![0]!.blockedBy!.find((x) => x.kind === kind)!;
    return { b, st, afterStartMs: at - startedAt, afterFirstBlockMs: at - (firstBlockedAt ?? at) };
  }

  const warnings = async (name: string) =>
    (
      await c.core.listNamespacedEvent({
        namespace: EVENT_NAMESPACE,
        fieldSelector: `involvedObject.name=${name},reason=DisruptionBlocked`,
      })
    ).items;

  /**
   * Waits for the plan's DisruptionBlocked Warning, then, after more observations (the node looks
   * again every 5 s at most, the diagnosis is read again every 30 s), checks there is still one.
   * @returns its message.
   */
  async function oneWarning(name: string, kind: string): Promise<string> {
    const first = await waitFor(
      async () => ((await warnings(name)).length > 0 ? warnings(name) : undefined),
      15_000,
      {
        what: `the DisruptionBlocked Warning of plan ${name}`,
        intervalMs: 250,
      },
    );
    assert.equal(first.length, 1, first.map((e) => e.message).join('\n'));
    await sleep(12_000);
    const later = await warnings(name);
    assert.equal(later.length, 1, `one Warning per PDB and kind: ${later.map((e) => e.message).join('\n')}`);
    const e = later[0]!;
    assert.equal(e.type, 'Warning');
    assert.equal(e.count ?? 1, 1, 'not repeated');
    assert.ok(e.message?.includes(`(${kind})`), e.message);
    return e.message!;
  }

  /** `drainflow status PLAN` as a user runs it: exit 0, its output. */
  async function cliStatus(name: string): Promise<string> {
    const res = await runCommand(['status', name], {
      env: { ...process.env, ...drainflowEnv() },
      timeoutMs: 60_000,
    });
    assert.equal(res.code, 0, `${res.out}\n${res.err}`);
    return res.out;
  }

  /** The DisruptionBlocked condition: True, reason `kind`, its message containing `b`'s words. */
  function assertCondition(st: MaintenancePlanStatus, b: Blocker, kind: string): void {
    const cond = st.conditions?.find((x) => x.type === 'DisruptionBlocked');
    assert.equal(cond?.status, 'True', showStatus(st));
    assert.equal(cond?.reason, kind, showStatus(st));
    assert.ok(cond?.message.includes(b.message), `${cond?.message}\nvs ${b.message}`);
  }

  it("ReplacementsUnschedulable: the replacement fits only the cordoned node; the scheduler's reason quoted", async () => {
    const target = await node('pdbkinds-unsched');
    const ns = await namespace('pdbkinds-unsched');
    const labels = { app: 'web' };
    const d = makeDeployment(ns, 'web', 2, { labels, hostname: target });
    d.spec!.template.spec!.tolerations = [TOLERATION];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    await waitPodsReady(c, ns, labels, 2);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', labels, { minAvailable: 1 }),
    });
    await waitPdb(c, ns, 'web', (p) => p.status?.expectedPods === 2 && p.status.disruptionsAllowed === 1);

    const { name, startedAt } = await startPlan('unsched', target);
    const kind = 'ReplacementsUnschedulable';
    const { b, st, afterStartMs, afterFirstBlockMs } = await blockerOfKind(name, startedAt, kind);

    // The Pending replacement, as the API server has it: PodScheduled False, Unschedulable.
    const pods = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items;
    const pending = pods.filter((p) => !p.spec?.nodeName && !p.metadata?.deletionTimestamp);
    assert.equal(pending.length, 1, pods.map((p) => `${p.metadata?.name} ${p.status?.phase}`).join(', '));
    const sched = pending[0]!.status?.conditions?.find((x) => x.type === 'PodScheduled');
    assert.equal(sched?.status, 'False');
    assert.equal(sched?.reason, 'Unschedulable');
    const pendingKey = `${ns}/${pending[0]!.metadata!.name!}`;

    assert.equal(b.pdb, `${ns}/web`, showStatus(st));
    assert.equal(b.owner, `Deployment ${ns}/web`, showStatus(st));
    assert.equal(b.reason, 'DisruptionBudget');
    const still = pods.find((p) => p.spec?.nodeName === target && !p.metadata?.deletionTimestamp);
    assert.equal(b.pod, `${ns}/${still?.metadata?.name}`, showStatus(st));
    assert.ok(b.message.includes(`cannot be scheduled (${kind}): ${pendingKey} (Pending)`), b.message);
    const quoted = /the scheduler says "([^"]+)"/.exec(b.message)?.[1];
    assert.ok(quoted, `the scheduler is quoted: ${b.message}`);
    // The scheduler rewrites its message as nodes come and go (other files add and cordon theirs):
    // both read 0/N nodes available, cordoned ones (the target) among them.
    for (const m of [quoted, sched!.message!]) assert.match(m, UNSCHEDULABLE_WORDS);
    if (countsAway(quoted) !== countsAway(sched!.message!))
      console.log(`the pod's message moved on since the diagnosis: ${sched!.message!}`);
    assertCondition(st, b, kind);

    const event = await oneWarning(name, kind);
    assert.ok(event.includes(`node ${target}: pod ${b.pod}: `) && event.includes(quoted), event);
    const out = await cliStatus(name);
    assert.ok(
      out.includes(`blocked by ${b.pod} (PodDisruptionBudget ${ns}/web): DisruptionBudget ${kind}`),
      out,
    );
    assert.ok(out.includes(`the scheduler says "`) && out.includes(pendingKey), out);
    console.log(
      `${kind}: the kind ${(afterStartMs / 1000).toFixed(1)} s after the plan started, ${(afterFirstBlockMs / 1000).toFixed(1)} s after the first blocker`,
    );
  });

  it('UnhealthyElsewhere: two replicas on another node not Ready, named with their state', async () => {
    const pool = { 'drainflow.dev/pool': uniqueName('pdbkinds-unhealthy') };
    const target = await node('pdbkinds-unhealthy', pool);
    const other = await node('pdbkinds-unhealthy-other', pool);
    const ns = await namespace('pdbkinds-unhealthy');
    const labels = { app: 'api' };
    // One pod on the target (the other node cordoned), then two on the other (the target cordoned).
    await setUnschedulable(c, other, true);
    const d = makeDeployment(ns, 'api', 1, { labels });
    d.spec!.template.spec!.nodeSelector = pool;
    d.spec!.template.spec!.tolerations = [TOLERATION];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    const [here] = await waitPodsReady(c, ns, labels, 1);
    assert.equal(here!.spec?.nodeName, target);
    await setUnschedulable(c, target, true);
    await setUnschedulable(c, other, false);
    await c.apps.patchNamespacedDeployment(
      { namespace: ns, name: 'api', body: { spec: { replicas: 3 } } },
      MERGE_PATCH,
    );
    const all = await waitPodsReady(c, ns, labels, 3);
    await setUnschedulable(c, target, false);
    const elsewhere = all.filter((p) => p.metadata!.name !== here!.metadata!.name);
    assert.deepEqual(
      elsewhere.map((p) => p.spec?.nodeName),
      [other, other],
    );
    for (const p of elsewhere) await makeNotReady(p);
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'api', labels, { minAvailable: 2 }),
    });
    await waitPdb(
      c,
      ns,
      'api',
      (p) =>
        p.status?.expectedPods === 3 &&
        p.status.currentHealthy === 1 &&
        p.status.desiredHealthy === 2 &&
        p.status.disruptionsAllowed === 0,
    );

    const { name, startedAt } = await startPlan('unhealthy', target);
    const kind = 'UnhealthyElsewhere';
    const { b, st, afterStartMs, afterFirstBlockMs } = await blockerOfKind(name, startedAt, kind);
    assert.equal(b.pod, `${ns}/${here!.metadata!.name}`, showStatus(st));
    assert.equal(b.pdb, `${ns}/api`);
    assert.equal(b.owner, `Deployment ${ns}/api`);
    const named = elsewhere
      .map((p) => `${ns}/${p.metadata!.name} on ${other} (NotReady)`)
      .sort()
      .join(', ');
    assert.ok(
      b.message.includes(
        `fewer healthy pods than it wants (2) because of pods of Deployment ${ns}/api on other nodes (${kind}): ${named}`,
      ),
      `${b.message}\nwants: ${named}`,
    );
    assertCondition(st, b, kind);

    const event = await oneWarning(name, kind);
    assert.ok(event.includes(`node ${target}: pod ${b.pod}: `) && event.includes(named), event);
    const out = await cliStatus(name);
    assert.ok(
      out.includes(`blocked by ${b.pod} (PodDisruptionBudget ${ns}/api): DisruptionBudget ${kind}`),
      out,
    );
    assert.ok(out.includes(named), out);
    console.log(
      `${kind}: the kind ${(afterStartMs / 1000).toFixed(1)} s after the plan started, ${(afterFirstBlockMs / 1000).toFixed(1)} s after the first blocker`,
    );
  });

  /** Sets the pod's Ready condition False, as the kubelet reports a failing readiness probe. */
  async function makeNotReady(p: V1Pod): Promise<void> {
    const now = new Date().toISOString();
    const cond = (type: string, status: string) => ({ type, status, lastTransitionTime: now });
    await c.core.patchNamespacedPodStatus(
      {
        namespace: p.metadata!.namespace!,
        name: p.metadata!.name!,
        body: {
          status: {
            conditions: [
              cond('Initialized', 'True'),
              cond('PodScheduled', 'True'),
              cond('ContainersReady', 'False'),
              cond('Ready', 'False'),
            ],
          },
        },
      },
      MERGE_PATCH,
    );
  }
});
