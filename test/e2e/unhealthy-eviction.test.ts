// test-lane: parallel
/**
 * Evict what the API server would evict (src/drain/eviction-gate.ts) on the real stack
 * (kube-apiserver with its eviction subresource, the disruption controller, kwok, Temporal dev
 * server, a `drainflow run --worker` process running as the audited user bench-drainflow; plan
 * workflows started directly, no operator).
 *
 * A Deployment `web` of two Ready replicas on another node and one replica on the node to drain
 * whose Ready condition the test sets False (a crash-looping pod as the kubelet reports it), all
 * behind one PodDisruptionBudget that allows 0 disruptions:
 *
 * - `unhealthyPodEvictionPolicy` absent (IfHealthyBudget), minAvailable 2: currentHealthy 2 >=
 *   desiredHealthy 2: the API server evicts the not-Ready pod; drained with one Eviction call;
 * - AlwaysAllow, minAvailable 3 (currentHealthy 2 < desiredHealthy 3): drained with one call;
 * - IfHealthyBudget, minAvailable 3: not evicted (no call), the node Blocked at its deadline with
 *   the pod waiting for its PodDisruptionBudget.
 *
 * `drainflow preflight` of the node exits 0 where the drain finishes and 2 where it does not.
 * Before the rule, the drain waited for `disruptionsAllowed` in the first two cases too, until its
 * deadline, while preflight exited 0.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { MaintenancePlanSpecInput, MaintenancePlanStatus } from '../../src/api/plan.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { auditLogFile, auditMark, auditedCalls } from '../helpers/audit.js';
import { planFinished, showStatus } from '../helpers/direct-plan.js';
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
import {
  MERGE_PATCH,
  createTaintedNode,
  directHarness,
  drainflowEnv,
  requireEnv,
} from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';
import { runCommand } from './cli-fixtures.js';

const TAINT_KEY = 'drainflow.dev/e2e-unhealthy';
/** The audited identity the worker and the CLI run as (the stack's audit log records its requests). */
const AUDITED_USER = 'bench-drainflow';

describe('a not-Ready pod behind a PodDisruptionBudget allowing 0', () => {
  const h = directHarness('unhealthy-e2e', 'unhealthy-run');
  let c: Clients;
  const namespaces: string[] = [];
  const nodes: string[] = [];
  const workflowIds: string[] = [];
  const plans: string[] = [];
  const auditedEnv = () => ({
    ...drainflowEnv(),
    KUBECONFIG: requireEnv('DRAINFLOW_BENCH_KUBECONFIG_DRAINFLOW'),
  });

  async function startPlan(name: string, spec: MaintenancePlanSpecInput): Promise<void> {
    const { workflowId } = await h.startDirectPlan(name, spec);
    plans.push(name);
    workflowIds.push(workflowId);
  }

  const finished = (name: string): Promise<MaintenancePlanStatus> => planFinished(c, name);

  before(async () => {
    assert.ok(auditLogFile(), 'DRAINFLOW_AUDIT_LOG is not set: eval "$(bash scripts/stack/stack.sh env)"');
    await h.connect();
    c = h.c;
    h.worker = await startWorkerProcess(h.opts.taskQueue, auditedEnv());
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
    for (const name of plans) await h.deletePlanObject(name).catch(() => undefined);
    for (const ns of namespaces) await deleteNamespace(c, ns).catch(() => undefined);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  /** A Deployment `part` of `replicas` pods labelled app=web, placed on `node`. */
  async function webPart(ns: string, part: string, node: string, replicas: number): Promise<V1Pod[]> {
    const labels = { app: 'web', part };
    const d = makeDeployment(ns, `web-${part}`, replicas, { labels, hostname: node });
    d.spec!.template.spec!.tolerations = [
      { key: TAINT_KEY, operator: 'Equal', value: 'x', effect: 'NoSchedule' },
    ];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    return waitPodsReady(c, ns, labels, replicas);
  }

  /** Sets the pod's Ready condition False, as the kubelet reports a crash-looping container. */
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

  const cases = [
    {
      what: 'IfHealthyBudget (absent), currentHealthy 2 >= desiredHealthy 2',
      minAvailable: 2,
      policy: undefined,
      drains: true,
    },
    {
      what: 'AlwaysAllow, currentHealthy 2 < desiredHealthy 3',
      minAvailable: 3,
      policy: 'AlwaysAllow',
      drains: true,
    },
    {
      what: 'IfHealthyBudget, currentHealthy 2 < desiredHealthy 3',
      minAvailable: 3,
      policy: 'IfHealthyBudget',
      drains: false,
    },
  ] as const;

  for (const { what, minAvailable, policy, drains } of cases)
    it(`${what}: ${drains ? 'drained with one Eviction call' : 'not evicted, the node Blocked'}; preflight agrees`, async () => {
      const node = await createTaintedNode(c, 'sick-node', { taint: { key: TAINT_KEY, value: 'x' } });
      const other = await createTaintedNode(c, 'healthy-node', { taint: { key: TAINT_KEY, value: 'x' } });
      nodes.push(node, other);
      const ns = await createNamespace(c, 'unhealthy');
      namespaces.push(ns);
      await webPart(ns, 'healthy', other, 2);
      const [sick] = await webPart(ns, 'sick', node, 1);
      await makeNotReady(sick!);
      const pdb = makePdb(ns, 'web', { app: 'web' }, { minAvailable });
      if (policy) pdb.spec!.unhealthyPodEvictionPolicy = policy;
      await c.policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: pdb });
      await waitPdb(
        c,
        ns,
        'web',
        (p) =>
          p.status?.currentHealthy === 2 &&
          p.status.desiredHealthy === minAvailable &&
          p.status.disruptionsAllowed === 0,
      );

      // Preflight: exit 0 exactly where the drain finishes.
      const pf = await runCommand(['preflight', '--nodes', node, '-o', 'json'], {
        env: { ...process.env, KUBECONFIG: auditedEnv().KUBECONFIG },
      });
      assert.equal(pf.code, drains ? 0 : 2, `${pf.out}\n${pf.err}`);

      const mark = auditMark(auditLogFile()!);
      const startedAt = Date.now();
      const planName = uniqueName('unhealthy-plan');
      await startPlan(planName, { nodeNames: [node], drainTimeoutSeconds: drains ? 300 : 20 });
      const st = await finished(planName);
      const seconds = (Date.now() - startedAt) / 1000;
      const n = st.nodes?.find((x) => x.name === node);
      const calls = (await auditedCalls(mark, [AUDITED_USER])).filter(
        (x) =>
          x.resource === 'pods/eviction' &&
          x.verb === 'create' &&
          x.name === sick!.metadata!.name &&
          !x.dryRun,
      );
      console.log(
        `${what}: ${calls.length} Eviction call(s) (${calls.map((x) => x.code).join(', ') || 'none'}), node ${n?.phase}/${n?.reason} after ${seconds.toFixed(1)} s`,
      );
      if (drains) {
        assert.equal(n?.phase === 'Drained' || n?.phase === 'Released', true, showStatus(st));
        assert.deepEqual(
          calls.map((x) => x.code),
          [201],
          'one call, accepted',
        );
      } else {
        assert.equal(n?.phase, 'Blocked', showStatus(st));
        assert.equal(calls.length, 0, 'never sent');
        assert.ok(
          (n?.blockedBy ?? []).some((b) => b.pod === `${ns}/${sick!.metadata!.name}`),
          showStatus(st),
        );
        const now = await c.core.readNamespacedPod({ namespace: ns, name: sick!.metadata!.name! });
        assert.equal(now.metadata?.deletionTimestamp, undefined, 'not evicted');
      }
    });
});
