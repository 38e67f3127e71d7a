// test-lane: parallel
/**
 * The eviction-call timeout path end to end, on the real stack: a validating admission webhook on
 * `pods/eviction`, served by this test, holds the first Eviction API call of every pod longer than
 * the plan's `eviction.callTimeoutSeconds`, so the `evictPod` activity times out.
 *
 * What a timed-out call did depends on where the time went, and the webhook models both:
 * - pods of the Deployment `took-*`: the webhook deletes the pod (uid precondition, the pod's own
 *   grace period) when the first call arrives, then holds its answer. The eviction took effect, its
 *   answer never reached the client (as when the API server applied it and the response was lost);
 * - pods of the Deployment `lost-*`: the webhook only holds its answer. kube-apiserver cancels the
 *   webhook call (and so the eviction) as soon as the client gives up and closes the connection —
 *   measured on this stack, with failurePolicy Fail and Ignore alike — so that call did not take
 *   effect and the pod must be evicted again.
 * Later calls are answered at once. The webhook records every AdmissionReview with whether the pod
 * was already terminating at that moment.
 *
 * Expected, per pod: exactly one effective eviction; no eviction call for a pod that is terminating
 * (`took-*`: one call only; `lost-*`: a second call, sent after the first was abandoned); every
 * first call timed out in the node workflow's history; the node ends Drained.
 * Case A with the worker up all along: a `took-*` pod is observed terminating while its call is in
 * flight, the call then times out, and later observations are unchanged (the pod terminates for
 * 20 s) — the path where a drain that looks only at "a fresh observation" would evict it again.
 * Case B with `kill -9` of the worker process while the four slow calls are held, then a new
 * worker. Both run the real worker process (`drainflow run --worker`), the plan workflow started
 * directly (no operator).
 *
 * The webhook is restricted to this test's namespace (namespaceSelector on
 * kubernetes.io/metadata.name), so a leftover configuration slows nobody else; `after()` deletes it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  type V1Pod,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { GROUP, PLURAL, VERSION } from '../../src/api/plan.js';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { nodeWorkflowId } from '../../src/contract/names.js';
import { createDirectPlan, readPlanStatus } from '../helpers/direct-plan.js';
import { requireEnv } from '../helpers/operator-harness.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  errorCode,
  makeDeployment,
  makePod,
  sleep,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { startWorkerProcess, type DrainflowProcess } from '../helpers/processes.js';

/** The plan's eviction.callTimeoutSeconds. */
const CALL_TIMEOUT_SECONDS = 3;
/** How long the webhook holds a pod's first call, ms: well past the call timeout. */
const SLOW_ANSWER_MS = 15_000;
/**
 * Grace period of the pods: an evicted pod stays terminating this long (kwok honours it), long
 * enough for several observations (retryBackoff.maxSeconds 5) to see it terminating. Case B's is
 * longer: the running observation of the killed worker is retried only after its 20 s heartbeat
 * timeout, and the pods must still be terminating then.
 */
const GRACE_SECONDS = { a: 20, b: 45 } as const;
/** Pods per Deployment on the drained node. */
const REPLICAS = 2;

/** One AdmissionReview the webhook received for a pod of this test (dry-run probes excluded). */
interface Review {
  pod: string;
  uid: string;
  /** Receipt time, ms since epoch. */
  at: number;
  /** Whether the pod had a deletionTimestamp when the review arrived. */
  terminatingAtReview: boolean;
  /** Held past the call timeout (the pod's first call). */
  slow: boolean;
  /** The webhook deleted the pod itself (a `took-*` pod's first call: the eviction took effect). */
  applied: boolean;
  /** `answered`: allowed:true was sent; `abandoned`: the API server closed the call before the answer. */
  outcome?: 'answered' | 'abandoned';
  endedAt?: number;
}

interface AdmissionReviewRequest {
  uid: string;
  name?: string;
  namespace?: string;
  dryRun?: boolean;
  object?: { deleteOptions?: { preconditions?: { uid?: string } } };
}

describe('eviction call timeout on the real stack (slow pods/eviction webhook)', () => {
  let c: Clients;
  let admission: AdmissionregistrationV1Api;
  let ns = '';
  const nodes: string[] = [];
  let connection: Connection;
  let client: Client;
  const procs: DrainflowProcess[] = [];
  const plans: string[] = [];
  const workflowIds: string[] = [];
  const webhookName = uniqueName('evto-webhook');
  let webhookCreated = false;
  let server: Server | undefined;
  let pkiDir = '';
  const reviews: Review[] = [];
  let probes = 0;
  const seen = new Set<string>();
  const events = new EventEmitter();

  /** The webhook: records, applies or holds, then allows. */
  async function handleReview(request: AdmissionReviewRequest, onClose: (f: () => void) => void) {
    const name = request.name ?? '';
    if (request.dryRun || name.startsWith('evto-probe')) {
      probes++;
      return;
    }
    const at = Date.now();
    let pod: V1Pod | undefined;
    try {
      pod = await c.core.readNamespacedPod({ namespace: request.namespace ?? ns, name });
    } catch (err) {
      if (errorCode(err) !== 404) throw err;
    }
    const uid = request.object?.deleteOptions?.preconditions?.uid ?? pod?.metadata?.uid ?? '';
    const slow = !seen.has(uid);
    seen.add(uid);
    const review: Review = {
      pod: name,
      uid,
      at,
      terminatingAtReview: pod?.metadata?.deletionTimestamp !== undefined,
      slow,
      applied: false,
    };
    reviews.push(review);
    events.emit('review', review);
    if (!slow) return review;
    if (name.startsWith('took-') && pod) {
      await c.core.deleteNamespacedPod({
        namespace: request.namespace ?? ns,
        name,
        body: { preconditions: { uid } },
      });
      review.applied = true;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SLOW_ANSWER_MS);
      onClose(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return review;
  }

  async function startWebhook(): Promise<void> {
    pkiDir = mkdtempSync(join(tmpdir(), 'evto-pki-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(pkiDir, 'key.pem'),
        '-out',
        join(pkiDir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=evto-webhook',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const cert = readFileSync(join(pkiDir, 'cert.pem'));
    const key = readFileSync(join(pkiDir, 'key.pem'));
    server = createServer({ cert, key }, (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => {
        let request: AdmissionReviewRequest;
        try {
          request = (JSON.parse(body) as { request: AdmissionReviewRequest }).request;
        } catch {
          res.writeHead(400).end();
          return;
        }
        let closed = false;
        let closer: (() => void) | undefined;
        res.on('close', () => {
          closed = true;
          closer?.();
        });
        handleReview(request, (f) => {
          closer = f;
          if (closed) f();
        }).then(
          (review) => {
            if (review) review.endedAt = Date.now();
            if (closed || res.writableEnded) {
              if (review) review.outcome = 'abandoned';
              return;
            }
            if (review) review.outcome = 'answered';
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                apiVersion: 'admission.k8s.io/v1',
                kind: 'AdmissionReview',
                response: { uid: request.uid, allowed: true },
              }),
            );
          },
          (err: unknown) => {
            // Visible in the review records' absence and in the API server's answer (failurePolicy Fail).
            res.writeHead(500).end(String(err));
          },
        );
      });
    });
    const port = await new Promise<number>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(0, '127.0.0.1', () => {
        const a = server!.address();
        resolve(typeof a === 'object' && a ? a.port : 0);
      });
    });
    const config: V1ValidatingWebhookConfiguration = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: webhookName, labels: { 'drainflow.dev/test': 'true' } },
      webhooks: [
        {
          name: 'slow-eviction.evto.drainflow.dev',
          rules: [
            {
              operations: ['CREATE'],
              apiGroups: [''],
              apiVersions: ['v1'],
              resources: ['pods/eviction'],
            },
          ],
          clientConfig: { url: `https://127.0.0.1:${port}/validate`, caBundle: cert.toString('base64') },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 25,
          failurePolicy: 'Fail',
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        },
      ],
    };
    await admission.createValidatingWebhookConfiguration({ body: config });
    webhookCreated = true;
    // The API server picks the configuration up asynchronously: probe with dry-run evictions.
    const probe = makePod(ns, 'evto-probe', { labels: { app: 'evto-probe' } });
    probe.spec!.nodeSelector = { 'drainflow.dev/evto-nowhere': 'true' }; // stays Pending, never scheduled
    await c.core.createNamespacedPod({ namespace: ns, body: probe });
    await waitFor(
      async () => {
        await c.core
          .createNamespacedPodEviction({
            namespace: ns,
            name: 'evto-probe',
            dryRun: 'All',
            body: {
              apiVersion: 'policy/v1',
              kind: 'Eviction',
              metadata: { name: 'evto-probe', namespace: ns },
            },
          })
          .catch(() => undefined);
        return probes > 0;
      },
      30_000,
      { what: 'the eviction webhook to be called', intervalMs: 500 },
    );
  }

  before(async () => {
    const address = requireEnv('TEMPORAL_ADDRESS');
    c = clients();
    admission = c.kc.makeApiClient(AdmissionregistrationV1Api);
    await applyCrds(c);
    ns = await createNamespace(c, 'evto');
    await startWebhook();
    connection = await Connection.connect({ address });
    client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });
  });

  after(async () => {
    // The webhook first: a leftover one would hold evictions in this namespace.
    if (webhookCreated)
      await admission
        .deleteValidatingWebhookConfiguration({ name: webhookName })
        .catch((err: unknown) => console.error(`could not delete webhook ${webhookName}: ${String(err)}`));
    for (const id of workflowIds) {
      const handle = client?.workflow.getHandle(id);
      await handle?.signal(abortSignal).catch(() => undefined);
      await handle?.terminate('eviction-timeout e2e cleanup').catch(() => undefined);
    }
    for (const p of procs) await p.stop('SIGTERM').catch(() => undefined);
    await connection?.close();
    server?.closeAllConnections();
    server?.close();
    if (pkiDir) rmSync(pkiDir, { recursive: true, force: true });
    for (const name of plans)
      await c.custom
        .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
        .catch(() => undefined);
    if (ns) await deleteNamespace(c, ns);
    for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
  });

  async function startWorker(taskQueue: string): Promise<DrainflowProcess> {
    const p = await startWorkerProcess(taskQueue);
    procs.push(p);
    return p;
  }

  /**
   * Drains a node holding REPLICAS `took-<tag>` and REPLICAS `lost-<tag>` pods. With `crash`, kills
   * the worker with SIGKILL once the webhook holds every pod's first call, then starts a new one.
   */
  async function drainThroughSlowWebhook(tag: 'a' | 'b', crash: boolean) {
    const pool = uniqueName(`evto-${tag}`);
    const onPool = { 'drainflow.dev/pool': pool };
    const target = await createNode(c, `evto-${tag}-node`, { labels: onPool });
    nodes.push(target);
    for (const kind of ['took', 'lost']) {
      const d = makeDeployment(ns, `${kind}-${tag}`, REPLICAS, {
        terminationGracePeriodSeconds: GRACE_SECONDS[tag],
      });
      d.spec!.template.spec!.nodeSelector = onPool;
      await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    }
    const took = await waitPodsReady(c, ns, { app: `took-${tag}` }, REPLICAS);
    const lost = await waitPodsReady(c, ns, { app: `lost-${tag}` }, REPLICAS);
    const initial = new Map([...took, ...lost].map((p) => [p.metadata!.uid!, p.metadata!.name!]));
    for (const p of [...took, ...lost]) assert.equal(p.spec?.nodeName, target);
    nodes.push(await createNode(c, `evto-${tag}-spare`, { labels: onPool })); // room for replacements

    const planName = uniqueName(`evto-${tag}`);
    const spec = {
      nodeNames: [target],
      drainTimeoutSeconds: 600,
      eviction: {
        callTimeoutSeconds: CALL_TIMEOUT_SECONDS,
        maxConcurrentPerNode: 4,
        retryBackoff: { initialSeconds: 1, maxSeconds: 5 },
      },
    };
    const { input, workflowId } = await createDirectPlan(c, planName, spec);
    plans.push(planName);
    workflowIds.push(workflowId);
    const taskQueue = uniqueName(`evto-${tag}`);
    const worker1 = await startWorker(taskQueue);

    // Every first call held by the webhook (they go out together: maxConcurrentPerNode 4).
    const allHeld = new Promise<void>((resolve) => {
      const check = () => {
        const held = reviews.filter((r) => initial.has(r.uid) && r.slow && r.outcome === undefined);
        if (held.length === initial.size) {
          events.off('review', check);
          resolve();
        }
      };
      events.on('review', check);
    });
    const startedAt = Date.now();
    await client.workflow.start('drainPlanWorkflow', { taskQueue, workflowId, args: [input] });
    await Promise.race([
      allHeld,
      sleep(90_000).then(() => {
        throw new Error(`the webhook did not get ${initial.size} first calls: ${JSON.stringify(reviews)}`);
      }),
    ]);
    let killedAt: number | undefined;
    if (crash) {
      await worker1.stop('SIGKILL');
      killedAt = Date.now();
      await sleep(3000);
      await startWorker(taskQueue);
    }

    const drained = await waitFor(
      async () => {
        const s = await readPlanStatus(c, planName);
        return s?.phase === 'Drained' ? s : undefined;
      },
      240_000,
      { what: `plan ${planName} Drained`, intervalMs: 500 },
    );
    const elapsedMs = Date.now() - startedAt;

    // The node's pods: gone (not merely terminating), replaced on the spare node.
    for (const [uid, name] of initial) {
      const pod = await c.core.readNamespacedPod({ namespace: ns, name }).catch((err: unknown) => {
        if (errorCode(err) === 404) return undefined;
        throw err;
      });
      assert.ok(pod?.metadata?.uid !== uid, `pod ${name} (${uid}) is gone`);
    }
    await waitPodsReady(c, ns, { app: `took-${tag}` }, REPLICAS);
    await waitPodsReady(c, ns, { app: `lost-${tag}` }, REPLICAS);

    const mine = reviews.filter((r) => initial.has(r.uid));
    const story = JSON.stringify(
      mine.map((r) => ({
        pod: r.pod,
        atMs: r.at - startedAt,
        endedAtMs: r.endedAt !== undefined ? r.endedAt - startedAt : undefined,
        slow: r.slow,
        applied: r.applied,
        outcome: r.outcome,
        terminatingAtReview: r.terminatingAtReview,
        ...(killedAt !== undefined ? { killedAtMs: killedAt - startedAt } : {}),
      })),
      null,
      1,
    );
    // No eviction call for a pod that was already terminating.
    assert.deepEqual(
      mine.filter((r) => r.terminatingAtReview).map((r) => r.pod),
      [],
      `eviction call(s) sent for a terminating pod; webhook records: ${story}; status: ${JSON.stringify(drained)}`,
    );
    for (const [uid, name] of initial) {
      const rs = mine.filter((r) => r.uid === uid).sort((a, b) => a.at - b.at);
      assert.ok(rs.length > 0, `pod ${name} got an eviction call`);
      // The first call was held past the call timeout and abandoned by the client (timeout or kill).
      assert.equal(rs[0]!.slow, true);
      assert.equal(rs[0]!.outcome, 'abandoned', `first call of ${name} abandoned by the client: ${story}`);
      // Each pod evicted exactly once: the webhook's own deletion, or one answered call.
      const effective = rs.filter((r) => r.applied || r.outcome === 'answered').length;
      assert.equal(effective, 1, `pod ${name} evicted exactly once: ${story}`);
      if (name.startsWith('took-')) {
        assert.equal(rs.length, 1, `took-effect pod ${name} got no second call: ${story}`);
        assert.equal(rs[0]!.applied, true);
      } else {
        assert.equal(rs.length, 2, `pod ${name} evicted again once after its first call was lost: ${story}`);
        assert.ok(
          rs[1]!.at >= rs[0]!.endedAt!,
          `second call of ${name} only after the first ended: ${story}`,
        );
        assert.equal(rs[1]!.outcome, 'answered');
      }
    }

    // The node workflow's history: one evictPod per call the webhook saw; every first call timed out.
    const history = await client.workflow.getHandle(nodeWorkflowId(workflowId, target)).fetchHistory();
    const evictIds = new Set<string>();
    let timedOut = 0;
    for (const e of history.events ?? []) {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'evictPod')
        evictIds.add(String(e.eventId));
      const t = e.activityTaskTimedOutEventAttributes;
      if (t && evictIds.has(String(t.scheduledEventId))) timedOut++;
    }
    assert.equal(evictIds.size, mine.length, `evictPod activities vs webhook calls: ${story}`);
    assert.equal(timedOut, initial.size, `evictPod timeouts (every first call): ${story}`);

    const progress = drained.evictionProgress;
    assert.equal(progress?.evicted, initial.size);
    assert.equal(progress?.total, initial.size);
    assert.equal(progress?.attempts, mine.length);
    assert.match(progress?.lastError ?? '', /timed out/);
    const node = drained.nodes?.find((n) => n.name === target);
    assert.equal(node?.phase, 'Drained', JSON.stringify(drained.nodes));
    return { elapsedMs, story };
  }

  it('case A: a timed-out call that took effect is not repeated; one that did not is, once; node Drained', async () => {
    const { elapsedMs } = await drainThroughSlowWebhook('a', false);
    console.log(`case A drained in ${elapsedMs} ms`);
  });

  it('case B: kill -9 of the worker during the slow calls loses nothing and evicts each pod once', async () => {
    const { elapsedMs } = await drainThroughSlowWebhook('b', true);
    console.log(`case B drained in ${elapsedMs} ms`);
  });
});
