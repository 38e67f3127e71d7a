/**
 * The drainflow worker: polls the task queue and runs the drain workflows and the Kubernetes
 * activities, and polls the eviction task queue (`<taskQueue>-evictions`) for the `evictPod`
 * activities. Scale out by running more workers on the same task queue.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { Worker, type NativeConnection, type State } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from '../activities/index.js';
import type { DrainActivities } from '../activities/types.js';
import { WatchCache } from '../k8s/watch-cache.js';
import { evictionTaskQueue } from '../contract/names.js';
import type { DrainflowMetrics } from '../shared/http.js';
import { workflowBundlePath } from './bundle.js';

/**
 * Path of the workflow entry module bundled by the worker: the TypeScript source when running from a
 * checkout (tsx), the compiled `index.js` when running from `dist/` (the container image), where
 * no `.ts` file exists.
 */
const WORKFLOWS_TS = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
export const WORKFLOWS_PATH = existsSync(WORKFLOWS_TS)
  ? WORKFLOWS_TS
  : fileURLToPath(new URL('../workflows/index.js', import.meta.url));

/**
 * A workflow bundle prebuilt at image build time (`dist/workflow-bundle.js`, see Dockerfile). When
 * present the worker uses it instead of bundling at start (saves seconds and ~100 MB of peak RSS).
 */
const PREBUILT_BUNDLE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

/**
 * Wraps the activities so the worker's metrics count eviction outcomes and 429s. Behaviour is
 * unchanged: results and errors pass through.
 */
export function instrumentActivities<T extends DrainActivities>(acts: T, metrics: DrainflowMetrics): T {
  const evictPod = acts.evictPod;
  return {
    ...acts,
    evictPod: async (input) => {
      try {
        const res = await evictPod(input);
        metrics.evictions.inc({ outcome: res.outcome });
        if (res.outcome === 'TooManyRequests') metrics.tooManyRequests.inc({ cause: res.cause });
        return res;
      } catch (err) {
        metrics.evictions.inc({ outcome: 'Error' });
        throw err;
      }
    },
  };
}

/** Options of {@link createWorker}. */
export interface WorkerDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics: DrainflowMetrics;
  identity: string;
  /**
   * Cluster-wide cap on Eviction API calls per second, across all plans and workers: set as the
   * eviction task queue's `maxTaskQueueActivitiesPerSecond`, which the Temporal server enforces per
   * task queue for every worker polling it (the last worker to poll sets it, so give every worker
   * the same value). Undefined: no limit.
   */
  maxEvictionsPerSecond?: number;
}

/**
 * The two workers of one drainflow worker process, run and stopped together: `main` polls the
 * task queue (workflows and every activity), `evictions` polls {@link evictionTaskQueue} (only
 * `evictPod`, rate-limited by the server when `maxEvictionsPerSecond` is set).
 */
export interface DrainflowWorker {
  readonly main: Worker;
  readonly evictions: Worker;
  /**
   * Runs both workers. Resolves once both stopped; when one stops or fails the other is shut down
   * too. @throws the first worker's fatal error.
   */
  run(): Promise<void>;
  /** Graceful shutdown of both: they stop polling and let running tasks finish. Idempotent. */
  shutdown(): void;
  /** `RUNNING` while both run; otherwise `FAILED` if one failed, else the main worker's state. */
  getState(): State;
}

/**
 * Workflows kept in the worker's cache (sticky execution). The SDK's default grows with the V8 heap
 * limit (about 600 per GiB above 200 MiB) and falls to 10 under a small `--max-old-space-size`, where
 * every plan with more than a few nodes running at once would be replayed over and over. A plan
 * keeps at most maxUnavailableNodes + 1 workflows busy; 200 covers several large plans at once, and
 * an idle cached workflow costs little memory with the SDK's shared V8 context.
 */
export const MAX_CACHED_WORKFLOWS = 200;

/**
 * Creates (does not run) the worker: takes the workflow bundle (prebuilt, cached, or built once in
 * a child process, see ./bundle.ts) and registers the activities on the task queue, plus a second,
 * workflow-less worker on the eviction task queue (`<taskQueue>-evictions`) that registers only
 * `evictPod`, with the server-side rate limit `maxEvictionsPerSecond`. Run both with
 * `worker.run()`; `worker.shutdown()` stops polling and lets running activities finish (graceful
 * shutdown, as on SIGTERM).
 *
 * The worker owns the watch cache of the `observeNode` and `waitClaimReleased` activities
 * (src/k8s/watch-cache.ts): it is closed when `worker.run()` ends, so its open watches do not keep
 * the process alive.
 */
export async function createWorker(deps: WorkerDeps): Promise<DrainflowWorker> {
  const watchCache = new WatchCache({
    kubeConfig: deps.kubeConfig,
    logger: deps.logger.child({ part: 'watch-cache' }),
  });
  const activities = instrumentActivities(
    createActivities({
      kubeConfig: deps.kubeConfig,
      logger: deps.logger.child({ part: 'activities' }),
      watchCache,
    }),
    deps.metrics,
  );
  const main = await Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    workflowBundle: {
      codePath:
        existsSync(PREBUILT_BUNDLE) && !existsSync(WORKFLOWS_TS)
          ? PREBUILT_BUNDLE
          : workflowBundlePath(WORKFLOWS_PATH),
    },
    // All of them (evictPod too, though node runs schedule it on the eviction queue below).
    activities,
    identity: deps.identity,
    maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
    shutdownGraceTime: '20s',
  });
  const evictions = await Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: evictionTaskQueue(deps.taskQueue),
    activities: { evictPod: activities.evictPod },
    identity: deps.identity,
    shutdownGraceTime: '20s',
    ...(deps.maxEvictionsPerSecond !== undefined
      ? { maxTaskQueueActivitiesPerSecond: deps.maxEvictionsPerSecond }
      : {}),
  });
  const workers = [main, evictions];
  const shutdown = () => {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
  };
  return {
    main,
    evictions,
    run: async () => {
      try {
        // Whichever stops first (shutdown, fatal error) takes the other down with it.
        const results = await Promise.allSettled(workers.map((w) => w.run().finally(shutdown)));
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
      } finally {
        await watchCache.close();
      }
    },
    shutdown,
    getState: () => {
      if (workers.every((w) => w.getState() === 'RUNNING')) return 'RUNNING';
      if (workers.some((w) => w.getState() === 'FAILED')) return 'FAILED';
      return main.getState();
    },
  };
}
