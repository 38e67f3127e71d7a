// test-lane: serial (kills and restarts the stack's kube-apiserver)
/**
 * The stack's kube-apiserver killed (`kill -9`) while a node's pods are being evicted, then
 * started again with `stack.sh up` (etcd keeps the cluster) (issue 31): the drain resumes and ends
 * Drained, every pod evicted, and no pod evicted twice (no eviction call for a pod after its
 * Evicted answer, from the worker's log: test/helpers/eviction-log.ts).
 *
 * The pods are 6 replicas behind a PodDisruptionBudget allowing 1 disruption, each replacement
 * Ready 2 s after it starts (kwok's ready-delay), so evictions go one at a time; the API server is
 * killed as soon as the first pod is evicted. A real `drainflow run --worker` process on the
 * stack's Temporal; the plan workflow started directly (no operator).
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { planFinished, showStatus } from '../helpers/direct-plan.js';
import { evictedAgain, evictionAnswers, pacedWorkload } from '../helpers/eviction-log.js';
import { deleteNamespace, deleteNode, uniqueName, waitFor, type Clients } from '../helpers/k8s.js';
import { directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess } from '../helpers/processes.js';
import { root } from './cli-fixtures.js';

const POOL_LABEL = 'drainflow.dev/pool';
const TAINT_KEY = 'drainflow.dev/e2e-apiserver-restart';
/** Pods on the drained node. */
const REPLICAS = 6;

/** The stack's state directory (scripts/stack/stack.sh: $DRAINFLOW_STATE, else <cache>/stack). */
const STATE =
  process.env.DRAINFLOW_STATE ??
  join(process.env.DRAINFLOW_CACHE ?? join(homedir(), '.cache', 'drainflow'), 'stack');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('kube-apiserver killed mid-drain', () => {
  const h = directHarness('apiserver-restart-e2e', 'apiserver-restart');
  const pool = uniqueName('apirs');
  const planName = uniqueName('apirs-plan');
  let c: Clients;
  let ns = '';
  const nodes: string[] = [];
  let workflowId = '';
  let killed = false;

  /** Starts what of the stack is not running (here: the API server) and waits until it is ready. */
  function startStack(): void {
    execFileSync('bash', [join(root, 'scripts', 'stack', 'stack.sh'), 'up'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 180_000,
    });
  }

  before(async () => {
    await h.connect();
    c = h.c;
    const worker = startWorkerProcess(h.opts.taskQueue, drainflowEnv()).then((p) => (h.worker = p));
    const fixture = (async () => {
      const w = await pacedWorkload(c, {
        prefix: 'apirs',
        pool,
        labelKey: POOL_LABEL,
        taintKey: TAINT_KEY,
        replicas: REPLICAS,
      });
      ns = w.ns;
      nodes.push(...w.nodes);
    })();
    const results = await Promise.allSettled([worker, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    if (killed) startStack();
    if (workflowId)
      await h.client.workflow
        .getHandle(workflowId)
        .signal(abortSignal)
        .catch(() => undefined);
    await h.stop();
    if (c) {
      await h.deletePlanObject(planName).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      for (const n of nodes) await deleteNode(c, n).catch(() => undefined);
    }
  });

  it('drains every pod once after kill -9 of the API server during the evictions', async () => {
    const [target] = nodes;
    const originals = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items
      .filter((p) => p.spec?.nodeName === target)
      .map((p) => `${ns}/${p.metadata!.name}`)
      .sort();
    assert.equal(originals.length, REPLICAS);
    workflowId = (
      await h.startDirectPlan(planName, {
        nodeNames: [target!],
        drainTimeoutSeconds: 300,
        eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 2 } },
      })
    ).workflowId;

    await waitFor(() => evictionAnswers(h.worker!.logs()).some((a) => a.outcome === 'Evicted'), 60_000, {
      what: 'the first eviction',
      intervalMs: 25,
    });
    const pid = Number(readFileSync(join(STATE, 'run', 'kube-apiserver.pid'), 'utf8').trim());
    assert.ok(alive(pid), `the stack's kube-apiserver (pid ${pid}) runs`);
    process.kill(-pid, 'SIGKILL');
    killed = true;
    await waitFor(() => !alive(pid), 10_000, { what: `kube-apiserver pid ${pid} exited` });
    const evictedBefore = evictionAnswers(h.worker!.logs()).filter((a) => a.outcome === 'Evicted').length;
    const t0 = Date.now();
    startStack();
    killed = false;
    console.log(`kube-apiserver down ${Date.now() - t0} ms; ${evictedBefore} evicted before the kill`);

    const final = await planFinished(c, planName, { timeoutMs: 90_000 });
    assert.equal(final.phase, 'Drained', showStatus(final));
    assert.equal(final.evictionProgress?.evicted, REPLICAS, showStatus(final));
    const answers = evictionAnswers(h.worker!.logs());
    const { again, evicted } = evictedAgain(answers);
    assert.deepEqual(again, [], 'eviction calls for pods already evicted');
    assert.deepEqual(evicted, originals, 'each pod of the node evicted');
    assert.ok(evictedBefore < REPLICAS, `${evictedBefore} evicted before the kill: the kill came mid-drain`);
    console.log(`eviction calls: ${answers.length} (${answers.map((a) => a.outcome).join(', ')})`);
  });
});
