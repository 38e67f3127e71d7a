// test-lane: parallel
/**
 * Pods that come back (src/drain/returning.ts) on the real stack (kube-apiserver, the ReplicaSet
 * controller, scheduler, kwok, Temporal dev server, a `drainflow run --worker` process running as the
 * audited user bench-drainflow; plan workflows started directly, no operator):
 *
 * - a Deployment whose pods tolerate everything (`tolerations: [{operator: Exists}]`) and select the
 *   node by hostname: each evicted pod's replacement is scheduled back onto the cordoned node;
 * - a Deployment whose pod template sets `spec.nodeName`: the replacement is created bound to the
 *   node, no scheduler involved.
 *
 * For each: the Eviction calls (the stack's audit log) are at most the pods at the cordon +
 * RETURN_SLACK, the node ends Drained with the replacements listed under ReturnsToNode, and one
 * Warning Event ReturnsToNode names the ReplicaSet. Before the rule, the drain evicted each
 * replacement again: hundreds of calls a minute, until the deadline.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import type { MaintenancePlanSpecInput, MaintenancePlanStatus } from '../../src/api/plan.js';
import { PodPolicyReason } from '../../src/api/reasons.js';
import { RETURN_SLACK } from '../../src/drain/returning.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { auditLogFile, auditMark, auditedCalls } from '../helpers/audit.js';
import { planFinished, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { createTaintedNode, directHarness, drainflowEnv, requireEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';

const TAINT_KEY = 'drainflow.dev/e2e-returning';
/** The audited identity the worker runs as (the stack's audit log records its requests). */
const AUDITED_USER = 'bench-drainflow';

describe('pods that come back to the cordoned node', () => {
  const h = directHarness('returning-e2e', 'returning-run');
  let c: Clients;
  const namespaces: string[] = [];
  const nodes: string[] = [];
  const workflowIds: string[] = [];
  const plans: string[] = [];

  async function startPlan(name: string, spec: MaintenancePlanSpecInput): Promise<string> {
    const { uid, workflowId } = await h.startDirectPlan(name, spec);
    plans.push(name);
    workflowIds.push(workflowId);
    return uid;
  }

  const finished = (name: string): Promise<MaintenancePlanStatus> => planFinished(c, name);

  before(async () => {
    assert.ok(auditLogFile(), 'DRAINFLOW_AUDIT_LOG is not set: eval "$(bash scripts/stack/stack.sh env)"');
    await h.connect();
    c = h.c;
    h.worker = await startWorkerProcess(h.opts.taskQueue, {
      ...drainflowEnv(),
      KUBECONFIG: requireEnv('DRAINFLOW_BENCH_KUBECONFIG_DRAINFLOW'),
    });
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

  const cases: Array<{ what: string; replicas: number; shape: (d: V1Deployment, node: string) => void }> = [
    {
      what: 'a Deployment tolerating every taint ({operator: Exists}), scheduled to the node by hostname',
      replicas: 3,
      shape: (d, node) => {
        d.spec!.template.spec!.tolerations = [{ operator: 'Exists' }];
        d.spec!.template.spec!.nodeSelector = { 'kubernetes.io/hostname': node };
      },
    },
    {
      what: 'a Deployment whose pod template sets spec.nodeName',
      replicas: 2,
      shape: (d, node) => {
        d.spec!.template.spec!.nodeName = node;
      },
    },
  ];

  for (const { what, replicas, shape } of cases)
    it(`${what}: evicted once each, the replacements listed under ReturnsToNode, one Warning, the node Drained`, async () => {
      const node = await createTaintedNode(c, 'returning-node', { taint: { key: TAINT_KEY, value: 'x' } });
      nodes.push(node);
      const ns = await createNamespace(c, 'returning');
      namespaces.push(ns);
      const d = makeDeployment(ns, 'agent', replicas);
      shape(d, node);
      await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
      const before = await waitPodsReady(c, ns, { app: 'agent' }, replicas);
      assert.ok(before.every((p) => p.spec?.nodeName === node));

      const mark = auditMark(auditLogFile()!);
      const startedAt = Date.now();
      const planName = uniqueName('returning-plan');
      const uid = await startPlan(planName, { nodeNames: [node], drainTimeoutSeconds: 300 });
      const st = await finished(planName);
      const seconds = (Date.now() - startedAt) / 1000;
      const n = st.nodes?.find((x) => x.name === node);
      assert.equal(n?.phase === 'Drained' || n?.phase === 'Released', true, showStatus(st));
      const back = (n?.skipped ?? []).filter((p) => p.reason === PodPolicyReason.ReturnsToNode);
      assert.equal(back.length, replicas, showStatus(st));
      assert.match(n?.message ?? '', /came back to the node/, showStatus(st));

      const calls = (await auditedCalls(mark, [AUDITED_USER])).filter(
        (x) => x.resource === 'pods/eviction' && x.verb === 'create' && x.namespace === ns,
      );
      assert.ok(calls.length >= replicas, `each pod at the cordon evicted: ${calls.length}`);
      assert.ok(calls.length <= replicas + RETURN_SLACK, `Eviction calls bounded: ${calls.length}`);
      // Events are written asynchronously to the node's end: wait for the one Warning.
      const events = await waitFor(
        async () => {
          const e = (await h.planEvents(planName, uid)).filter(
            (x) => x.reason === PodPolicyReason.ReturnsToNode,
          );
          return e.length > 0 ? e : undefined;
        },
        15_000,
        { what: 'the ReturnsToNode Warning' },
      );
      console.log(
        `${what}: ${calls.length} Eviction call(s) for ${replicas} pod(s) at the cordon, node ${n?.phase} ` +
          `after ${seconds.toFixed(1)} s, ${back.length} pod(s) listed ReturnsToNode, ${events.length} Warning(s)`,
      );
      assert.equal(events.length, 1, JSON.stringify(events.map((e) => e.message)));
      assert.equal(events[0]!.count ?? 1, 1, 'recorded once');
      assert.equal(events[0]!.type, 'Warning');
      assert.match(events[0]!.message ?? '', new RegExp(`node ${node}: pods of ReplicaSet ${ns}/agent-`));
    });
});
