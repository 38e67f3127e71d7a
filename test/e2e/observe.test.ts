// test-lane: parallel
/**
 * End-to-end tests of the `observeNode` activity (src/activities/observe.ts) and its watch cache
 * (src/k8s/watch-cache.ts) against the real local stack (kube-apiserver, kube-controller-manager,
 * kwok): `bash scripts/stack/stack.sh up`, then `eval "$(bash scripts/stack/stack.sh env)"`.
 * Without KUBECONFIG every test fails with that instruction; none is skipped.
 *
 * Everything lives on a node and in a namespace of this file's own (prefix `obs-`), so concurrent
 * runs of other e2e files on the same cluster neither disturb nor are disturbed by it.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CancelledFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { pino } from 'pino';
import { createWaitClaimReleased } from '../../src/activities/claim-wait.js';
import { createObserveNode, type ObserveNode } from '../../src/activities/observe.js';
import type { ObserveNodeInput } from '../../src/activities/types.js';
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import { NODE_CLAIM_ANNOTATION, NODE_CLAIM_UID_ANNOTATION, type PodSelection } from '../../src/api/plan.js';
import { WatchCache } from '../../src/k8s/watch-cache.js';
import { claimingPlan, deletePlanObject } from '../helpers/direct-plan.js';
import { listNodePods } from '../helpers/pod-probes.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  ignoreNotFound,
  kubeConfig,
  makeDeployment,
  makePdb,
  makePod,
  setUnschedulable,
  sleep,
  waitFor,
  waitPdb,
  waitPodReady,
  waitPodsReady,
  type Clients,
  withoutVersions,
} from '../helpers/k8s.js';

const SELECTION: PodSelection = { ignoreDaemonSets: true, deleteEmptyDirData: false, force: false };
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const logger = pino({ level: process.env.E2E_LOG_LEVEL ?? 'silent' });

let c: Clients;
/** The Node's metadata.uid, which an observation reports. */
const nodeUid = async (name: string) => (await c.core.readNode({ name })).metadata?.uid;
let cache: WatchCache;
let observe: ObserveNode;
const cleanups: Array<() => Promise<unknown>> = [];

before(() => {
  c = clients(kubeConfig()); // throws a clear error when KUBECONFIG is unset
  cache = new WatchCache({ kubeConfig: c.kc, logger, podIdleMs: 5_000 });
  observe = createObserveNode({ kubeConfig: c.kc, logger, cache });
});

after(async () => {
  await cache?.close();
  for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
});

type Changed = Extract<NodeObservation, { changed: true }>;

/** Runs `observe` and measures how long it took, ms. */
async function timed(input: ObserveNodeInput): Promise<{ obs: NodeObservation; ms: number }> {
  const t0 = Date.now();
  const obs = await observe(input);
  return { obs, ms: Date.now() - t0 };
}

/** Asserts `obs` is a change and returns it typed. */
function changed(obs: NodeObservation): Changed {
  assert.equal(obs.changed, true, `expected a change, got ${JSON.stringify(obs)}`);
  return obs as Changed;
}

/**
 * Waits until the node's observation is stable (a 1.5 s wait on it answers "unchanged"), so a test's
 * own change is the only one its waiting call sees. @returns the stable observation.
 */
async function settled(node: string): Promise<Changed> {
  for (let i = 0; i < 20; i++) {
    const now = changed(await observe({ node, selection: SELECTION, maxWaitSeconds: 0 }));
    const again = await observe({ node, selection: SELECTION, since: now.fingerprint, maxWaitSeconds: 1.5 });
    if (!again.changed) return now;
  }
  throw new Error(`node ${node}: observation never settled`);
}

function podNamed(obs: Changed, name: string): ObservedPod | undefined {
  return obs.pods.find((p) => p.name === name);
}

describe('observeNode on the real stack', { timeout: 240_000 }, () => {
  let node: string;
  let ns: string;
  let first: Changed;

  before(async () => {
    node = await createNode(c, 'obs-node');
    cleanups.push(() => deleteNode(c, node));
    ns = await createNamespace(c, 'obs');
    cleanups.push(() => deleteNamespace(c, ns));
    // Two ReplicaSet pods (a Deployment) behind PDB `web` (one disruption allowed), a bare pod
    // (Block/NoController), and PDB `all` with an empty selector (policy/v1: every pod of the
    // namespace; an integer minAvailable, as the disruption controller finds no scale for a bare pod).
    await c.apps.createNamespacedDeployment({
      namespace: ns,
      body: makeDeployment(ns, 'web', 2, { nodeName: node, terminationGracePeriodSeconds: 5 }),
    });
    await c.core.createNamespacedPod({ namespace: ns, body: makePod(ns, 'bare', { nodeName: node }) });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'web', { app: 'web' }, { maxUnavailable: 1 }),
    });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, 'all', {}, { minAvailable: 0 }),
    });
    await waitPodsReady(c, ns, { app: 'web' }, 2);
    await waitPodReady(c, ns, 'bare');
    await waitPdb(c, ns, 'web', (p) => (p.status?.disruptionsAllowed ?? 0) === 1);
    await waitPdb(c, ns, 'all', (p) => (p.status?.disruptionsAllowed ?? 0) === 3);
  });

  it('answers at once without `since`, with the pods and PDBs exactly as listNodePods classifies them', async () => {
    const { obs, ms } = await timed({ node, selection: SELECTION, maxWaitSeconds: 30 });
    first = changed(obs);
    assert.ok(ms < 5_000, `cold cache answered in ${ms} ms`);
    assert.match(first.fingerprint, /^[0-9a-f]{16}$/);
    assert.deepEqual(first.node, { exists: true, unschedulable: false, uid: await nodeUid(node) });
    const listed = await listNodePods(c, { node, selection: SELECTION });
    assert.deepEqual(first.pods, listed.pods, 'same pods, decisions and PDB keys as listNodePods');
    assert.deepEqual(first.pdbs, listed.pdbs);
    assert.deepEqual(
      first.pods.map((p) => [p.name.startsWith('web-') ? 'web' : p.name, p.action, p.reason, p.pdbs]),
      [
        ['bare', 'Block', 'NoController', [`${ns}/all`]],
        ['web', 'Evict', 'Evictable', [`${ns}/all`, `${ns}/web`]],
        ['web', 'Evict', 'Evictable', [`${ns}/all`, `${ns}/web`]],
      ],
    );
    assert.deepEqual(withoutVersions(first.pdbs), [
      { key: `${ns}/all`, disruptionsAllowed: 3 },
      { key: `${ns}/web`, disruptionsAllowed: 1 },
    ]);
    // Warm: a second call is answered from the same informers (no new list).
    const podInformer = () => cache.informers().find((i) => i.what.endsWith(`spec.nodeName=${node}`));
    const warmBefore = podInformer();
    const { obs: again, ms: warmMs } = await timed({ node, selection: SELECTION, maxWaitSeconds: 30 });
    assert.equal(changed(again).fingerprint, first.fingerprint, 'same content, same fingerprint');
    assert.ok(warmMs < 200, `warm cache answered in ${warmMs} ms`);
    assert.deepEqual(podInformer(), warmBefore, 'the node’s Pod informer is reused');
    assert.ok(
      cache.informers().every((i) => i.running && i.synced && i.errors === 0),
      JSON.stringify(cache.informers()),
    );
  });

  it('answers { changed: false } after maxWaitSeconds when nothing changes', async () => {
    const stable = await settled(node);
    const { obs, ms } = await timed({
      node,
      selection: SELECTION,
      since: stable.fingerprint,
      maxWaitSeconds: 2,
    });
    assert.deepEqual(obs, { changed: false, fingerprint: stable.fingerprint });
    assert.ok(ms >= 1_950 && ms < 3_500, `answered after ${ms} ms`);
  });

  it('an immaterial change (an annotation on a pod) does not wake the caller', async () => {
    const stable = await settled(node);
    const sub = cache.acquire(node);
    try {
      const seen = sub.changes;
      const waiting = timed({ node, selection: SELECTION, since: stable.fingerprint, maxWaitSeconds: 3 });
      await sleep(500);
      await c.core.patchNamespacedPod(
        { namespace: ns, name: 'bare', body: { metadata: { annotations: { 'obs.test/touched': 'yes' } } } },
        MERGE_PATCH,
      );
      const { obs, ms } = await waiting;
      assert.deepEqual(obs, { changed: false, fingerprint: stable.fingerprint });
      assert.ok(ms >= 2_950, `answered after ${ms} ms, at maxWaitSeconds`);
      assert.ok(sub.changes > seen, 'the cache did see the update');
    } finally {
      sub.release();
    }
  });

  it('is cancellable inside an activity (heartbeating while it waits) and stops promptly', async () => {
    const stable = await settled(node);
    // The observation heartbeats by half its heartbeat timeout at the latest (here 1 s), then every 2 s.
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 2_000 });
    let beats = 0;
    env.on('heartbeat', () => beats++);
    const running = env.run(observe, {
      node,
      selection: SELECTION,
      since: stable.fingerprint,
      maxWaitSeconds: 60,
    });
    await sleep(2_500);
    const t0 = Date.now();
    env.cancel();
    await assert.rejects(running, (err) => err instanceof CancelledFailure);
    assert.ok(Date.now() - t0 < 1_000, `stopped ${Date.now() - t0} ms after the cancellation`);
    assert.ok(beats >= 1, `heartbeats during a 2.5 s wait: ${beats}`);
    // Outside an activity, a plain call: same answer, no heartbeats needed.
    const plain = await observe({ node, selection: SELECTION, since: stable.fingerprint, maxWaitSeconds: 0 });
    assert.deepEqual(plain, { changed: false, fingerprint: stable.fingerprint });
  });

  it('cordoning the node wakes a waiting call with the new content', async () => {
    await setUnschedulable(c, node, false);
    const stable = await settled(node);
    const waiting = timed({ node, selection: SELECTION, since: stable.fingerprint, maxWaitSeconds: 30 });
    await sleep(300);
    const t0 = Date.now();
    await setUnschedulable(c, node, true);
    const { obs } = await waiting;
    const took = Date.now() - t0;
    const seen = changed(obs);
    assert.deepEqual(seen.node, { exists: true, unschedulable: true, uid: await nodeUid(node) });
    assert.notEqual(seen.fingerprint, stable.fingerprint);
    assert.deepEqual(seen.pods, stable.pods, 'the pods did not change');
    assert.ok(took < 2_500, `woke ${took} ms after the cordon (coalescing 500 ms)`);
  });

  it('a change of a PDB’s allowance wakes a waiting call', async () => {
    const stable = await settled(node);
    const waiting = timed({ node, selection: SELECTION, since: stable.fingerprint, maxWaitSeconds: 30 });
    await sleep(300);
    const t0 = Date.now();
    await c.policy.patchNamespacedPodDisruptionBudget(
      { namespace: ns, name: 'web', body: { spec: { maxUnavailable: 0 } } },
      MERGE_PATCH,
    );
    const seen = changed((await waiting).obs);
    const took = Date.now() - t0;
    // Until the disruption controller has observed the new generation the eviction subresource
    // refuses, so the allowance counts as 0 from the spec change on; afterwards it is 0 for real.
    assert.deepEqual(
      withoutVersions(seen.pdbs).find((p) => p.key === `${ns}/web`),
      { key: `${ns}/web`, disruptionsAllowed: 0 },
    );
    assert.deepEqual(
      withoutVersions(seen.pdbs).find((p) => p.key === `${ns}/all`),
      { key: `${ns}/all`, disruptionsAllowed: 3 },
    );
    assert.ok(took < 2_500, `woke ${took} ms after the PDB patch`);

    // And back: the allowance returns once the controller has processed the spec.
    await c.policy.patchNamespacedPodDisruptionBudget(
      { namespace: ns, name: 'web', body: { spec: { maxUnavailable: 1 } } },
      MERGE_PATCH,
    );
    let since = seen.fingerprint;
    const back = await waitFor(
      async () => {
        const o = await observe({ node, selection: SELECTION, since, maxWaitSeconds: 5 });
        if (!o.changed) return undefined;
        since = o.fingerprint;
        return o.pdbs.find((p) => p.key === `${ns}/web`)?.disruptionsAllowed === 1 ? o : undefined;
      },
      30_000,
      { what: 'PDB web allows 1 again' },
    );
    assert.equal(back.changed, true);
  });

  it('deleting a pod wakes a waiting call: the pod is terminating (Wait, deletionTimestampMs)', async () => {
    const stable = await settled(node);
    const victim = stable.pods.find((p) => p.name.startsWith('web-'));
    assert.ok(victim);
    const waiting = timed({ node, selection: SELECTION, since: stable.fingerprint, maxWaitSeconds: 30 });
    await sleep(300);
    const t0 = Date.now();
    await c.core.deleteNamespacedPod({ namespace: ns, name: victim.name });
    const seen = changed((await waiting).obs);
    const took = Date.now() - t0;
    assert.ok(took < 2_500, `woke ${took} ms after the delete`);
    // Its grace period (5 s, which kwok honours) outlasts the wake-up: it is still there, terminating.
    const now = seen.pods.find((p) => p.uid === victim.uid);
    assert.ok(now, 'the pod is still terminating');
    assert.equal(now.action, 'Wait');
    assert.equal(now.reason, 'Terminating');
    assert.equal(typeof now.deletionTimestampMs, 'number');
    assert.ok(Math.abs(now.deletionTimestampMs! - (t0 + 5_000)) < 30_000, 'a plausible deletion time');
  });

  it('two changes within the coalescing window arrive as one answer', async () => {
    // Its own starting point, whatever ran before: cordoned, two web pods, the bare pod.
    await setUnschedulable(c, node, true);
    await waitPodsReady(c, ns, { app: 'web' }, 2);
    const stable = await settled(node);
    assert.equal(stable.node.unschedulable, true);
    assert.equal(podNamed(stable, 'bare')?.action, 'Block');
    const waiting = timed({
      node,
      selection: SELECTION,
      since: stable.fingerprint,
      maxWaitSeconds: 30,
      coalesceMs: 1_500,
      quietMs: 1_500, // a fixed window
    });
    await sleep(300);
    const t0 = Date.now();
    await setUnschedulable(c, node, false);
    await sleep(200);
    await c.core.deleteNamespacedPod({ namespace: ns, name: 'bare' });
    const seen = changed((await waiting).obs);
    const took = Date.now() - t0;
    assert.equal(seen.node.unschedulable, false, 'the first change (uncordon)');
    const bare = podNamed(seen, 'bare');
    assert.ok(bare === undefined || bare.action === 'Wait', 'the second change (bare pod deleted)');
    assert.ok(took >= 1_400 && took < 3_500, `one answer ${took} ms after the first change`);
  });

  it('a lone change is answered after the quiet time, not at the end of the window', async () => {
    await setUnschedulable(c, node, false);
    const stable = await settled(node);
    assert.equal(stable.node.unschedulable, false);
    const waiting = timed({
      node,
      selection: SELECTION,
      since: stable.fingerprint,
      maxWaitSeconds: 30,
      coalesceMs: 8_000,
      quietMs: 200,
    });
    await sleep(300);
    await setUnschedulable(c, node, true);
    // Well after the quiet time, inside the window; 3 s leaves room for a watch event delivered late
    // on a loaded host (1.5 s was once not enough in CI).
    await sleep(3_000);
    await setUnschedulable(c, node, false);
    const seen = changed((await waiting).obs);
    assert.equal(seen.node.unschedulable, true, 'answered before the second change');
    await settled(node);
  });

  it('a waiter ignoring a PDB’s status writes (listedPdbsOnly) is not woken by them; a change of its spec and any other change wake it', async () => {
    await settled(node);
    const watch = cache.acquire(node);
    const all = `${ns}/all`;
    const touch = (name: string, value: string) =>
      c.policy.patchNamespacedPodDisruptionBudget(
        { namespace: ns, name, body: { metadata: { labels: { touched: value } } } },
        MERGE_PATCH,
      );
    try {
      assert.equal(await watch.waitSynced(), true);
      // A write that leaves metadata.generation as it was, as the disruption controller's status
      // writes do: it moves the counter, but a waiter ignoring `all` sleeps on.
      let seen = watch.changes;
      let woke: boolean | undefined;
      let waiting = watch.waitForChange(seen, undefined, (k) => k === all).then((w) => (woke = w));
      await touch('all', '1');
      await waitFor(async () => (watch.changes > seen ? true : undefined), 10_000, {
        what: 'the cache sees the write',
      });
      await sleep(300);
      assert.equal(woke, undefined, 'not woken by a status-only write of an ignored PDB');
      // The same write to a PDB it does not ignore wakes it.
      await touch('web', '1');
      assert.equal(await waiting, true);

      // A spec change of the ignored PDB (a new generation: its selector or budget may differ) wakes it.
      seen = watch.changes;
      woke = undefined;
      waiting = watch.waitForChange(seen, undefined, (k) => k === all).then((w) => (woke = w));
      await c.policy.patchNamespacedPodDisruptionBudget(
        { namespace: ns, name: 'all', body: { spec: { minAvailable: 1 } } },
        MERGE_PATCH,
      );
      assert.equal(await waiting, true);
    } finally {
      watch.release();
      await c.policy.patchNamespacedPodDisruptionBudget(
        { namespace: ns, name: 'all', body: { spec: { minAvailable: 0 } } },
        MERGE_PATCH,
      );
      await waitPdb(c, ns, 'all'); // the disruption controller has seen the budget back
    }
  });

  it('deleting the node wakes a waiting call: exists false, no pods, no PDBs', async () => {
    const stable = await settled(node);
    const waiting = timed({ node, selection: SELECTION, since: stable.fingerprint, maxWaitSeconds: 30 });
    await sleep(300);
    const t0 = Date.now();
    await ignoreNotFound(() => c.core.deleteNode({ name: node }));
    const seen = changed((await waiting).obs);
    const took = Date.now() - t0;
    assert.deepEqual(
      { node: seen.node, pods: seen.pods, pdbs: seen.pdbs },
      { node: { exists: false, unschedulable: false }, pods: [], pdbs: [] },
    );
    assert.ok(took < 2_500, `woke ${took} ms after the delete`);
    const again = await observe({ node, selection: SELECTION, maxWaitSeconds: 0 });
    assert.equal(changed(again).fingerprint, seen.fingerprint, 'a missing node has a stable fingerprint');
  });
});

describe('waitClaimReleased on the real stack', { timeout: 60_000 }, () => {
  const plan = { name: 'obs-waiting-plan', uid: 'uid-waiting' };
  let wait: ReturnType<typeof createWaitClaimReleased>;
  let node: string;
  /** The plans whose claims the tests write: real ones (see claimingPlan). */
  let holder: { name: string; uid: string };
  let third: { name: string; uid: string };
  const claim = (by: { name: string; uid: string } | null) =>
    c.core.patchNode(
      {
        name: node,
        body: {
          metadata: {
            annotations: {
              [NODE_CLAIM_ANNOTATION]: by?.name ?? null,
              [NODE_CLAIM_UID_ANNOTATION]: by?.uid ?? null,
            },
          },
        },
      },
      MERGE_PATCH,
    );

  before(async () => {
    wait = createWaitClaimReleased({ cache, logger, heartbeatIntervalMs: 500, firstHeartbeatMs: 500 });
    await applyCrds(c);
    holder = await claimingPlan(c, 'obs-holder');
    cleanups.push(() => deletePlanObject(c, holder.name));
    third = await claimingPlan(c, 'obs-third');
    cleanups.push(() => deletePlanObject(c, third.name));
    node = await createNode(c, 'obs-claim');
    cleanups.push(() => deleteNode(c, node));
    await claim(holder);
  });

  it('answers Released as soon as the holder removes its claim, not at maxWaitSeconds', async () => {
    let answered = false;
    const running = wait({ plan, node, heldBy: holder.name, maxWaitSeconds: 30 }).finally(
      () => (answered = true),
    );
    await sleep(1_000);
    assert.equal(answered, false, 'still waiting while the holder holds the node');
    const t0 = Date.now();
    await claim(null);
    assert.deepEqual(await running, { outcome: 'Released' });
    assert.ok(Date.now() - t0 < 2_000, `answered ${Date.now() - t0} ms after the hand-back`);
    // Already handed back: at once; another plan holding it now: Released too (cordonNode decides).
    assert.deepEqual(await wait({ plan, node, heldBy: holder.name, maxWaitSeconds: 30 }), {
      outcome: 'Released',
    });
    await claim(third);
    const w = cache.acquire(node);
    try {
      const claimedBy = () => w.getNode()?.metadata?.annotations?.[NODE_CLAIM_ANNOTATION];
      await waitFor(() => claimedBy() === third.name, 5_000, { what: 'the cache sees the third claim' });
    } finally {
      w.release();
    }
    assert.deepEqual(await wait({ plan, node, heldBy: holder.name, maxWaitSeconds: 30 }), {
      outcome: 'Released',
    });
  });

  it('answers StillHeld after maxWaitSeconds, and is cancellable inside an activity (heartbeating)', async () => {
    await claim(holder);
    const t0 = Date.now();
    assert.deepEqual(await wait({ plan, node, heldBy: holder.name, maxWaitSeconds: 1 }), {
      outcome: 'StillHeld',
    });
    assert.ok(Date.now() - t0 >= 900, `waited ${Date.now() - t0} ms`);
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 2_000 });
    let beats = 0;
    env.on('heartbeat', () => beats++);
    const running = env.run(wait, { plan, node, heldBy: holder.name, maxWaitSeconds: 30 });
    await sleep(1_500);
    const t1 = Date.now();
    env.cancel();
    await assert.rejects(running, (err) => err instanceof CancelledFailure);
    assert.ok(Date.now() - t1 < 1_000, `stopped ${Date.now() - t1} ms after the cancellation`);
    assert.ok(beats >= 1, `heartbeats during a 1.5 s wait: ${beats}`);
  });

  it('answers NodeNotFound for a node that does not exist, or once it is deleted', async () => {
    assert.deepEqual(
      await wait({
        plan,
        node: `obs-absent-${Date.now().toString(36)}`,
        heldBy: holder.name,
        maxWaitSeconds: 5,
      }),
      { outcome: 'NodeNotFound' },
    );
    const running = wait({ plan, node, heldBy: holder.name, maxWaitSeconds: 30 });
    await sleep(500);
    await deleteNode(c, node);
    assert.deepEqual(await running, { outcome: 'NodeNotFound' });
  });
});

describe('the watch cache', { timeout: 60_000 }, () => {
  it('stops a node’s Pod informer after its idle time and starts a new one on the next use', async () => {
    const own = new WatchCache({ kubeConfig: c.kc, logger, podIdleMs: 1_000 });
    try {
      const obs = createObserveNode({ kubeConfig: c.kc, logger, cache: own });
      const absent = `obs-absent-${Date.now().toString(36)}`;
      const seen = changed(await obs({ node: absent, selection: SELECTION, maxWaitSeconds: 0 }));
      assert.deepEqual(seen.node, { exists: false, unschedulable: false });
      const podInformer = () => own.informers().find((i) => i.what.endsWith(`spec.nodeName=${absent}`));
      assert.equal(podInformer()?.running, true, 'kept warm after the call');
      await waitFor(() => podInformer() === undefined, 5_000, { what: 'idle Pod informer stopped' });
      assert.ok(
        own.informers().every((i) => i.running),
        'the cluster-wide informers stay (for clusterIdleMs)',
      );
      await obs({ node: absent, selection: SELECTION, since: seen.fingerprint, maxWaitSeconds: 0 });
      assert.equal(podInformer()?.synced, true, 'a new one on the next use');
    } finally {
      await own.close();
    }
    assert.throws(() => own.acquire('x'), /closed/);
  });

  it('restarts its informers with a bounded backoff after their connections drop, and catches up', async () => {
    // A TCP proxy in front of the API server that the test can cut: while it is down every watch
    // breaks and every re-list fails (client-node's informer stops on such an `error`).
    const upstream = new URL(c.kc.getCurrentCluster()!.server);
    const sockets = new Set<Socket>();
    let proxy: Server | undefined;
    const listen = (port: number) =>
      new Promise<number>((resolve, reject) => {
        const server = createServer((down) => {
          const up = connect(Number(upstream.port), upstream.hostname);
          for (const s of [down, up]) {
            sockets.add(s);
            s.on('close', () => sockets.delete(s));
            s.on('error', () => s.destroy());
          }
          down.pipe(up).pipe(down);
        });
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
        proxy = server;
      });
    const cut = async () => {
      const closed = new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
      for (const s of sockets) s.destroy(); // close() waits for the open connections
      await closed;
    };
    const port = await listen(0);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: c.kc.clusters.map((cl) =>
        cl.name === c.kc.getCurrentCluster()!.name ? { ...cl, server: `https://127.0.0.1:${port}` } : cl,
      ),
      users: c.kc.users,
      contexts: c.kc.contexts,
      currentContext: c.kc.currentContext,
    });
    const own = new WatchCache({ kubeConfig: kc, logger, restartBackoffMs: { initial: 200, max: 1_000 } });
    const node = await createNode(c, 'obs-node');
    cleanups.push(() => deleteNode(c, node));
    try {
      const obs = createObserveNode({ kubeConfig: kc, logger, cache: own });
      const seen = changed(await obs({ node, selection: SELECTION, maxWaitSeconds: 0 }));
      assert.deepEqual(seen.node, { exists: true, unschedulable: false, uid: await nodeUid(node) });

      await cut();
      await setUnschedulable(c, node, true); // changed while the cache cannot see it
      await waitFor(() => own.informers().every((i) => i.errors >= 2), 10_000, {
        what: 'every informer failed and retried',
      });
      await listen(port);

      const t0 = Date.now();
      const caught = changed(
        await obs({ node, selection: SELECTION, since: seen.fingerprint, maxWaitSeconds: 15 }),
      );
      assert.deepEqual(caught.node, { exists: true, unschedulable: true, uid: await nodeUid(node) });
      assert.ok(Date.now() - t0 < 5_000, `caught up ${Date.now() - t0} ms after the proxy came back`);
      assert.ok(
        own.informers().every((i) => i.running && i.synced),
        JSON.stringify(own.informers().map((i) => ({ ...i, lastError: String(i.lastError) }))),
      );
    } finally {
      await own.close();
      await cut();
    }
  });
});
