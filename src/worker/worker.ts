/**
 * The drainflow worker: polls the task queue and runs the drain workflows and the Kubernetes
 * activities. Scale out by running more workers on the same task queue.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { Worker, type NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from '../activities/index.js';
import type { DrainActivities } from '../activities/types.js';
import { WatchCache } from '../k8s/watch-cache.js';
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
export function instrumentActivities(acts: DrainActivities, metrics: DrainflowMetrics): DrainActivities {
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
 * a child process, see ./bundle.ts) and registers the activities. Run it with `worker.run()`; `worker.shutdown()` stops polling and lets running
 * activities finish (graceful shutdown, as on SIGTERM).
 *
 * The worker owns the watch cache of the `observeNode` activity (src/k8s/watch-cache.ts): it is
 * closed when `worker.run()` ends, so its open watches do not keep the process alive.
 */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
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
  const worker = await Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    workflowBundle: {
      codePath:
        existsSync(PREBUILT_BUNDLE) && !existsSync(WORKFLOWS_TS)
          ? PREBUILT_BUNDLE
          : workflowBundlePath(WORKFLOWS_PATH),
    },
    activities,
    identity: deps.identity,
    maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
    shutdownGraceTime: '20s',
  });
  const run = worker.run.bind(worker);
  worker.run = () => run().finally(() => watchCache.close());
  return worker;
}
