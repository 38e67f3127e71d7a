/**
 * The `observeNode` activity ({@link DrainActivities.observeNode}): a level-triggered observation of
 * one node, the pods bound to it and the PodDisruptionBudgets covering them, answered from the
 * worker-wide {@link WatchCache} (informers) rather than by listing on every call (the protocol:
 * {@link createObserveNode}).
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { needsNamespaceLabels } from '../drain/pod-policy.js';
import { pino, type Logger } from 'pino';
import {
  PermanentKubernetesError,
  TransientKubernetesError,
  httpStatus,
  isPermanentCode,
  parseStatus,
} from '../k8s/errors.js';
import { NODE_RELEASE_ANNOTATION } from '../api/plan.js';
import { NamespaceApi } from '../k8s/namespaces.js';
import { WatchCache, type NodeWatch } from '../k8s/watch-cache.js';
import {
  answerFingerprint,
  buildNodePods,
  observationFingerprint,
  observationPart,
  withRequestedPdbs,
  type ObservationContent,
} from './node-pods.js';
import { activityWaits } from './context.js';
import { createPdbDiagnoser } from './pdb-diagnose.js';
import type { DrainActivities, ObserveNodeInput } from './types.js';
import type { NodeObservation } from '../contract/observation.js';

/** Default coalescing window, ms ({@link ObserveNodeInput.coalesceMs}). */
export const DEFAULT_COALESCE_MS = 500;
/** Default quiet time that ends a coalescing window early, ms ({@link ObserveNodeInput.quietMs}). */
export const DEFAULT_QUIET_MS = 100;

/** How often the watching activities heartbeat, ms (their heartbeat timeout should be >= 3x this). */
export const HEARTBEAT_INTERVAL_MS = 2000;

/**
 * Default delay of an observation's first heartbeat, ms: most observations of a busy drain answer
 * within it and so send no heartbeat call to the Temporal server (see `startHeartbeats` in
 * ./context.ts). Capped at half the activity's heartbeat timeout (the node workflow sets 20 s).
 */
export const DEFAULT_FIRST_HEARTBEAT_MS = 5000;

/**
 * Longest wait, ms, for a cold cache's first list before the activity gives up with a retryable
 * error, when `maxWaitSeconds` is shorter.
 */
export const SYNC_TIMEOUT_MS = 15_000;

/** Dependencies of {@link createObserveNode}. */
export interface ObserveNodeDeps {
  /** Where and as whom to reach the Kubernetes API (used only when `cache` is absent). */
  kubeConfig: KubeConfig;
  /** Structured logger; a pino logger named `drainflow.observe` at level `info` when absent. */
  logger?: Logger;
  /** The worker-wide cache to read; a new one (sharing nothing) when absent. */
  cache?: WatchCache;
  /** How often to heartbeat, ms. Default {@link HEARTBEAT_INTERVAL_MS}. */
  heartbeatIntervalMs?: number;
  /** Delay of the first heartbeat, ms. Default {@link DEFAULT_FIRST_HEARTBEAT_MS}. */
  firstHeartbeatMs?: number;
}

/** The activity function, with the cache it reads (to close it on shutdown, or to inspect in tests). */
export type ObserveNode = DrainActivities['observeNode'] & { readonly cache: WatchCache };

/**
 * Whether an informer error is one waiting does not fix: a 4xx other than 408/429 (e.g. 403 when
 * the worker lacks list/watch RBAC, 404 for an unserved API group), as src/k8s/errors.ts classifies.
 */
export function isPermanentError(err: unknown): boolean {
  const code = httpStatus(err);
  return code !== undefined && isPermanentCode(code);
}

/** An informer error for a message: `HTTP <code>: <message>`, capped. */
function describe(err: unknown): string {
  const code = httpStatus(err);
  const msg = (err instanceof Error ? err.message : String(err)).slice(0, 300);
  return code === undefined ? msg : `HTTP ${code}: ${msg}`;
}

/**
 * Throws when `watch` has not synced (after waiting for it): a {@link PermanentKubernetesError}
 * when an informer's list was refused with a 4xx other than 408/429 (e.g. 403: missing RBAC), a
 * retryable {@link TransientKubernetesError} otherwise. Nothing when it has synced.
 *
 * @param what the activity and node, for the message (`observeNode n1`).
 * @param startedAt when the wait for the sync began, ms since epoch (the message says how long).
 */
export function throwIfNotSynced(watch: NodeWatch, what: string, startedAt: number): void {
  if (watch.isSynced()) return;
  const err = watch.lastError();
  const text = err === undefined ? '' : `: ${describe(err)}`;
  const code = httpStatus(err);
  if (code !== undefined && isPermanentCode(code)) {
    throw new PermanentKubernetesError(
      `${what}: the API server refused to list${text}`,
      code,
      parseStatus((err as { body?: unknown }).body)?.reason ?? `HTTP${code}`,
    );
  }
  throw new TransientKubernetesError(
    `${what}: cache not synced after ${Date.now() - startedAt} ms${text}`,
    code,
  );
}

/**
 * The material content of node `node` as the cache sees it now: node existence, `metadata.uid` and
 * `spec.unschedulable`; its pods classified and matched with PDBs ({@link buildNodePods}), plus the
 * `requested` PDBs ({@link withRequestedPdbs}). A node that
 * does not exist has no pods and no PDBs (pods still bound to a deleted node are left to the pod
 * garbage collector); nor has a Node of another uid than `claimedUid` (deleted and created again
 * under the name: its pods are not the drain's, and the history need not carry them).
 */
export function snapshot(
  node: V1Node | undefined,
  pods: Parameters<typeof buildNodePods>[0],
  pdbsIn: Parameters<typeof buildNodePods>[1],
  selection: ObserveNodeInput['selection'],
  requested: ObserveNodeInput['pdbs'],
  order: Parameters<typeof buildNodePods>[3] = {},
  claimedUid?: string,
): ObservationContent {
  if (node === undefined) return { node: { exists: false, unschedulable: false }, pods: [], pdbs: [] };
  const uid = node.metadata?.uid;
  const self = {
    exists: true,
    unschedulable: node.spec?.unschedulable === true,
    ...(node.metadata?.annotations?.[NODE_RELEASE_ANNOTATION] === 'true' ? { released: true } : {}),
    ...(uid ? { uid } : {}),
  };
  if (claimedUid !== undefined && uid !== claimedUid) return { node: self, pods: [], pdbs: [] };
  const { pods: items, pdbs } = buildNodePods(pods, pdbsIn, selection, order);
  return { node: self, pods: items, pdbs: withRequestedPdbs(pdbs, requested, pdbsIn) };
}

/**
 * Builds the `observeNode` activity around a {@link WatchCache}.
 *
 * The returned function, for `input` ({@link ObserveNodeInput}; `maxWaitSeconds` in seconds,
 * `coalesceMs` and `quietMs` in ms):
 *
 * 1. subscribes to the node in the cache and waits until its informers have synced (at most
 *    `max(maxWaitSeconds, 15 s)`);
 * 2. answers at once with the content when `since` is absent or differs from the current
 *    fingerprint (changes that happened between two calls are already a batch), the PDBs'
 *    diagnoses included (src/activities/node-pods.ts answerFingerprint);
 * 3. otherwise waits for a change relevant to the node; when the fingerprint then differs it keeps
 *    collecting changes until none came for `quietMs` or `coalesceMs` passed since that first one
 *    (so the window may end up to `coalesceMs` after `maxWaitSeconds`), and answers with the
 *    content at the end of the window; a change that leaves the fingerprint as it was (an
 *    annotation, a status heartbeat) does not wake the caller;
 * 4. after `maxWaitSeconds` without a material change answers `{ changed: false, fingerprint: since }`,
 *    unless a diagnosis changed: a blocked PDB is diagnosed again, without a change of the pods or
 *    PDBs, when the diagnoser says one is due (a block that lasted LASTING_BLOCK_MS is read from
 *    its pods, a read is renewed after DIAGNOSIS_TTL_MS: src/activities/pdb-diagnose.ts) and at the
 *    end; a diagnosis that reads otherwise is answered then. Without this a block nothing moves
 *    (a replacement that cannot schedule, pods not Ready elsewhere) would never show its kind.
 *
 * The content is what the cache saw last: while an informer restarts after an error it may lag,
 * never lose changes. Heartbeats after `firstHeartbeatMs`, then every `heartbeatIntervalMs`;
 * outside a Temporal activity it works the same, minus heartbeats and cancellation.
 *
 * @returns the activity function; its `cache` property is the cache it reads.
 * @throws (from the activity) `CancelledFailure` (the activity's cancellation reason) when cancelled;
 *   a non-retryable `ApplicationFailure` of type `InvalidInput` for a bad input, or of type
 *   `KubernetesApiError` when a first list is refused with a 4xx (e.g. 403: missing RBAC); a
 *   retryable `ApplicationFailure` of type `TransientKubernetesError` when the cache cannot sync in
 *   time.
 */
export function createObserveNode(deps: ObserveNodeDeps): ObserveNode {
  const log = deps.logger ?? pino({ name: 'drainflow.observe', level: 'info' });
  const cache = deps.cache ?? new WatchCache({ kubeConfig: deps.kubeConfig, logger: log });
  const heartbeats = {
    intervalMs: deps.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS,
    firstAfterMs: deps.firstHeartbeatMs ?? DEFAULT_FIRST_HEARTBEAT_MS,
  };
  const namespaces = new NamespaceApi(deps.kubeConfig);
  const diagnose = createPdbDiagnoser(deps.kubeConfig, log);

  /**
   * The labels of every namespace, listed once per call when a spec.podOrder entry has a
   * namespaceSelector (a label changed during the call is seen by the next one).
   * @throws a non-retryable `KubernetesApiError` when the list is refused with a 4xx (403: the
   *   worker's ClusterRole lacks `namespaces: [list]`), a retryable one otherwise.
   */
  async function namespaceLabels(node: string): Promise<Map<string, Record<string, string>>> {
    try {
      return await namespaces.labels();
    } catch (err) {
      const text = `observeNode ${node}: listing namespaces for spec.podOrder[].namespaceSelector failed: ${describe(err)}`;
      const code = httpStatus(err);
      if (code !== undefined && isPermanentCode(code))
        throw new PermanentKubernetesError(
          `${text} (grant the worker's ClusterRole namespaces: [list])`,
          code,
          parseStatus((err as { body?: unknown }).body)?.reason ?? `HTTP${code}`,
        );
      throw new TransientKubernetesError(text);
    }
  }

  async function observeNode(input: ObserveNodeInput): Promise<NodeObservation> {
    const { node, selection, since } = input;
    const coalesceMs = input.coalesceMs ?? DEFAULT_COALESCE_MS;
    if (
      typeof node !== 'string' ||
      node === '' ||
      !Number.isFinite(input.maxWaitSeconds) ||
      input.maxWaitSeconds < 0 ||
      !Number.isFinite(coalesceMs) ||
      coalesceMs < 0
    ) {
      throw ApplicationFailure.nonRetryable(
        `observeNode: need a node name, maxWaitSeconds >= 0 and coalesceMs >= 0, got ${JSON.stringify({
          node,
          maxWaitSeconds: input.maxWaitSeconds,
          coalesceMs: input.coalesceMs,
        })}`,
        'InvalidInput',
      );
    }
    const startedAt = Date.now();
    const deadline = startedAt + input.maxWaitSeconds * 1000;

    const watch = cache.acquire(node); // throws only when the cache is closed (worker shutdown)
    const waits = activityWaits(`observeNode ${node}`, heartbeats);
    const read = (): { content: ObservationContent; fingerprint: string } => {
      const content = snapshot(
        watch.getNode(),
        watch.listPods(),
        (ns) => watch.listPdbs(ns),
        selection,
        input.pdbs,
        {
          ...(input.podOrder ? { podOrder: input.podOrder } : {}),
          namespaceLabels: (ns) => nsLabels?.get(ns),
        },
        input.nodeUid,
      );
      return {
        content,
        fingerprint: observationFingerprint(
          content,
          input.pdbVersions ?? false,
          input.listedPdbsOnly === true,
        ),
      };
    };
    // An answer says why each PDB blocks (src/activities/pdb-diagnose.ts: bounded reads), so a
    // Never block shows with the first observation that sees it. The diagnoses are part of the
    // answer's fingerprint (answerFingerprint): a lasting block read from its pods is an answer
    // even when the pods and PDBs did not change.
    const answer = async (s: {
      content: ObservationContent;
      fingerprint: string;
    }): Promise<NodeObservation> => {
      const { pods, pdbs } = s.content;
      await diagnose({
        node: watch.getNode(),
        nodeName: node,
        pods,
        pdbs,
        pdbsIn: (ns) => watch.listPdbs(ns),
      });
      return { changed: true, ...s.content, fingerprint: answerFingerprint(s.fingerprint, pdbs) };
    };
    /** The observation now, diagnosed: `changed: false` when it is still what the caller holds. */
    const diagnosedAgain = async (): Promise<NodeObservation> => {
      const obs = await answer(read());
      return obs.fingerprint === since ? { changed: false, fingerprint: since } : obs;
    };

    // With listedPdbsOnly the status of a PDB not listed is not in the fingerprint (its selector
    // is: which pods it covers), so its status writes need not wake this call to read again.
    const listed =
      input.listedPdbsOnly === true && Array.isArray(input.pdbVersions) ? input.pdbVersions : undefined;
    const ignorePdbStatus = listed ? (key: string): boolean => !listed.includes(key) : undefined;

    let nsLabels: Map<string, Record<string, string>> | undefined;
    try {
      waits.throwIfCancelled();
      if (needsNamespaceLabels(input.podOrder)) nsLabels = await namespaceLabels(node);
      // 1. Sync, failing fast on an error that waiting does not fix.
      if (!watch.isSynced()) {
        await waits.until(startedAt + Math.max(input.maxWaitSeconds * 1000, SYNC_TIMEOUT_MS), (signal) =>
          watch.waitSynced(signal, isPermanentError),
        );
        throwIfNotSynced(watch, `observeNode ${node}`, startedAt);
      }

      // 2. Answer at once when the caller holds nothing or something else (pods and PDBs, or
      // their diagnoses: a block may have turned lasting since the caller's answer).
      let seen = watch.changes;
      let current = read();
      if (since === undefined) return await answer(current);
      const held = observationPart(since);
      if (current.fingerprint !== held) return await answer(current);
      const first = await diagnosedAgain();
      if (first.changed) return first;

      // 3./4. Wait for a material change, then coalesce; without one, look at the diagnoses again
      // when one is due (a block turning lasting, a read growing old) and at the end.
      for (;;) {
        const due = diagnose.nextDueMs(current.content.pdbs, Date.now());
        const woke = await waits.until(due !== undefined ? Math.min(deadline, due) : deadline, (signal) =>
          watch.waitForChange(seen, signal, ignorePdbStatus),
        );
        if (!woke) {
          const again = await diagnosedAgain();
          if (again.changed || Date.now() >= deadline) return again;
          continue;
        }
        seen = watch.changes;
        current = read();
        if (current.fingerprint === held) continue; // an immaterial change
        if (coalesceMs > 0) {
          // Collect the burst: answer once nothing changed for quietMs, at the latest coalesceMs
          // after the first change (a lone PDB status write is answered after quietMs).
          // Only material changes (a new fingerprint) restart the quiet time: pod status writes
          // and heartbeats on a busy node would otherwise keep the window open to its end.
          const quietMs = Math.min(input.quietMs ?? DEFAULT_QUIET_MS, coalesceMs);
          const windowEnd = Date.now() + coalesceMs;
          let quietEnd = Date.now() + quietMs;
          let last = current.fingerprint;
          for (;;) {
            const more = await waits.until(Math.min(windowEnd, quietEnd), (signal) =>
              watch.waitForChange(seen, signal, ignorePdbStatus),
            );
            if (!more) break;
            seen = watch.changes;
            const fingerprint = read().fingerprint;
            if (fingerprint !== last) {
              last = fingerprint;
              quietEnd = Date.now() + quietMs;
            }
            if (Date.now() >= Math.min(windowEnd, quietEnd)) break;
          }
          seen = watch.changes;
          current = read();
          if (current.fingerprint === held) continue; // changed back within the window
        }
        log.debug({ node, since, fingerprint: current.fingerprint }, 'observeNode: change observed');
        return await answer(current);
      }
    } finally {
      waits.close();
      watch.release();
    }
  }

  return Object.assign(observeNode, { cache });
}
