/**
 * The drain activities: every Kubernetes call the workflows make, implementing the
 * {@link DrainActivities} contract of `./types.ts`. Each activity does one thing, is safe to retry,
 * and classifies errors at this edge. They are composed here from small files over one port of
 * Kubernetes calls ({@link KubernetesPort}, src/k8s/port.ts):
 *
 * | file              | activities                                                         |
 * | ----------------- | ------------------------------------------------------------------ |
 * | `nodes.ts`        | resolveNodes, cordonNode, releaseNode (the node claim)             |
 * | `eviction.ts`     | evictPod, with the rule for every Eviction API answer              |
 * | `plan-status.ts`  | writePlanStatus, publishStatus, recordEvent                        |
 * | `observe.ts`      | observeNode (from the worker's watch cache)                        |
 * | `claim-wait.ts`   | waitClaimReleased (from the same watch cache)                      |
 * | `preflight.ts`    | preflightNode (spec.mode Preflight; dry-run evictions only)        |
 * | `jobs.ts`         | createHookJob, waitHookJob (Job hooks, spec.hooks)                 |
 * | `hook-workflow.ts`| hookWorkflowTaskStarted (why a workflow hook timed out)            |
 * | `grant-delivery.ts`| deliverGrants (the plan's PDB grants, as client signals)          |
 * | `remedy.ts`       | restartDeployment (spec.remedies: a rollout restart, once)          |
 *
 * Errors of the other calls (src/k8s/errors.ts): network error, timeout, 408, 429 and 5xx throw
 * {@link TransientKubernetesError} (retryable); other 4xx throw a non-retryable
 * `PermanentKubernetesError` (Temporal failure type {@link KUBERNETES_API_ERROR_TYPE}); 404 on a
 * read and 409 on a guarded write are answers, handled where they occur.
 *
 * Outside a Temporal activity context (CLI preflight, the operator, tests) the activities work the
 * same, minus heartbeats and cancellation.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { createKubernetesPort, type KubernetesPort } from '../k8s/port.js';
import type { WatchCache } from '../k8s/watch-cache.js';
import { deletePodActivity } from './delete-pod.js';
import { createWaitClaimReleased } from './claim-wait.js';
import { createEvictionActivities } from './eviction.js';
import { createGrantDeliveryActivities, type GrantDeliveryActivities } from './grant-delivery.js';
import { createHookWorkflowActivities, type HookWorkflowActivities } from './hook-workflow.js';
import { createJobActivities, type JobActivities } from './jobs.js';
import { createClaimCycleActivities, type ClaimCycleActivities } from './claim-cycle.js';
import { createNodeActivities } from './nodes.js';
import { HEARTBEAT_INTERVAL_MS, createObserveNode } from './observe.js';
import { createPlanStatusActivities } from './plan-status.js';
import { createPreflightActivities } from './preflight.js';
import { createRemedyActivities, type RemedyActivities } from './remedy.js';
import type { DrainActivities, PreflightActivities } from './types.js';

/** Dependencies of {@link createActivities}. */
export interface ActivityDeps {
  /** Where and as whom to reach the Kubernetes API (the worker loads it from $KUBECONFIG or in-cluster). */
  kubeConfig: KubeConfig;
  /** Structured logger; a pino logger named `drainflow.activities` at level `info` when absent. */
  logger?: Logger;
  /**
   * The watch cache `observeNode` and `waitClaimReleased` read; the owner closes it (the worker does
   * when it stops). Absent: a cache of this object's own, started on the first call and never closed.
   */
  watchCache?: WatchCache;
  /**
   * The Kubernetes calls of every activity but `observeNode` and `waitClaimReleased`; {@link createKubernetesPort} over
   * `kubeConfig` when absent (unit tests pass a fake).
   */
  port?: KubernetesPort;
}

/**
 * Builds the drain activities around one KubeConfig (the worker registers the returned object).
 *
 * RBAC the activities need: nodes get/list/watch/patch; pods get/list/watch; pods/eviction create
 * (preflight's dry-run evictions too);
 * poddisruptionbudgets get/list/watch; maintenanceplans get and maintenanceplans/status update;
 * events get/create/patch in `default`; with Job hooks, jobs create/get and pods list in the hooks' namespaces.
 *
 * @param deps the KubeConfig to use, an optional pino logger, watch cache and port.
 * @returns an object implementing {@link DrainActivities}, {@link PreflightActivities},
 * {@link JobActivities}, {@link HookWorkflowActivities}, {@link GrantDeliveryActivities} and {@link RemedyActivities}, one
 * method per activity.
 */
export function createActivities(
  deps: ActivityDeps,
): DrainActivities &
  PreflightActivities &
  JobActivities &
  HookWorkflowActivities &
  GrantDeliveryActivities &
  ClaimCycleActivities &
  RemedyActivities {
  const log = deps.logger ?? pino({ name: 'drainflow.activities', level: 'info' });
  const port = deps.port ?? createKubernetesPort(deps.kubeConfig, log);
  const observeNode = createObserveNode({
    kubeConfig: deps.kubeConfig,
    logger: log,
    cache: deps.watchCache,
    heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
  });
  return {
    ...createNodeActivities(port, log),
    ...createEvictionActivities(port, log),
    ...createPlanStatusActivities(port),
    ...createPreflightActivities(port, log),
    /** Job hooks (spec.hooks.*.job): create the node's Job, wait for it (see ./jobs.ts). */
    ...createJobActivities(deps.kubeConfig),
    /** Workflow hooks: whether a worker ever took the hook's child workflow (see ./hook-workflow.ts). */
    ...createHookWorkflowActivities(),
    /** Claim cycles between plans: the waits a plan's own lead to (see ./claim-cycle.ts). */
    ...createClaimCycleActivities(port),
    /** The plan's PDB grants, signalled through the worker's client (see ./grant-delivery.ts). */
    ...createGrantDeliveryActivities(),
    /** spec.remedies.rolloutRestart: a Deployment's rollout restart, once (see ./remedy.ts). */
    ...createRemedyActivities(deps.kubeConfig, log),
    /** onDeadline DeletePods: one DELETE of a pod, no Eviction API (see ./delete-pod.ts). */
    deletePod: deletePodActivity(port, log),
    /** See {@link createObserveNode}: answered from a watch cache shared by this object's calls. */
    observeNode,
    /** See {@link createWaitClaimReleased}: answered from the same watch cache. */
    waitClaimReleased: createWaitClaimReleased({
      cache: observeNode.cache,
      logger: log,
      heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
    }),
  };
}
