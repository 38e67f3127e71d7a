/**
 * `drainNodeWorkflow`: cordons one node and evicts its pods, one Eviction API call per pod where
 * possible. A child of `drainPlanWorkflow`, which it keeps informed through `nodeProgress` signals.
 *
 * Deterministic: only pure modules, activity types and `@temporalio/workflow` are imported.
 *
 * The three times of a drain live here:
 * - per-call timeout: `evictPod`'s start-to-close timeout = spec.eviction.callTimeoutSeconds, no
 *   automatic retry; after a timeout the pod is checked (by UID) before it is evicted again;
 * - plan deadline: a durable timer to `deadlineMs`; when it fires no eviction starts any more and
 *   the node ends Blocked/DeadlineExceeded naming what still blocks;
 * - cooldown: a pod's `notBeforeMs` (the server's Retry-After, or the backoff) and, for a pod
 *   behind a PDB that allows no disruption, a bounded wait on the PDB. The scheduler never sends an
 *   eviction before `notBeforeMs`, whatever signals arrive.
 */
import {
  ActivityFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { DrainActivities } from '../../activities/types.js';
import type { ObservedPod as PodItem } from '../../contract/observation.js';
import type { EvictResult } from '../../contract/eviction.js';
import type { Blocker } from '../../api/plan.js';
import type { NodePhase } from '../../api/reasons.js';
import { backoffSeconds } from '../../drain/backoff.js';
import { planNextStep, nextActionAtMs, type PdbTrack, type PodTrack } from '../../drain/scheduler.js';
import { sortAndCapBlockers } from '../../drain/conditions.js';
import type { DrainNodeInput } from '../messages.js';
import { nodeControlSignal, nodeProgressSignal } from '../../contract/node-messages.js';
import type { NodeProgress } from '../../contract/progress.js';

/** Longest single wait on a terminating pod before looking again, seconds. */
const POD_GONE_WAIT_SECONDS = 300;
/** Minimum time between two progress signals to the plan workflow, ms. */
const PROGRESS_INTERVAL_MS = 1000;
/** How often a node held by another plan is tried again, seconds. */
const CLAIM_RETRY_SECONDS = 5;
/** Re-list passes after the pods found first are handled (catches pods that landed before the cordon took effect). */
const MAX_PASSES = 3;

const k8s = proxyActivities<DrainActivities>({
  startToCloseTimeout: '60s',
  retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
});

/** Drains one node. @returns the node's final progress (phase Drained, Blocked, Aborted or Failed). */
export async function drainNodeV1(input: DrainNodeInput): Promise<NodeProgress> {
  const spec = input.spec!;
  const { node, plan } = input;
  const backoff = spec.eviction.retryBackoff;
  const evictor = proxyActivities<DrainActivities>({
    startToCloseTimeout: `${spec.eviction.callTimeoutSeconds}s`,
    retry: { maximumAttempts: 1 },
  });
  const waiters = proxyActivities<DrainActivities>({
    startToCloseTimeout: `${Math.max(backoff.maxSeconds, POD_GONE_WAIT_SECONDS) + 30}s`,
    heartbeatTimeout: '20s',
    retry: { initialInterval: '1s', maximumInterval: '30s', backoffCoefficient: 2 },
  });

  let paused = input.paused;
  let aborted = false;
  let deadlineHit = false;
  let changed = false;
  const pods = new Map<string, PodTrack>();
  const pdbs = new Map<string, PdbTrack>();
  const blocked: Blocker[] = [];
  let attempts = 0;
  let tooManyRequests = 0;
  let lastError: string | undefined;
  let phase: NodePhase = 'Pending';
  let reason: string | undefined;
  let message: string | undefined;
  let cordonedByPlan = false;
  let claimed = false;
  let dirty = true;
  let finished = false;

  setHandler(nodeControlSignal, ({ action }) => {
    if (action === 'pause') paused = true;
    else if (action === 'resume') paused = false;
    else aborted = true;
    changed = true;
    dirty = true;
  });

  const progress = (): NodeProgress => {
    const list = [...pods.values()];
    const now = Date.now();
    const blockers: Blocker[] = [...blocked];
    for (const p of list) {
      if (p.state === 'Failed' || (p.state === 'Pending' && p.lastReason)) {
        blockers.push({
          pod: p.key,
          ...(p.blockingPdb ? { pdb: p.blockingPdb } : p.pdbs.length === 1 ? { pdb: p.pdbs[0]! } : {}),
          reason: p.lastReason ?? 'Unknown',
          message: p.lastMessage ?? '',
          ...(p.blockedSinceMs !== undefined ? { since: new Date(p.blockedSinceMs).toISOString() } : {}),
          attempts: p.attempts,
        });
      } else if (
        p.state === 'Pending' &&
        p.pdbs.length === 1 &&
        (pdbs.get(p.pdbs[0]!)?.allowed ?? 1) <= 0 &&
        !deadlineHit
      ) {
        // Not tried yet: its PodDisruptionBudget allows no disruption now (we wait for it).
        blockers.push({
          pod: p.key,
          pdb: p.pdbs[0]!,
          reason: 'DisruptionBudget',
          message: `waiting for PodDisruptionBudget ${p.pdbs[0]!} to allow a disruption`,
          attempts: p.attempts,
        });
      } else if (deadlineHit && p.state !== 'Gone') {
        blockers.push({
          pod: p.key,
          ...(p.pdbs.length === 1 ? { pdb: p.pdbs[0]! } : {}),
          reason: p.state === 'Terminating' ? 'Terminating' : 'NotEvicted',
          message:
            p.state === 'Terminating'
              ? 'pod is still terminating'
              : 'pod was not evicted before the deadline',
          attempts: p.attempts,
        });
      }
    }
    const next = nextActionAtMs(list, pdbs, now);
    return {
      node,
      phase,
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
      podsTotal: list.length + blocked.length,
      podsEvicted: list.filter((p) => p.state === 'Gone').length,
      podsFailed: list.filter((p) => p.state === 'Failed').length + blocked.length,
      blockedBy: sortAndCapBlockers(blockers).blockers,
      attempts,
      tooManyRequests,
      ...(next !== undefined ? { nextActionAtMs: next } : {}),
      ...(lastError ? { lastError } : {}),
      cordonedByPlan,
      claimed,
    };
  };

  // Coalesced progress reports: every change marks dirty; at most one report per
  // PROGRESS_INTERVAL_MS (the final one goes out at once), which bounds the plan workflow's history.
  const parent = getExternalWorkflowHandle(input.parentWorkflowId);
  const reporter = (async () => {
    for (;;) {
      await condition(() => dirty || finished);
      if (!dirty) return;
      dirty = false;
      await parent.signal(nodeProgressSignal, progress());
      // patched: runs started before the throttle existed replay without its timer.
      if (!finished && patched('progress-throttle')) await condition(() => finished, PROGRESS_INTERVAL_MS);
    }
  })();
  const touch = () => {
    changed = true;
    dirty = true;
  };
  const setPhase = (p: NodePhase, r?: string, m?: string) => {
    phase = p;
    reason = r;
    message = m;
    touch();
  };

  // Deadline: a durable timer from the plan's start (the parent passes the absolute time).
  const deadlineScope = new CancellationScope();
  void deadlineScope
    .run(() => sleep(Math.max(0, input.deadlineMs - Date.now())))
    .then(() => {
      deadlineHit = true;
      touch();
    })
    .catch(() => undefined);

  const finish = async (p: NodePhase, r?: string, m?: string): Promise<NodeProgress> => {
    setPhase(p, r, m);
    deadlineScope.cancel();
    finished = true;
    await reporter;
    return progress();
  };

  // 1. Claim and cordon; a node held by another plan is waited for (NodeHeldByOtherPlan).
  for (;;) {
    if (aborted) return finish('Aborted', 'Aborted', 'aborted before the node was cordoned');
    if (deadlineHit)
      return finish('Blocked', 'DeadlineExceeded', 'deadline passed before the node could be claimed');
    const res = await k8s.cordonNode.executeWithOptions(
      { summary: `cordon ${node}`, startToCloseTimeout: '60s' },
      [{ plan, node }],
    );
    if (res.outcome === 'Cordoned') {
      claimed = true;
      cordonedByPlan = !res.wasUnschedulable;
      setPhase('Cordoned');
      break;
    }
    if (res.outcome === 'NodeNotFound')
      return finish('Failed', 'NodeNotFound', `node ${node} does not exist`);
    if ((phase as NodePhase) !== 'Waiting')
      setPhase('Waiting', 'NodeHeldByOtherPlan', `node ${node} is held by plan ${res.heldBy}`);
    await condition(() => aborted || deadlineHit, `${CLAIM_RETRY_SECONDS}s`);
  }

  // 2. Evict, pass by pass, until every pod is gone or the rest cannot be evicted.
  const work = new CancellationScope();
  const tasks = new Set<Promise<void>>();
  const spawn = (fn: () => Promise<void>) => {
    const t = work.run(fn).catch((err) => {
      if (!isCancellation(err)) throw err;
    });
    tasks.add(t);
    void t.finally(() => tasks.delete(t));
  };

  const waitGone = async (pod: PodTrack): Promise<void> => {
    for (;;) {
      const { gone } = await waiters.waitPodGone.executeWithOptions(
        { summary: `wait for ${pod.key} to go` },
        [{ namespace: pod.namespace, name: pod.name, uid: pod.uid, timeoutSeconds: POD_GONE_WAIT_SECONDS }],
      );
      if (gone) {
        pod.state = 'Gone';
        touch();
        return;
      }
    }
  };

  const cooldown = (pod: PodTrack, seconds: number, why: string, msg: string) => {
    pod.state = 'Pending';
    pod.notBeforeMs = Date.now() + seconds * 1000;
    pod.lastReason = why;
    pod.lastMessage = msg;
    pod.blockedSinceMs ??= Date.now();
  };

  /** Spends (n=1) or gives back (n=-1) one disruption of the pod's PDB in this drain's view. */
  const spend = (pod: PodTrack, n: number) => {
    const pdb = pod.pdbs.length === 1 ? pdbs.get(pod.pdbs[0]!) : undefined;
    if (pdb) pdb.allowed = Math.max(0, pdb.allowed - n);
  };

  const applyResult = (pod: PodTrack, res: EvictResult) => {
    // Only an eviction that took effect spent a disruption; a 429 resets the PDB below.
    if (res.outcome === 'Gone' || res.outcome === 'Failed') spend(pod, -1);
    if (res.outcome === 'Evicted' || res.outcome === 'Gone') {
      pod.lastReason = undefined;
      pod.blockingPdb = undefined;
      if (res.outcome === 'Gone') {
        pod.state = 'Gone';
      } else {
        pod.state = 'Terminating';
        spawn(() => waitGone(pod));
      }
      return;
    }
    if (res.outcome === 'TooManyRequests') {
      tooManyRequests++;
      lastError = res.message;
      if (res.cause === 'DisruptionBudget') {
        const pdbKey = res.pdb ?? (pod.pdbs.length === 1 ? pod.pdbs[0] : undefined);
        pod.blockingPdb = pdbKey;
        if (pdbKey) {
          const pdb = pdbs.get(pdbKey) ?? { key: pdbKey, allowed: 0, waiting: false, waitRounds: 0 };
          pdb.allowed = 0;
          pdbs.set(pdbKey, pdb);
          if (!pod.pdbs.includes(pdbKey)) pod.pdbs = [pdbKey];
        }
        // With Retry-After (PDB not yet processed) wait that long; without it the PDB waiter
        // decides when this pod may go (no blind retry).
        cooldown(pod, res.retryAfterSeconds ?? 0, 'DisruptionBudget', res.message);
      } else {
        cooldown(
          pod,
          res.retryAfterSeconds ?? backoffSeconds(pod.attempts, backoff),
          'TooManyRequests',
          res.message,
        );
      }
      return;
    }
    pod.state = 'Failed';
    pod.lastReason = res.reason;
    pod.lastMessage = res.message;
    pod.blockedSinceMs ??= Date.now();
    lastError = res.message;
  };

  const evictOne = async (pod: PodTrack): Promise<void> => {
    // A previous call that timed out may have taken effect: check the pod (by UID) first.
    if (pod.lastReason === 'CallFailed') {
      const state = await k8s.checkPod.executeWithOptions({ summary: `check ${pod.key}` }, [
        { namespace: pod.namespace, name: pod.name, uid: pod.uid },
      ]);
      if (state !== 'Present') {
        applyResult(pod, state === 'Gone' ? { outcome: 'Gone' } : { outcome: 'Evicted' });
        touch();
        return;
      }
    }
    pod.attempts++;
    attempts++;
    try {
      const res = await evictor.evictPod.executeWithOptions({ summary: `evict ${pod.key}` }, [
        {
          namespace: pod.namespace,
          name: pod.name,
          uid: pod.uid,
          ...(spec.eviction.gracePeriodSeconds !== undefined
            ? { gracePeriodSeconds: spec.eviction.gracePeriodSeconds }
            : {}),
        },
      ]);
      applyResult(pod, res);
    } catch (err) {
      if (isCancellation(err)) throw err;
      const timedOut = err instanceof ActivityFailure && err.cause instanceof TimeoutFailure;
      lastError = timedOut
        ? `eviction of ${pod.key} timed out`
        : `eviction of ${pod.key} failed: ${(err as Error).message}`;
      spend(pod, -1);
      cooldown(pod, backoffSeconds(pod.attempts, backoff), 'CallFailed', lastError);
    }
    touch();
  };

  const waitPdb = async (pdb: PdbTrack): Promise<void> => {
    const bound = backoffSeconds(pdb.waitRounds + 1, backoff);
    pdb.waiting = true;
    pdb.waitUntilMs = Date.now() + bound * 1000;
    touch();
    try {
      const res = await waiters.waitDisruptionAllowed.executeWithOptions(
        { summary: `wait for PDB ${pdb.key}`, startToCloseTimeout: `${bound + 30}s` },
        [{ pdb: pdb.key, timeoutSeconds: bound }],
      );
      if (res.disruptionsAllowed > 0 || !res.exists) {
        pdb.waitRounds = 0;
        pdb.allowed = res.exists ? res.disruptionsAllowed : Number.MAX_SAFE_INTEGER;
      } else {
        // The bound passed without the budget freeing (the timer makes sure it did, even if the
        // activity returned early): let one pod probe with a real eviction (the PDB status could be
        // stale), then wait longer.
        const left = (pdb.waitUntilMs ?? 0) - Date.now();
        if (left > 0) await sleep(left);
        pdb.waitRounds++;
        pdb.allowed = 1;
      }
    } finally {
      pdb.waiting = false;
      pdb.waitUntilMs = undefined;
      touch();
    }
  };

  const adopt = (items: PodItem[]) => {
    for (const item of items) {
      const known = pods.get(item.key);
      // Same pod, or a same-name replacement while the old one is still being handled.
      if (known && (known.uid === item.uid || known.state !== 'Gone')) continue;
      if (item.action === 'Skip') continue;
      if (item.action === 'Block') {
        if (!blocked.some((b) => b.pod === item.key)) {
          blocked.push({ pod: item.key, reason: item.reason, message: item.message });
        }
        continue;
      }
      const track: PodTrack = {
        key: item.key,
        namespace: item.namespace,
        name: item.name,
        uid: item.uid,
        pdbs: item.pdbs,
        state: item.action === 'Wait' ? 'Terminating' : 'Pending',
        attempts: 0,
        notBeforeMs: 0,
      };
      pods.set(item.key, track);
      if (track.state === 'Terminating') spawn(() => waitGone(track));
    }
  };

  await work.run(async () => {
    for (let pass = 1; pass <= MAX_PASSES; pass++) {
      const listed = await k8s.listNodePods.executeWithOptions({ summary: `list pods on ${node}` }, [
        { node, selection: spec.podSelection },
      ]);
      for (const o of listed.pdbs) {
        const known = pdbs.get(o.key);
        if (!known)
          pdbs.set(o.key, { key: o.key, allowed: o.disruptionsAllowed, waiting: false, waitRounds: 0 });
        else if (!known.waiting) known.allowed = o.disruptionsAllowed;
      }
      const before = pods.size + blocked.length;
      adopt(listed.pods);
      if (pass > 1 && pods.size + blocked.length === before) break;
      if (phase !== 'Draining' && !paused) setPhase('Draining');
      touch();
      for (;;) {
        if (aborted || deadlineHit) return;
        const step = planNextStep([...pods.values()], pdbs, {
          nowMs: Date.now(),
          maxInFlight: spec.eviction.maxConcurrentPerNode,
          paused,
        });
        if (step.done && tasks.size === 0) break;
        for (const key of step.evict) {
          const pod = pods.get(key)!;
          pod.state = 'Evicting';
          spend(pod, 1);
          spawn(() => evictOne(pod));
        }
        for (const key of step.waitPdbs) spawn(() => waitPdb(pdbs.get(key)!));
        if (paused && (phase as NodePhase) !== 'Paused')
          setPhase('Paused', 'PausedByUser', 'no new evictions until resumed');
        if (!paused && (phase as NodePhase) === 'Paused') setPhase('Draining');
        dirty = true;
        changed = false;
        const wake = step.wakeAtMs;
        if (wake !== undefined) {
          await condition(() => changed || aborted || deadlineHit, Math.max(1, wake - Date.now()));
        } else {
          await condition(() => changed || aborted || deadlineHit);
        }
      }
    }
  });
  work.cancel();

  if (aborted) return finish('Aborted', 'Aborted', 'drain aborted');
  const list = [...pods.values()];
  const notGone = list.filter((p) => p.state !== 'Gone');
  if (deadlineHit && notGone.some((p) => p.state !== 'Failed')) {
    return finish('Blocked', 'DeadlineExceeded', `deadline passed with ${notGone.length} pod(s) not evicted`);
  }
  const failed = list.filter((p) => p.state === 'Failed').length + blocked.length;
  if (failed > 0) {
    return finish('Blocked', 'PodsNotEvictable', `${failed} pod(s) cannot be evicted`);
  }
  return finish('Drained', 'Drained', `all ${list.length} pod(s) evicted`);
}
