// test-lane: parallel
/**
 * A crash of the worker across the plan's deadline (issue 31): `kill -9` of the worker process a
 * few seconds before the deadline, a new worker only after it. The deadline is a durable timer,
 * so it fires once, for the new worker, and the plan ends as its `spec.onDeadline` says; nothing
 * happens early:
 *
 * - onDeadline Stop: the plan ends Blocked/DeadlineExceeded once (one Warning Event
 *   DeadlineExceeded, count 1), completedAt not before the deadline, no Eviction API call (the
 *   PodDisruptionBudget never allowed one) and the pod still on its node;
 * - onDeadline DeletePods (a plan beside it, same deadline): the PodsWillBeDeleted advance notice
 *   goes out before the kill and is not sent again by the new worker; the pod is deleted after
 *   the deadline, once (one PodDeletedAtDeadline Warning, count 1); the plan ends
 *   Drained/DrainedWithDeletions.
 *
 * Each plan drains one tainted kwok node of this file holding one pod behind a
 * PodDisruptionBudget with minAvailable 1 (1 replica): it never frees, so the drain stays blocked
 * until the deadline. Real stack, a real `drainflow run --worker` process (killed, then a new one);
 * the plan workflows started directly (no operator).
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import { abortSignal } from '../../src/contract/plan-messages.js';
import { planFinished, readPlanStatus, showStatus } from '../helpers/direct-plan.js';
import {
  createNamespace,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  uniqueName,
  waitFor,
  waitPdb,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { createTaintedNode, directHarness, drainflowEnv } from '../helpers/operator-harness.js';
import { startWorkerProcess, type DrainflowProcess } from '../helpers/processes.js';

const TAINT_KEY = 'drainflow.dev/e2e-crash-deadline';
/** The plans' deadline, seconds from their start (spec.drainTimeoutSeconds). */
const DEADLINE_SECONDS = 16;
/** The DeletePods plan's advance notice, seconds before its deadline (spec.deadlineWarningSeconds). */
const WARNING_SECONDS = 8;
/** The worker is killed this long before the deadline, ms (after the advance notice). */
const KILL_BEFORE_MS = 4000;
/** The new worker starts this long after the deadline, ms. */
const START_AFTER_MS = 1000;

/** Each Event's count summed, by reason (an aggregated repeat raises `count`, not the list). */
function countByReason(events: CoreV1Event[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) out[e.reason ?? ''] = (out[e.reason ?? ''] ?? 0) + (e.count ?? 1);
  return out;
}

describe('worker killed across the plan deadline', () => {
  const h = directHarness('crash-deadline-e2e', 'crash-deadline');
  const run = uniqueName('cdl');
  const plans = { stop: uniqueName('cdl-stop'), del: uniqueName('cdl-delete') };
  let c: Clients;
  let ns = '';
  const nodes: Record<'stop' | 'del', string> = { stop: '', del: '' };
  const workers: DrainflowProcess[] = [];
  const workflowIds: string[] = [];

  /** A node of this file holding one pod `app` behind a PDB that allows no disruption. */
  async function blockedNode(which: 'stop' | 'del'): Promise<void> {
    nodes[which] = await createTaintedNode(c, `df-cdl-${which}`, { taint: { key: TAINT_KEY, value: run } });
    const d = makeDeployment(ns, which, 1, { hostname: nodes[which] });
    d.spec!.template.spec!.tolerations = [
      { key: TAINT_KEY, operator: 'Equal', value: run, effect: 'NoSchedule' },
    ];
    await c.apps.createNamespacedDeployment({ namespace: ns, body: d });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: ns,
      body: makePdb(ns, which, { app: which }, { minAvailable: 1 }),
    });
    await waitPodsReady(c, ns, { app: which }, 1);
    await waitPdb(c, ns, which, (p) => p.status?.currentHealthy === 1);
  }

  before(async () => {
    await h.connect();
    c = h.c;
    const worker = startWorkerProcess(h.opts.taskQueue, drainflowEnv()).then((p) => workers.push(p));
    const fixture = (async () => {
      ns = await createNamespace(c, 'df-cdl');
      await Promise.all([blockedNode('stop'), blockedNode('del')]);
    })();
    const results = await Promise.allSettled([worker, fixture]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  });

  after(async () => {
    for (const id of workflowIds)
      await h.client.workflow
        .getHandle(id)
        .signal(abortSignal)
        .catch(() => undefined);
    h.worker = workers.at(-1);
    // Let the last worker hand the nodes back before it stops.
    for (const name of Object.values(plans))
      await planFinished(c, name, {
        timeoutMs: 15_000,
        active: ['Pending', 'Running', 'Blocked', 'Drained'],
      }).catch(() => undefined);
    for (const w of workers.slice(0, -1)) await w.stop('SIGKILL').catch(() => undefined);
    await h.stop();
    if (c) {
      for (const name of Object.values(plans)) await h.deletePlanObject(name).catch(() => undefined);
      if (ns) await deleteNamespace(c, ns).catch(() => undefined);
      for (const n of Object.values(nodes)) if (n) await deleteNode(c, n).catch(() => undefined);
    }
  });

  it('fires the deadline once, after the crash, as onDeadline says; nothing early', async () => {
    const victim = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=del' })).items[0]!;
    const common = {
      drainTimeoutSeconds: DEADLINE_SECONDS,
      eviction: { retryBackoff: { initialSeconds: 1, maxSeconds: 2 } },
    };
    const stop = await h.startDirectPlan(plans.stop, { ...common, nodeNames: [nodes.stop] });
    const del = await h.startDirectPlan(plans.del, {
      ...common,
      nodeNames: [nodes.del],
      onDeadline: 'DeletePods',
      deadlineWarningSeconds: WARNING_SECONDS,
    });
    workflowIds.push(stop.workflowId, del.workflowId);

    // Both plans blocked by their PDB, each with its deadline in status.
    const deadlines: Record<string, number> = {};
    for (const name of Object.values(plans)) {
      const st = await waitFor(
        async () => {
          const s = await readPlanStatus(c, name);
          return s?.deadline && s.nodes?.[0]?.blockedBy?.length ? s : undefined;
        },
        20_000,
        { what: `${name} blocked, its deadline in status`, intervalMs: 200 },
      );
      deadlines[name] = Date.parse(st.deadline!);
    }
    const deadline = Math.min(...Object.values(deadlines));
    // The advance notice, sent by the first worker.
    await waitFor(
      async () => (await h.planEvents(plans.del, del.uid)).some((e) => e.reason === 'PodsWillBeDeleted'),
      DEADLINE_SECONDS * 1000,
      { what: 'PodsWillBeDeleted', intervalMs: 200 },
    );
    const killAt = deadline - KILL_BEFORE_MS;
    assert.ok(
      Date.now() < killAt,
      `the kill is due ${killAt - Date.now()} ms from now: the setup was too slow`,
    );
    await new Promise((r) => setTimeout(r, killAt - Date.now()));
    await workers[0]!.stop('SIGKILL');
    const killedAt = Date.now();

    // Nothing happens while no worker runs, the deadline included.
    await new Promise((r) =>
      setTimeout(r, Math.max(...Object.values(deadlines)) + START_AFTER_MS - Date.now()),
    );
    for (const name of Object.values(plans)) {
      const st = await readPlanStatus(c, name);
      assert.equal(st?.phase, 'Running', `${name} still Running with no worker: ${showStatus(st)}`);
    }
    const untouched = await c.core.readNamespacedPod({ namespace: ns, name: victim.metadata!.name! });
    assert.equal(untouched.metadata?.deletionTimestamp, undefined, 'no deletion without a worker');
    workers.push(await startWorkerProcess(h.opts.taskQueue, drainflowEnv()));

    // Stop: Blocked/DeadlineExceeded once, after the deadline, with no eviction call.
    const stopped = await planFinished(c, plans.stop, { timeoutMs: 60_000 });
    assert.equal(stopped.phase, 'Blocked', showStatus(stopped));
    assert.equal(stopped.reason, 'DeadlineExceeded', showStatus(stopped));
    assert.equal(stopped.nodes?.[0]?.reason, 'DeadlineExceeded', showStatus(stopped));
    assert.ok(
      Date.parse(stopped.completedAt!) >= deadlines[plans.stop]!,
      `completedAt ${stopped.completedAt}`,
    );
    assert.equal(stopped.evictionProgress?.attempts, 0, 'no Eviction API call: the PDB never allowed one');
    const kept = (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=stop' })).items;
    assert.deepEqual(
      kept.map((p) => [p.spec?.nodeName, p.metadata?.deletionTimestamp]),
      [[nodes.stop, undefined]],
      'the pod stays on its node',
    );

    // DeletePods: the pod deleted after the deadline, once; Drained/DrainedWithDeletions.
    const deleted = await planFinished(c, plans.del, { timeoutMs: 60_000 });
    assert.equal(deleted.phase, 'Drained', showStatus(deleted));
    assert.equal(deleted.reason, 'DrainedWithDeletions', showStatus(deleted));
    assert.equal(deleted.evictionProgress?.deleted, 1, showStatus(deleted));
    assert.equal(deleted.evictionProgress?.attempts, 0, showStatus(deleted));

    const late = (name: string, st: { completedAt?: string }) =>
      `${name} ended ${(Date.parse(st.completedAt!) - deadlines[name]!) / 1000} s after its deadline`;
    console.log(`${late(plans.stop, stopped)}; ${late(plans.del, deleted)}`);

    // Events: each once, the deadline's after the crash (the new worker sent them). The plan sends
    // its Events as activities beside the status write, so they may land after the phase shows.
    const eventsOnce = (name: string, uid: string, reasons: string[]) =>
      waitFor(
        async () => {
          const events = await h.planEvents(name, uid);
          const counts = countByReason(events);
          return reasons.every((r) => counts[r] !== undefined) ? events : undefined;
        },
        30_000,
        { what: `Events ${reasons.join(', ')} of ${name}`, intervalMs: 500 },
      );
    const stopEvents = countByReason(await eventsOnce(plans.stop, stop.uid, ['DeadlineExceeded']));
    const delEvents = await eventsOnce(plans.del, del.uid, ['PodsWillBeDeleted', 'PodDeletedAtDeadline']);
    assert.equal(stopEvents.DeadlineExceeded, 1, JSON.stringify(stopEvents));
    const delCounts = countByReason(delEvents);
    assert.equal(delCounts.PodsWillBeDeleted, 1, JSON.stringify(delCounts));
    assert.equal(delCounts.PodDeletedAtDeadline, 1, JSON.stringify(delCounts));
    const deletion = delEvents.find((e) => e.reason === 'PodDeletedAtDeadline')!;
    const deletedAt = Date.parse(String(deletion.firstTimestamp ?? deletion.eventTime));
    // Event times have whole seconds: the deletion is in the second of the deadline or later.
    assert.ok(
      deletedAt >= Math.floor(deadlines[plans.del]! / 1000) * 1000 &&
        deletedAt >= Math.floor(killedAt / 1000) * 1000,
      `deleted at ${new Date(deletedAt).toISOString()}, deadline ${new Date(deadlines[plans.del]!).toISOString()}`,
    );
  });
});
