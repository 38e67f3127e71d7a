// test-lane: parallel
/**
 * End-to-end checks of the local stack itself (scripts/stack/stack.sh): the behaviour drainflow builds on,
 * asserted against the REAL components — kube-apiserver + kube-controller-manager (disruption controller,
 * ReplicaSets) + kube-scheduler + kwok nodes, and the Temporal dev server — plus the time-skipping test
 * server. If one of these assumptions stops holding (a version bump, a changed kwok stage), this file says
 * which one. See CONTRIBUTING.md, "The local stack".
 *
 * Needs the stack up and its environment loaded (`npm run stack -- up`, then
 * `eval "$(npm run --silent stack -- env)"`). Without KUBECONFIG or TEMPORAL_ADDRESS every test FAILS with
 * that instruction; none is skipped.
 *
 * Eviction API answers, recorded raw (node:https with the KubeConfig's client certificate, so headers are
 * visible), on Kubernetes 1.34.4. All bodies are JSON `Status` objects (kind Status, apiVersion v1)
 * except the API Priority and Fairness rejection:
 *
 * | answer                                  | Retry-After | body (content-type)                                                        | asserted here |
 * |-----------------------------------------|-------------|----------------------------------------------------------------------------|---------------|
 * | 201 evicted                             | no          | Status, status Success, code 201 (application/json)                        | yes           |
 * | 404 no such pod                         | no          | Status, reason NotFound, code 404                                          | yes           |
 * | 429 PDB allows no disruption            | no          | Status, reason TooManyRequests, cause reason DisruptionBudget              | yes           |
 * |                                         |             | ("needs N healthy pods and has M currently"), no details.retryAfterSeconds |               |
 * | 500 pod covered by two PDBs             | no          | Status, status Failure, code 500, NO reason, NO details/causes             | yes           |
 * | 429 PDB "still being processed"         | "10"        | Status, cause DisruptionBudget, details.retryAfterSeconds 10; only         | no (1)        |
 * |   (observedGeneration < generation)     |             | in the milliseconds after a PDB spec change                                |               |
 * | 429 API Priority and Fairness           | yes ("1")   | text/plain "Too many requests, please try again later."                    | no (1)        |
 * | 409 stale UID, Running pod without PDB  | no          | Status, reason Conflict, at once                                           | no (1)        |
 * | 409 stale UID, pending/terminating pod  | no          | Status, reason Conflict, after ~10 s (server retries the conflict)         | no (1)        |
 *
 * (1) observed with the same raw request while writing this file; test/e2e/activities.test.ts asserts them
 * through the activities. On a pod covered by a PDB, the PDB check comes first: a stale UID on a Running pod
 * whose budget is spent answers 429, not 409.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import type { KubeConfig, V1Node, V1Pod } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { kubectlPath } from '../helpers/binaries.js';
import { installTestRuntime } from '../helpers/sdk-logs.js';
import {
  clients,
  createNamespace,
  deleteNamespace,
  ignoreNotFound,
  kubeConfig,
  makeDeployment,
  makePdb,
  makePod,
  sleep,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodReady,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { timeSkippingEnv, quietBundlerLogger } from '../helpers/temporal.js';
import { greet, sleepOneDay } from '../fixtures/workflows/trivial.js';

/** Node label the stack puts on its kwok-node-* nodes (scripts/stack/stack.sh ensure_nodes). */
const POOL_LABEL = 'drainflow.dev/pool';
const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/**
 * The stack's environment. Throws (so the calling test fails, never skips) with the commands to run when
 * KUBECONFIG or TEMPORAL_ADDRESS is unset.
 */
function stackEnv(): { kubeconfig: string; temporalAddress: string; temporalNamespace: string } {
  const missing = ['KUBECONFIG', 'TEMPORAL_ADDRESS'].filter((v) => !process.env[v]);
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set: test/e2e/stack.test.ts runs against ` +
        'the local stack. Start it and load its environment first:\n' +
        '  npm run stack -- up\n' +
        '  eval "$(npm run --silent stack -- env)"',
    );
  }
  return {
    kubeconfig: process.env.KUBECONFIG!,
    temporalAddress: process.env.TEMPORAL_ADDRESS!,
    temporalNamespace: process.env.TEMPORAL_NAMESPACE || 'default',
  };
}

let cached: Clients | undefined;
function k8s(): Clients {
  stackEnv();
  return (cached ??= clients(kubeConfig()));
}

/** Namespaces to delete after all tests (also those of failed tests). */
const namespaces: string[] = [];
async function namespace(prefix: string): Promise<string> {
  const ns = await createNamespace(k8s(), prefix);
  namespaces.push(ns);
  return ns;
}
after(async () => {
  if (!cached) return;
  for (const ns of namespaces) await deleteNamespace(cached, ns).catch(() => undefined);
});

const nameOf = (o: { metadata?: { name?: string } }): string => o.metadata!.name!;

// ---------------------------------------------------------------------------------------------------
// Raw Eviction API calls
// ---------------------------------------------------------------------------------------------------

/** One Eviction API answer as it came over the wire. */
interface RawAnswer {
  code: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, `undefined` when it is not JSON. */
  json: K8sStatus | undefined;
  ms: number;
}

interface K8sStatus {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    retryAfterSeconds?: number;
    causes?: Array<{ reason?: string; message?: string; field?: string }>;
  };
}

/**
 * POSTs a policy/v1 Eviction for `namespace/name` with node:https and the KubeConfig's client
 * certificate (`applyToHTTPSOptions`), returning status code, headers and body untouched.
 */
async function evict(kc: KubeConfig, namespace: string, name: string, uid?: string): Promise<RawAnswer> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the KubeConfig has no current cluster');
  const opts: https.RequestOptions = {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    timeout: 60_000,
  };
  await kc.applyToHTTPSOptions(opts); // ca, cert, key (and an agent we replace: no keep-alive sockets left open)
  opts.agent = false;
  const body = JSON.stringify({
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace },
    ...(uid ? { deleteOptions: { preconditions: { uid } } } : {}),
  });
  const url = new URL(
    `${server}/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/eviction`,
  );
  const t0 = Date.now();
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = https.request(url, opts, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json: K8sStatus | undefined;
        try {
          json = JSON.parse(text) as K8sStatus;
        } catch {
          json = undefined;
        }
        resolve({ code: res.statusCode ?? 0, headers: res.headers, text, json, ms: Date.now() - t0 });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`eviction of ${namespace}/${name}: no answer in 60 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** `code content-type body` of an answer, for assertion messages. */
const describeAnswer = (a: RawAnswer): string => `${a.code} ${a.headers['content-type'] ?? ''} ${a.text}`;

/** Asserts the answer is a JSON `Status` (kind Status, apiVersion v1) with `code`; returns it. */
function assertStatus(a: RawAnswer, code: number): K8sStatus {
  assert.equal(a.code, code, describeAnswer(a));
  assert.match(String(a.headers['content-type']), /^application\/json/, describeAnswer(a));
  assert.ok(a.json, `JSON body: ${describeAnswer(a)}`);
  assert.equal(a.json.kind, 'Status', describeAnswer(a));
  assert.equal(a.json.apiVersion, 'v1', describeAnswer(a));
  assert.equal(a.json.code, code, describeAnswer(a));
  return a.json;
}

// ---------------------------------------------------------------------------------------------------
// Shared fixture: Deployment "web" of 4 pods and a PDB maxUnavailable 1 over it
// ---------------------------------------------------------------------------------------------------

const WEB = { app: 'web' };
const REPLICAS = 4;

let webSetup: Promise<{ ns: string; pods: V1Pod[] }> | undefined;
/**
 * Creates (once) a namespace with Deployment `web` of 4 replicas on the stack's kwok-node-* nodes
 * (nodeSelector drainflow.dev/pool=local, so nodes other tests create and delete never get them) whose
 * pods become Ready 3 s after they are bound (kwok stage, annotation drainflow.dev/ready-delay): a
 * replacement pod stays unready long enough for the PDB to bite deterministically.
 */
function web(): Promise<{ ns: string; pods: V1Pod[] }> {
  return (webSetup ??= (async () => {
    const c = k8s();
    const ns = await namespace('df-stack');
    const dep = makeDeployment(ns, 'web', REPLICAS, { labels: WEB, readyDelay: '3s' });
    dep.spec!.template.spec!.nodeSelector = { [POOL_LABEL]: 'local' };
    await c.apps.createNamespacedDeployment({ namespace: ns, body: dep });
    const pods = await waitPodsReady(c, ns, WEB, REPLICAS, 120_000);
    return { ns, pods };
  })());
}

let pdbSetup: Promise<void> | undefined;
/** Creates (once) the PDB `web` (maxUnavailable 1) over the Deployment. */
function webPdb(): Promise<void> {
  return (pdbSetup ??= (async () => {
    const { ns } = await web();
    await k8s().policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', WEB, { maxUnavailable: 1 }),
    });
  })());
}

// ---------------------------------------------------------------------------------------------------

describe('local stack: Kubernetes', () => {
  it(
    'the project kubectl lists at least DRAINFLOW_TEST_NODES (default 3) Ready nodes',
    { timeout: 120_000 },
    async () => {
      const { kubeconfig } = stackEnv();
      const want = Number(process.env.DRAINFLOW_TEST_NODES ?? '3');
      assert.ok(
        Number.isInteger(want) && want > 0,
        `DRAINFLOW_TEST_NODES must be a positive integer, got ${process.env.DRAINFLOW_TEST_NODES}`,
      );
      const kubectl = kubectlPath();
      // The node lease / Ready stage may lag just after `up`: poll rather than read once.
      const ready = await waitFor(
        () => {
          const out = execFileSync(kubectl, ['get', 'nodes', '-o', 'json'], {
            env: { ...process.env, KUBECONFIG: kubeconfig },
            encoding: 'utf8',
            timeout: 60_000,
            maxBuffer: 64 * 1024 * 1024,
          });
          const list = JSON.parse(out) as { kind: string; items: V1Node[] };
          assert.equal(list.kind, 'List');
          const names = list.items
            .filter((n) =>
              n.status?.conditions?.some((cond) => cond.type === 'Ready' && cond.status === 'True'),
            )
            .map(nameOf);
          return names.length >= want ? names : undefined;
        },
        60_000,
        { what: `${want} Ready nodes from \`kubectl get nodes -o json\`` },
      );
      assert.ok(ready.length >= want, `Ready nodes: ${ready.join(', ')}`);
      // The stack's own nodes are among them (scripts/stack/stack.sh names them kwok-node-0..N-1).
      for (let i = 0; i < want; i++)
        assert.ok(ready.includes(`kwok-node-${i}`), `kwok-node-${i} Ready; Ready: ${ready.join(', ')}`);
    },
  );

  it(
    'a Deployment of 4 replicas gets 4 Running+Ready pods spread over more than one kwok node',
    { timeout: 180_000 },
    async () => {
      const c = k8s();
      const { pods } = await web();
      assert.equal(pods.length, REPLICAS);
      for (const p of pods) {
        assert.equal(p.status?.phase, 'Running', nameOf(p));
        assert.ok(
          p.status?.conditions?.some((cond) => cond.type === 'Ready' && cond.status === 'True'),
          `${nameOf(p)} Ready`,
        );
        assert.ok(p.status?.podIP, `${nameOf(p)} has a pod IP from kwok`);
        assert.equal(p.metadata?.ownerReferences?.[0]?.kind, 'ReplicaSet');
      }
      const nodeNames = [...new Set(pods.map((p) => p.spec?.nodeName ?? ''))];
      assert.ok(nodeNames.length > 1, `pods spread over ${nodeNames.join(', ')}`);
      for (const n of nodeNames) {
        const node = await c.core.readNode({ name: n });
        assert.equal(node.metadata?.annotations?.[KWOK_NODE_ANNOTATION], 'fake', `${n} is a kwok node`);
      }
    },
  );

  it(
    'a PDB maxUnavailable 1 gets disruptionsAllowed 1 from the disruption controller',
    { timeout: 180_000 },
    async () => {
      const c = k8s();
      const { ns } = await web();
      await webPdb();
      const pdb = await waitPdb(c, ns, 'web', (p) => p.status?.disruptionsAllowed === 1, 120_000);
      assert.equal(pdb.status?.observedGeneration, pdb.metadata?.generation);
      assert.equal(pdb.status?.disruptionsAllowed, 1);
      assert.equal(pdb.status?.currentHealthy, REPLICAS);
      assert.equal(pdb.status?.desiredHealthy, REPLICAS - 1);
      assert.equal(pdb.status?.expectedPods, REPLICAS);
    },
  );

  it(
    'Eviction API: 201, then 429 DisruptionBudget without Retry-After, 201 once the replacement is Ready; 404',
    { timeout: 240_000 },
    async (t) => {
      const c = k8s();
      const { ns } = await web();
      await webPdb();
      await waitPdb(c, ns, 'web', (p) => p.status?.disruptionsAllowed === 1, 120_000);
      const [a, b] = await waitPodsReady(c, ns, WEB, REPLICAS, 120_000);
      assert.ok(a && b);

      // 1st eviction: allowed.
      const first = await evict(c.kc, ns, nameOf(a));
      const ok = assertStatus(first, 201);
      assert.equal(ok.status, 'Success');
      assert.equal(first.headers['retry-after'], undefined, 'no Retry-After on 201');
      // The eviction subresource spent the budget in the PDB status itself (and recorded the pod).
      const spent = await c.policy.readNamespacedPodDisruptionBudget({ namespace: ns, name: 'web' });
      assert.equal(spent.status?.disruptionsAllowed, 0, 'budget spent right after the 201');

      // 2nd eviction, at once: the budget is spent (the replacement is Ready only 3 s after it is bound).
      const second = await evict(c.kc, ns, nameOf(b));
      const refused = assertStatus(second, 429);
      assert.equal(refused.status, 'Failure');
      assert.equal(refused.reason, 'TooManyRequests');
      assert.equal(refused.message, "Cannot evict pod as it would violate the pod's disruption budget.");
      assert.equal(
        second.headers['retry-after'],
        undefined,
        'a spent budget answers 429 WITHOUT Retry-After',
      );
      assert.equal(refused.details?.retryAfterSeconds, undefined, 'nor details.retryAfterSeconds');
      const causes = refused.details?.causes ?? [];
      assert.equal(causes.length, 1, describeAnswer(second));
      assert.equal(causes[0]?.reason, 'DisruptionBudget');
      assert.match(
        causes[0]?.message ?? '',
        /^The disruption budget web needs 3 healthy pods and has 3 currently$/,
      );

      // The ReplicaSet's replacement becomes Ready (kwok), the disruption controller gives the budget back.
      const t0 = Date.now();
      await waitPodsReady(c, ns, WEB, REPLICAS, 120_000);
      const back = await waitPdb(c, ns, 'web', (p) => p.status?.disruptionsAllowed === 1, 120_000);
      assert.equal(back.status?.observedGeneration, back.metadata?.generation);
      const backMs = Date.now() - t0;
      t.diagnostic(
        `eviction answers: ${first.code} in ${first.ms} ms, ${second.code} in ${second.ms} ms; budget back after ${backMs} ms`,
      );
      assert.ok(
        backMs >= 1000,
        `budget back after ${backMs} ms, before the replacement's 3 s ready delay could pass`,
      );

      const third = await evict(c.kc, ns, nameOf(b));
      assert.equal(assertStatus(third, 201).status, 'Success');
      assert.equal(third.headers['retry-after'], undefined);

      // A pod that does not exist: 404 NotFound Status, no Retry-After.
      const missing = await evict(c.kc, ns, 'no-such-pod');
      const nf = assertStatus(missing, 404);
      assert.equal(nf.reason, 'NotFound');
      assert.equal(missing.headers['retry-after'], undefined);
    },
  );

  it(
    'Eviction API: a pod covered by two PDBs answers 500 (no reason, no causes, no Retry-After)',
    { timeout: 180_000 },
    async () => {
      const c = k8s();
      const ns = await namespace('df-stack-2pdb');
      // Two replicas under a controller (a maxUnavailable budget over bare pods is never computed).
      const dual = { app: 'dual', tier: 'x' };
      const dep = makeDeployment(ns, 'dual', 2, { labels: dual });
      dep.spec!.template.spec!.nodeSelector = { [POOL_LABEL]: 'local' };
      await c.apps.createNamespacedDeployment({ namespace: ns, body: dep });
      const [pod] = await waitPodsReady(c, ns, dual, 2, 120_000);
      assert.ok(pod);
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: makePdb(ns, 'by-app', { app: 'dual' }, { maxUnavailable: 1 }),
      });
      await c.policy.createNamespacedPodDisruptionBudget({
        namespace: ns,
        body: makePdb(ns, 'by-tier', { tier: 'x' }, { maxUnavailable: 1 }),
      });
      // Wait only until both are observed. Their disruptionsAllowed is not reliable: on a pod change the
      // disruption controller resyncs ONE of the PDBs matching the pod ("matches multiple
      // PodDisruptionBudgets. Chose X arbitrarily"), so the other can keep a stale status (seen: > 2 min).
      // The 500 comes before any budget check anyway.
      await waitPdb(c, ns, 'by-app', () => true, 120_000);
      await waitPdb(c, ns, 'by-tier', () => true, 120_000);

      const answer = await evict(c.kc, ns, nameOf(pod));
      const st = assertStatus(answer, 500);
      assert.equal(st.status, 'Failure');
      assert.equal(
        st.message,
        'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      );
      assert.equal(st.reason, undefined, 'no reason');
      assert.equal(st.details, undefined, 'no details, so no causes');
      assert.equal(answer.headers['retry-after'], undefined);
      // Nothing was evicted.
      const still = await c.core.readNamespacedPod({ namespace: ns, name: nameOf(pod) });
      assert.equal(still.metadata?.deletionTimestamp, undefined);
    },
  );

  it(
    'an evicted pod with terminationGracePeriodSeconds 5 stays Terminating ~5 s (there at 3 s, gone by 9 s)',
    { timeout: 180_000 },
    async (t) => {
      const c = k8s();
      const ns = await namespace('df-stack-grace');
      await c.core.createNamespacedPod({
        namespace: ns,
        body: makePod(ns, 'slow-exit', { terminationGracePeriodSeconds: 5, hostname: 'kwok-node-0' }),
      });
      await waitPodReady(c, ns, 'slow-exit', 120_000);

      const sent = Date.now();
      const answer = await evict(c.kc, ns, 'slow-exit');
      const answered = Date.now();
      assert.equal(assertStatus(answer, 201).status, 'Success');

      // Poll every 250 ms: the pod stays readable, Terminating, until kwok's delete stage fires at its
      // deletionTimestamp (eviction time + 5 s grace, in whole seconds).
      while (Date.now() - answered < 3000) {
        const pod = await ignoreNotFound(() =>
          c.core.readNamespacedPod({ namespace: ns, name: 'slow-exit' }),
        );
        assert.ok(pod, `pod gone already ${Date.now() - answered} ms after the eviction answered`);
        assert.ok(pod.metadata?.deletionTimestamp, 'deletionTimestamp set');
        assert.equal(pod.metadata?.deletionGracePeriodSeconds, 5);
        await sleep(250);
      }
      const at3s = await ignoreNotFound(() => c.core.readNamespacedPod({ namespace: ns, name: 'slow-exit' }));
      assert.ok(
        at3s?.metadata?.deletionTimestamp,
        `still Terminating ${Date.now() - answered} ms after the eviction`,
      );

      const goneAt = await waitFor(
        async () =>
          (await ignoreNotFound(() => c.core.readNamespacedPod({ namespace: ns, name: 'slow-exit' }))) ===
          undefined
            ? Date.now()
            : false,
        Math.max(0, sent + 9000 - Date.now()),
        { what: 'the evicted pod to disappear within 9 s of its eviction' },
      );
      const goneMs = goneAt - sent;
      t.diagnostic(`evicted pod gone ${goneMs} ms after the eviction was sent`);
      // waitFor only succeeds with a read started before the 9 s deadline; allow for that read's latency.
      assert.ok(goneMs <= 9500, `gone ${goneMs} ms after the eviction was sent`);
    },
  );
});

// ---------------------------------------------------------------------------------------------------

let bundle: Promise<WorkflowBundle> | undefined;
/** The workflow bundle of test/fixtures/workflows/trivial.ts (built once, shared by both workers). */
function trivialBundle(): Promise<WorkflowBundle> {
  return (bundle ??= bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../fixtures/workflows/trivial.ts', import.meta.url)),
    logger: quietBundlerLogger,
  }));
}

describe('local stack: Temporal', () => {
  it('a trivial workflow runs on the dev server at TEMPORAL_ADDRESS', { timeout: 180_000 }, async () => {
    const { temporalAddress, temporalNamespace } = stackEnv();
    // The SDK's lines through drainflow's logger, warnings and errors only (test/helpers/sdk-logs.ts);
    // installed here, not at load: a Runtime that never runs a worker keeps the process alive.
    installTestRuntime();
    const workflowBundle = await trivialBundle();
    const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
    const connection = await Connection.connect({ address: temporalAddress });
    try {
      const client = new Client({ connection, namespace: temporalNamespace });
      const taskQueue = uniqueName('df-stack-test');
      const worker = await Worker.create({
        connection: nativeConnection,
        namespace: temporalNamespace,
        taskQueue,
        workflowBundle,
      });
      const workflowId = uniqueName('greet');
      const result = await worker.runUntil(
        client.workflow.execute(greet, {
          taskQueue,
          workflowId,
          args: ['drainflow'],
          workflowExecutionTimeout: '2 minutes',
        }),
      );
      assert.equal(result, 'hello drainflow');
      const desc = await client.workflow.getHandle(workflowId).describe();
      assert.equal(desc.status.name, 'COMPLETED');
      assert.equal(desc.type, 'greet');
      assert.equal(desc.taskQueue, taskQueue);
    } finally {
      await connection.close();
      await nativeConnection.close();
    }
  });

  it(
    'in the time-skipping environment a workflow sleeping one day completes in a few real seconds',
    { timeout: 180_000 },
    async (t) => {
      stackEnv();
      installTestRuntime();
      const workflowBundle = await trivialBundle();
      const env = await timeSkippingEnv();
      try {
        const taskQueue = uniqueName('df-stack-skip');
        const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle });
        const before = await env.currentTimeMs();
        const t0 = Date.now();
        const result = await worker.runUntil(
          env.client.workflow.execute(sleepOneDay, { taskQueue, workflowId: uniqueName('sleep-one-day') }),
        );
        const realMs = Date.now() - t0;
        const skippedMs = (await env.currentTimeMs()) - before;
        t.diagnostic(`1 day of workflow time in ${realMs} ms of real time`);
        assert.equal(result, 'woke');
        assert.ok(realMs < 30_000, `one day of workflow time took ${realMs} ms of real time`);
        assert.ok(skippedMs >= 24 * 3600_000, `the server's clock moved ${skippedMs} ms (at least one day)`);
      } finally {
        await env.teardown();
      }
    },
  );
});
