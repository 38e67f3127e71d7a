// test-lane: serial (asserts every write of the audited user bench-drainflow, which the workers of returning-pods and unhealthy-eviction also use)
/**
 * Preflight on the real stack (kube-apiserver, kube-controller-manager, kwok, Temporal dev server, a
 * `drainflow run --worker` process; the plan workflow started directly, no operator).
 *
 * One tainted kwok node holds a pod of every blocker kind, plus pods that a drain would evict:
 *
 * | pods                           | expected                                                  |
 * | ------------------------------ | --------------------------------------------------------- |
 * | web ×3, PDB maxUnavailable 1   | evicted, dry-run accepted, the PDB needs 3 rounds        |
 * | db, PDB minAvailable 1 (of 1)  | DisruptionBudget; dry-run refused 429                     |
 * | shared, PDBs shared-a, shared-b | MultiplePodDisruptionBudgets naming both; dry-run 500   |
 * | stale, owned by a ConfigMap, PDB maxUnavailable 1 | PdbNotSynced (the disruption controller finds no scale: SyncFailed); dry-run 429 |
 * | sick (Ready False), PDB minAvailable 1 | UnhealthyPodGuarded; dry-run 429                   |
 * | batch, karpenter.sh/do-not-disrupt "true" | DoNotDisrupt only: not to evict, no dry run (a drain never evicts it) |
 * | bare pod                       | NoController (not dry-run: never evicted)                 |
 * | cache, emptyDir                | EmptyDirData                                              |
 * | agent (DaemonSet), ignoreDaemonSets false | DaemonSetPod                                   |
 *
 * Every Deployment's pod template sets spec.nodeName (the fixture binds them so): the report warns
 * that the pods to evict of web, db, shared and sick would come back (`returning`,
 * NodeNameInTemplate, read from their ReplicaSets, named by Deployment), without a blocker. A second
 * node holds a StatefulSet and a Job pinned the same way and a Deployment tolerating the cordon by
 * hostname (PinnedToNode): `drainflow preflight` names all three and exits 0.
 *
 * A Preflight plan of that node ends Previewed with each of them in status.preflight (started
 * directly, and through a `drainflow run --operator` process), and `drainflow preflight` prints the
 * same, exiting 2 (BlockersFound; 0 for the same node with `--pod-selector app=web`). Around each, the API server's own request counters (apiserver_request_total) count the
 * dry-run evictions and no other eviction, and the audit log of drainflow's identity (the worker
 * and the CLI run as the audited user `bench-drainflow`) shows no write but dry-run evictions, the
 * plan's status and its Events: no pod DELETE, no node PATCH/PUT. The node is not cordoned or
 * claimed, and every pod is still there, not terminating.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, type V1Pod } from '@kubernetes/client-node';
import { NODE_CLAIM_ANNOTATION } from '../../src/api/plan.js';
import type { PreflightNode, PreflightReport } from '../../src/api/preflight.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { runCommand } from './cli-fixtures.js';
import {
  createDirectPlan,
  createPlanObject,
  refusedPlanStatus,
  readPlanStatus,
  showStatus,
} from '../helpers/direct-plan.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDaemonSet,
  makeDeployment,
  makePdb,
  makePod,
  makePodSpec,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import {
  MERGE_PATCH,
  createTaintedNode,
  directHarness,
  drainflowEnv,
  kubectl,
  requireEnv,
} from '../helpers/operator-harness.js';
import { kubectlPath } from '../helpers/binaries.js';
import { auditLogFile, auditMark, auditedCalls, type AuditMark } from '../helpers/audit.js';
import { metricValue, startWorkerProcess } from '../helpers/processes.js';

const TAINT_KEY = 'drainflow.dev/e2e-preflight';
const TOLERATION = { key: TAINT_KEY, operator: 'Equal', value: 'x', effect: 'NoSchedule' };

/** The API server's request counters that a preflight must leave alone, and the dry-run evictions it makes. */
interface Counters {
  /** Eviction calls without dryRun, from every client. */
  evictions: number;
  /** Eviction calls with dryRun=All, from every client. */
  dryRunEvictions: number;
}

/** The API server's eviction counters (apiserver_request_total), with and without dryRun. */
function requestCounters(): Counters {
  // The API server's /metrics is larger than execFileSync's default 1 MiB buffer.
  const text = execFileSync(kubectlPath(), ['get', '--raw', '/metrics'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const m = (labels: Record<string, string>) => metricValue(text, 'apiserver_request_total', labels);
  return {
    evictions: m({ resource: 'pods', subresource: 'eviction', verb: 'POST', dry_run: '' }),
    dryRunEvictions: m({ resource: 'pods', subresource: 'eviction', verb: 'POST', dry_run: 'All' }),
  };
}

/** The stack's audit log (`stack.sh env` exports DRAINFLOW_AUDIT_LOG). */
function auditLog(): string {
  const f = auditLogFile();
  if (!f) throw new Error('DRAINFLOW_AUDIT_LOG is not set: eval "$(bash scripts/stack/stack.sh env)"');
  return f;
}

/** The audited identity drainflow runs as here (the stack's audit log records its requests). */
const AUDITED_USER = 'bench-drainflow';

/** drainflow's environment with the audited identity's kubeconfig. */
function auditedEnv(): NodeJS.ProcessEnv {
  return { ...drainflowEnv(), KUBECONFIG: requireEnv('DRAINFLOW_BENCH_KUBECONFIG_DRAINFLOW') };
}

/**
 * Asserts from the audit log that drainflow's requests since `mark` changed nothing but the plan's
 * status and Events: every eviction a dry run (`expectedDryRuns` of them), no pod deleted, no node
 * written.
 */
async function assertOnlyDryRuns(mark: AuditMark, expectedDryRuns: number): Promise<void> {
  const calls = await auditedCalls(mark, [AUDITED_USER]);
  const writes = calls.filter((x) => !['get', 'list', 'watch'].includes(x.verb));
  const show = writes
    .map((x) => `${x.verb} ${x.resource}${x.dryRun ? ' (dry run)' : ''} ${x.code}`)
    .join('\n');
  const evictions = writes.filter((x) => x.resource === 'pods/eviction');
  assert.equal(evictions.filter((x) => x.dryRun).length, expectedDryRuns, show);
  assert.deepEqual(
    writes.filter(
      (x) =>
        !x.dryRun &&
        !(x.resource === 'maintenanceplans/status' && x.verb === 'update') &&
        !(x.resource === 'events' && ['create', 'patch'].includes(x.verb)),
    ),
    [],
    `only dry-run evictions, status writes and Events:\n${show}`,
  );
}

/** The reasons of a node report's blockers, by pod name (namespace dropped). */
function blockersByPod(n: PreflightNode): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const b of n.blockers ?? []) {
    const name = (b.pod ?? '').split('/')[1] ?? '';
    const app = name.replace(/-[a-z0-9]+-[a-z0-9]+$/, '').replace(/-[a-z0-9]{5}$/, '');
    (out[app] ??= []).push(b.reason);
  }
  return out;
}

describe('preflight on the real stack', () => {
  const h = directHarness('preflight-e2e', 'preflight-run');
  const planName = uniqueName('preflight-plan');
  let c: Clients;
  let ns = '';
  let node = '';
  let workflowId = '';
  let podsBefore: V1Pod[] = [];

  before(async () => {
    await h.connect();
    c = h.c;
    const worker = startWorkerProcess(h.opts.taskQueue, auditedEnv()).then((p) => (h.worker = p));
    const fixture = (async () => {
      ns = await createNamespace(c, 'preflight');
      node = await createTaintedNode(c, 'preflight-node', { taint: { key: TAINT_KEY, value: 'x' } });
      const onNode = { nodeName: node };
      const deploy = async (
        name: string,
        replicas: number,
        opts: Parameters<typeof makeDeployment>[3] = {},
      ) => {
        const d = makeDeployment(ns, name, replicas, { ...onNode, ...opts });
        d.spec!.template.spec!.tolerations = [TOLERATION];
        await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
      };
      const pdb = (name: string, app: string, budget: Parameters<typeof makePdb>[3]) =>
        c.policy.createNamespacedPodDisruptionBudget({
          namespace: ns,
          body: makePdb(ns, name, { app }, budget),
        });
      await deploy('web', 3);
      await pdb('web', 'web', { maxUnavailable: 1 });
      await deploy('db', 1);
      await pdb('db', 'db', { minAvailable: 1 });
      await deploy('shared', 1);
      await pdb('shared-a', 'shared', { maxUnavailable: 1 });
      await pdb('shared-b', 'shared', { maxUnavailable: 1 });
      await deploy('sick', 1);
      await pdb('sick', 'sick', { minAvailable: 1 });
      await deploy('batch', 1, { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
      await deploy('cache', 1, { emptyDir: true });
      await c.core.createNamespacedPod({ namespace: ns, body: makePod(ns, 'bare', onNode) });
      const ds = makeDaemonSet(ns, 'agent', { hostname: node });
      ds.spec!.template.spec!.tolerations = [TOLERATION];
      await c.apps.createNamespacedDaemonSet({ namespace: ns, body: ds });
      // A pod whose controller is a ConfigMap: the disruption controller finds no scale for it, so a
      // PDB needing the expected count (maxUnavailable) fails to sync (SyncFailed, disruptionsAllowed 0).
      const cm = await c.core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: 'stale-owner' } },
      });
      const stale = makePod(ns, 'stale', onNode);
      stale.metadata!.ownerReferences = [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'stale-owner',
          uid: cm.metadata!.uid!,
          controller: true,
        },
      ];
      await c.core.createNamespacedPod({ namespace: ns, body: stale });
      await pdb('stale', 'stale', { maxUnavailable: 1 });

      for (const [app, n] of [
        ['web', 3],
        ['db', 1],
        ['shared', 1],
        ['sick', 1],
        ['batch', 1],
        ['cache', 1],
        ['bare', 1],
        ['agent', 1],
        ['stale', 1],
      ] as const)
        await waitPodsReady(c, ns, { app }, n);
      // sick: Running but not Ready (kwok sets Ready once, when the pod gets its IP, and not again).
      const [sick] = await waitPodsReady(c, ns, { app: 'sick' }, 1);
      await c.core.patchNamespacedPodStatus(
        {
          namespace: ns,
          name: sick!.metadata!.name!,
          body: {
            status: {
              conditions: [
                { type: 'Ready', status: 'False', reason: 'E2eUnhealthy' },
                { type: 'ContainersReady', status: 'False', reason: 'E2eUnhealthy' },
                { type: 'PodScheduled', status: 'True' },
                { type: 'Initialized', status: 'True' },
              ],
            },
          },
        },
        MERGE_PATCH,
      );
      await waitPdb(c, ns, 'web', (p) => p.status?.disruptionsAllowed === 1);
      await waitPdb(c, ns, 'db', (p) => p.status?.currentHealthy === 1 && p.status?.disruptionsAllowed === 0);
      await waitPdb(c, ns, 'sick', (p) => p.status?.currentHealthy === 0 && p.status?.desiredHealthy === 1);
      await waitPdb(c, ns, 'shared-a');
      await waitPdb(c, ns, 'shared-b');
      await waitFor(
        async () => {
          const p = await c.policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'stale' });
          return p.status?.conditions?.some((x) => x.reason === 'SyncFailed') ? p : undefined;
        },
        60_000,
        { what: 'PDB stale SyncFailed' },
      );
      podsBefore = (await c.core.listNamespacedPod({ namespace: ns })).items;
    })();
    const results = await Promise.allSettled([worker, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    if (workflowId) {
      const handle = h.client.workflow.getHandle(workflowId);
      await handle.signal(abortSignal).catch(() => undefined);
    }
    await h.stop();
    if (c) {
      await h.deletePlanObject(planName).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      if (node) await deleteNode(c, node).catch(() => undefined);
    }
  });

  /** Asserts the report of the fixture node: every blocker kind, the dry-run verdicts, the rounds. */
  function assertReport(r: PreflightReport): void {
    assert.equal(r.nodesExamined, 1);
    const n = r.nodes[0]!;
    assert.equal(n.name, node);
    // Evict: web ×3, db, shared, sick, stale; batch (do-not-disrupt) is a blocker only.
    assert.equal(n.podsToEvict, 7, JSON.stringify(n));
    assert.ok(!(n.evict ?? []).some((e) => e.pod.startsWith(`${ns}/batch-`)), 'batch is not to evict');
    assert.deepEqual(blockersByPod(n), {
      bare: ['NoController'],
      batch: ['DoNotDisrupt'],
      cache: ['EmptyDirData'],
      agent: ['DaemonSetPod'],
      db: ['DisruptionBudget'],
      shared: ['MultiplePodDisruptionBudgets'],
      sick: ['UnhealthyPodGuarded'],
      stale: ['PdbNotSynced'],
    });
    assert.equal(n.blockerCount, 8);
    const shared = n.blockers!.find((b) => b.reason === 'MultiplePodDisruptionBudgets')!;
    assert.deepEqual(shared.pdbs, [`${ns}/shared-a`, `${ns}/shared-b`]);
    assert.match(shared.message, /shared-a, .*shared-b/);
    // The server's verdicts: web ×3 accepted; db, sick and stale refused 429, shared 500; batch not asked.
    assert.equal(n.dryRunAccepted, 3, JSON.stringify(n.dryRunRefusals));
    assert.equal(n.dryRunRefused, 4);
    const refusal = (app: string) =>
      n.dryRunRefusals!.find((x) => x.pod.startsWith(`${ns}/${app}-`) || x.pod === `${ns}/${app}`);
    assert.equal(refusal('db')?.code, 429);
    assert.equal(refusal('db')?.reason, 'DisruptionBudget');
    assert.equal(refusal('db')?.pdb, `${ns}/db`);
    assert.equal(refusal('sick')?.code, 429);
    assert.equal(refusal('stale')?.code, 429);
    assert.equal(refusal('shared')?.code, 500);
    assert.equal(refusal('shared')?.reason, 'MultiplePodDisruptionBudgets');
    const web = r.pdbs!.find((p) => p.pdb === `${ns}/web`)!;
    assert.deepEqual([web.podsToEvict, web.disruptionsAllowed, web.rounds], [3, 1, 3]);
    const db = r.pdbs!.find((p) => p.pdb === `${ns}/db`)!;
    assert.deepEqual([db.podsToEvict, db.disruptionsAllowed, db.rounds], [1, 0, undefined]);
    assert.equal(r.maxRounds, 3);
    assert.ok((n.skipped ?? []).length === 0, 'nothing skipped with ignoreDaemonSets false');
    // Every Deployment's pod template sets spec.nodeName (the fixture binds them so): the pods to
    // evict of web, db, shared and sick would come back (NodeNameInTemplate), read from their
    // ReplicaSets and named by Deployment; a warning, not a blocker.
    assert.deepEqual(
      n.returning?.map((w) => [w.workload, w.reason, w.pods]),
      [
        [`Deployment ${ns}/db`, 'NodeNameInTemplate', 1],
        [`Deployment ${ns}/shared`, 'NodeNameInTemplate', 1],
        [`Deployment ${ns}/sick`, 'NodeNameInTemplate', 1],
        [`Deployment ${ns}/web`, 'NodeNameInTemplate', 3],
      ],
      JSON.stringify(n.returning),
    );
    assert.equal(n.podsReturning, 6);
    assert.equal(r.podsReturning, 6);
    assert.equal(n.ownersUnread, undefined, 'every ReplicaSet was read');
    assert.match(r.summary, /warning: 6 pod\(s\) of 4 workload\(s\) would come back .*NodeNameInTemplate/);
  }

  /** Nothing was cordoned, claimed, evicted or deleted. */
  async function assertUntouched(): Promise<void> {
    const n = await c.core.readNode({ name: node });
    assert.notEqual(n.spec?.unschedulable, true, 'the node was cordoned');
    assert.equal(n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION], undefined, 'the node was claimed');
    const now = (await c.core.listNamespacedPod({ namespace: ns })).items;
    assert.deepEqual(
      now.map((p) => [p.metadata!.uid, Boolean(p.metadata!.deletionTimestamp)]).sort(),
      podsBefore.map((p) => [p.metadata!.uid, false]).sort(),
    );
  }

  it('a Preflight plan reports every blocker kind, ends Previewed, and only dry-run evictions reach the API server', async () => {
    const before = requestCounters();
    const mark = auditMark(auditLog());
    const plan = await createDirectPlan(c, planName, {
      nodeNames: [node],
      mode: 'Preflight',
      podSelection: { ignoreDaemonSets: false },
    });
    workflowId = plan.workflowId;
    h.allPlans.add(planName);
    await h.client.workflow.start('drainPlanWorkflow', {
      taskQueue: h.opts.taskQueue,
      workflowId,
      args: [plan.input],
    });
    const result = (await h.client.workflow.getHandle(workflowId).result()) as {
      phase: string;
      reason: string;
    };
    assert.equal(result.phase, 'Previewed');
    assert.equal(result.reason, 'BlockersFound');
    const st = await waitFor(
      async () => {
        const s = await readPlanStatus(c, planName);
        return s?.phase === 'Previewed' ? s : undefined;
      },
      30_000,
      { what: 'status Previewed' },
    );
    assert.equal(st.reason, 'BlockersFound', showStatus(st));
    assertReport(st.preflight!);
    assert.equal(st.nodes?.[0]?.phase, 'Previewed');
    assert.equal(st.nodes?.[0]?.podsTotal, 7);
    assert.ok(st.completedAt, 'completedAt set');
    assert.equal(st.deadlineAction, undefined);
    const cond = st.conditions?.find((x) => x.type === 'Previewed');
    assert.equal(cond?.status, 'True');
    assert.equal(cond?.reason, 'BlockersFound');
    assert.equal(cond?.message, st.preflight!.summary);
    const events = await h.planEvents(planName, plan.input.plan.uid);
    const ev = events.find((e) => e.reason === 'BlockersFound');
    assert.ok(ev, `BlockersFound among ${events.map((e) => e.reason).join(', ')}`);
    assert.equal(ev.type, 'Warning');

    const after = requestCounters();
    assert.equal(after.evictions, before.evictions, 'no eviction without dryRun');
    assert.equal(after.dryRunEvictions - before.dryRunEvictions, 7, 'one dry-run eviction per pod to evict');
    await assertOnlyDryRuns(mark, 7);
    await assertUntouched();

    // kubectl describe shows the report under clear names.
    const described = kubectl(['describe', 'maintenanceplan', planName]);
    assert.match(described, /Preflight:/);
    assert.match(described, /Dry Run Refusals:/);
    assert.match(described, /Reason:\s+MultiplePodDisruptionBudgets/);
    assert.match(described, /Rounds:\s+3/);
  });

  it('drainflow preflight prints the same report and creates nothing', async () => {
    const before = requestCounters();
    const mark = auditMark(auditLog());
    const plansBefore = kubectl(['get', 'maintenanceplans', '-o', 'name']);
    const env = { ...process.env, KUBECONFIG: auditedEnv().KUBECONFIG };
    const json = await runCommand(['preflight', '--nodes', node, '--no-ignore-daemonsets', '-o', 'json'], {
      env,
    });
    // Blockers found: exit 2, the report printed all the same.
    assert.equal(json.code, 2, json.err);
    assertReport(JSON.parse(json.out) as PreflightReport);
    const text = await runCommand(
      ['preflight', '--selector', `kubernetes.io/hostname=${node}`, '--no-ignore-daemonsets'],
      {
        env,
      },
    );
    assert.equal(text.code, 2, text.err);
    assert.match(
      text.out,
      /^preflight: 1 node\(s\) examined, nothing cordoned or evicted: 7 pod\(s\) to evict/,
    );
    // db's PDB allows none: the summary says the drain cannot finish, not how many rounds web needs.
    assert.match(text.out, new RegExp(`PodDisruptionBudgets allow no disruption \\(${ns}/db, `));
    assert.doesNotMatch(text.out.split('\n')[0]!, /the slowest PodDisruptionBudget/);
    assert.match(text.out, /blockers:\n/);
    assert.match(text.out, /MultiplePodDisruptionBudgets .*shared-a, .*shared-b/);
    assert.match(text.out, /refused by the API server \(dry run\):/);
    assert.match(text.out, new RegExp(`${ns}/web: 3 round\\(s\\)`));
    const after = requestCounters();
    assert.equal(after.evictions, before.evictions, 'no eviction without dryRun');
    assert.equal(after.dryRunEvictions - before.dryRunEvictions, 14, 'two runs of 7 dry-run evictions');
    await assertOnlyDryRuns(mark, 14);
    assert.equal(kubectl(['get', 'maintenanceplans', '-o', 'name']), plansBefore, 'no plan created');
    await assertUntouched();

    // With the default ignoreDaemonSets the DaemonSet pod is skipped, not a blocker; bad input is refused.
    const skip = await runCommand(['preflight', '--nodes', node, '--no-dry-run', '-o', 'json'], { env });
    assert.equal(skip.code, 2, skip.err);
    const r = JSON.parse(skip.out) as PreflightReport;
    assert.deepEqual(
      r.nodes[0]!.skipped?.map((s) => s.reason),
      ['DaemonSetPod'],
    );
    assert.equal(r.dryRunAccepted + r.dryRunRefused, 0, '--no-dry-run sends none');
    // Only the web pods, which can all leave: exit 0.
    const clean = await runCommand(
      ['preflight', '--nodes', node, '--pod-selector', 'app=web', '-o', 'json'],
      {
        env,
      },
    );
    assert.equal(clean.code, 0, clean.err);
    const cr = JSON.parse(clean.out) as PreflightReport;
    assert.deepEqual([cr.podsToEvict, cr.blockerCount, cr.dryRunAccepted, cr.dryRunRefused], [3, 0, 3, 0]);
    // web's pods would come back (spec.nodeName in its template): a warning; the drain ends the node Drained, exit 0.
    assert.deepEqual(
      cr.nodes[0]!.returning?.map((w) => [w.workload, w.reason, w.pods]),
      [[`Deployment ${ns}/web`, 'NodeNameInTemplate', 3]],
    );
    const missing = await runCommand(['preflight', '--nodes', 'no-such-node'], { env });
    assert.equal(missing.code, 1);
    assert.match(missing.err, /node\(s\) not found: no-such-node/);
    const none = await runCommand(['preflight'], { env });
    assert.equal(none.code, 1);
    assert.match(none.err, /name the nodes: --nodes a,b, --selector k=v, or -f plan.yaml/);
    const bad = await runCommand(['preflight', '--nodes', 'Bad_Node'], { env });
    assert.equal(bad.code, 1);
    assert.match(bad.err, /spec\.nodeNames\[0\]: must be a node name/);
  });

  it('drainflow preflight warns about a StatefulSet and a Job pinned by spec.nodeName and a Deployment tolerating the cordon, and exits 0', async () => {
    const ns2 = await createNamespace(c, 'preflight-back');
    const node2 = await createTaintedNode(c, 'preflight-back', { taint: { key: TAINT_KEY, value: 'x' } });
    try {
      const spec = (app: string) => {
        const s = makePodSpec({ nodeName: node2 });
        s.tolerations = [TOLERATION];
        return { metadata: { labels: { app } }, spec: s };
      };
      await c.apps.createNamespacedStatefulSet({
        namespace: ns2,
        body: {
          metadata: { name: 'db2' },
          spec: {
            serviceName: 'db2',
            replicas: 1,
            selector: { matchLabels: { app: 'db2' } },
            template: spec('db2'),
          },
        },
      });
      const job = spec('once');
      job.spec.restartPolicy = 'Never';
      // kwok ends Job pods at once (Succeeded), unless they carry this annotation: it runs until deleted.
      Object.assign(job.metadata, { annotations: { 'drainflow.dev/test-hold': 'true' } });
      await c.kc.makeApiClient(BatchV1Api).createNamespacedJob({
        namespace: ns2,
        body: { metadata: { name: 'once' }, spec: { template: job } },
      });
      const agent = makeDeployment(ns2, 'agent', 1, { hostname: node2 });
      agent.spec!.template.spec!.tolerations = [{ operator: 'Exists' }];
      await c.apps.createNamespacedDeployment({ namespace: ns2, body: agent });
      for (const app of ['db2', 'once', 'agent']) await waitPodsReady(c, ns2, { app }, 1);

      const env = { ...process.env, KUBECONFIG: auditedEnv().KUBECONFIG };
      const json = await runCommand(['preflight', '--nodes', node2, '-o', 'json'], { env });
      assert.equal(json.code, 0, `a warning, not a blocker: ${json.err}${json.out}`);
      const r = JSON.parse(json.out) as PreflightReport;
      const n = r.nodes[0]!;
      assert.deepEqual(
        n.returning?.map((w) => [w.workload, w.reason, w.pods]),
        [
          [`Deployment ${ns2}/agent`, 'PinnedToNode', 1],
          [`Job ${ns2}/once`, 'NodeNameInTemplate', 1],
          [`StatefulSet ${ns2}/db2`, 'NodeNameInTemplate', 1],
        ],
        JSON.stringify(n),
      );
      assert.equal(r.podsReturning, 3);
      assert.equal(n.blockerCount, 0);
      const text = await runCommand(['preflight', '--nodes', node2], { env });
      assert.equal(text.code, 0, text.err);
      assert.match(text.out, /ReturnsToNode: 2 NodeNameInTemplate, 1 PinnedToNode/);
      assert.match(
        text.out,
        new RegExp(
          `NodeNameInTemplate: StatefulSet ${ns2}/db2: its pod template sets spec\\.nodeName: ${node2}.*scale it down`,
        ),
      );
    } finally {
      await deleteNamespace(c, ns2).catch(() => undefined);
      await deleteNode(c, node2).catch(() => undefined);
    }
  });

  it('through the operator: a Preflight plan ends Previewed, and deleting it finds nothing to hand back', async () => {
    h.operator = await h.startOperator();
    const before = requestCounters();
    const mark = auditMark(auditLog());
    const name = uniqueName('preflight-op');
    h.applyPlan(name, { nodeNames: [node], mode: 'Preflight', podSelection: { ignoreDaemonSets: false } });
    const done = await h.waitPlan(name, (p) => p.status?.phase === 'Previewed', 60_000, 'Previewed');
    assert.equal(done.status?.reason, 'BlockersFound');
    assertReport(done.status!.preflight!);
    await h.deletePlan(name, 60_000);
    const after = requestCounters();
    assert.equal(after.evictions, before.evictions, 'no eviction without dryRun');
    assert.equal(after.dryRunEvictions - before.dryRunEvictions, 7);
    await assertOnlyDryRuns(mark, 7);
    await assertUntouched();
  });

  it('the CRD refuses a bad mode, a mode change and a paused preview, readably', async () => {
    const bad = uniqueName('preflight-bad');
    const status = await refusedPlanStatus(c, bad, { nodeNames: ['a'], mode: 'DryRun' });
    assert.equal(status.code, 422);
    assert.match(status.message ?? '', /spec\.mode: .*must be Drain or Preflight \(got "DryRun"\)/);
    const fixed = uniqueName('preflight-fixed');
    await createPlanObject(c, fixed, { nodeNames: ['a'], mode: 'Preflight' });
    h.allPlans.add(fixed);
    assert.throws(
      () =>
        kubectl([
          'patch',
          'maintenanceplan',
          fixed,
          '--type',
          'merge',
          '-p',
          JSON.stringify({ spec: { mode: 'Drain' } }),
        ]),
      /spec\.mode: .*cannot change after the plan is created/,
    );
    // A preview has nothing to pause: refused on update as on creation.
    assert.throws(
      () =>
        kubectl([
          'patch',
          'maintenanceplan',
          fixed,
          '--type',
          'merge',
          '-p',
          JSON.stringify({ spec: { paused: true } }),
        ]),
      /spec\.paused: Forbidden: must not be true with mode Preflight/,
    );
    const paused = await refusedPlanStatus(c, uniqueName('preflight-paused'), {
      nodeNames: ['a'],
      mode: 'Preflight',
      paused: true,
    });
    assert.equal(paused.code, 422);
    assert.match(paused.message ?? '', /spec\.paused: Forbidden: must not be true with mode Preflight/);
    await h.deletePlanObject(fixed);
  });
});
