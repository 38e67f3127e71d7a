/**
 * `drainflow run`: operator and worker in one process (default), or one of them
 * (`--operator`, `--worker`). Shuts down cleanly on SIGTERM/SIGINT: the operator stops watching
 * and gives up its Lease; the worker stops polling and lets running activities finish.
 */
import { Client } from '@temporalio/client';
import {
  checkTemporalFiles,
  temporalConnection,
  temporalNativeConnection,
} from '../shared/temporal-connection.js';
import { kubeConfigFor, loadConfig, type RunFlags } from '../shared/settings.js';
import { DrainflowMetrics, serveHttp } from '../shared/http.js';
import { createLogger, installTemporalRuntime } from '../shared/logger.js';
import { createWorker } from '../worker/worker.js';
import { startOperator } from '../operator/index.js';
import { evictionTaskQueue } from '../contract/names.js';

/** Options of `drainflow run`. */
export interface RunOptions extends RunFlags {
  operator?: boolean;
  worker?: boolean;
}

/**
 * Runs until SIGTERM/SIGINT. Every setting is checked before anything starts: the flags and
 * variables, the TLS files, the kubeconfig.
 * @throws Error for invalid configuration (message names the setting).
 */
export async function run(opts: RunOptions): Promise<void> {
  const cfg = loadConfig(opts);
  checkTemporalFiles(cfg);
  const both = !opts.operator && !opts.worker;
  const runOperator = both || Boolean(opts.operator);
  const runWorker = both || Boolean(opts.worker);
  const logger = createLogger(
    cfg.logLevel,
    runOperator && runWorker ? 'drainflow' : runOperator ? 'operator' : 'worker',
  );
  const kubeConfig = kubeConfigFor(cfg);
  const host = cfg.mode === 'in-cluster' ? '0.0.0.0' : '127.0.0.1';
  const stops: (() => Promise<void>)[] = [];
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (err) {
        logger.error({ err }, 'error during shutdown');
      }
    }
  };
  if (runWorker) {
    // The operator's client (grpc-js) does not use the SDK's native Runtime; only the worker does.
    // Last to stop: the Runtime forwards the core's logs until it is shut down.
    stops.push(installTemporalRuntime(logger));
  }

  const done: Promise<unknown>[] = [];
  if (runWorker) {
    const metrics = new DrainflowMetrics();
    const connection = await temporalNativeConnection(cfg);
    const worker = await createWorker({
      connection,
      namespace: cfg.temporalNamespace,
      taskQueue: cfg.taskQueue,
      kubeConfig,
      logger,
      metrics,
      identity: `${cfg.identity}-worker`,
      maxEvictionsPerSecond: cfg.maxEvictionsPerSecond,
    });
    const server = await serveHttp(cfg.workerPort, host, metrics, () => worker.getState() === 'RUNNING');
    stops.push(async () => {
      server.close();
      await connection.close();
    });
    stops.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const running = worker.run();
    done.push(running);
    logger.info(
      {
        taskQueue: cfg.taskQueue,
        evictionTaskQueue: evictionTaskQueue(cfg.taskQueue),
        maxEvictionsPerSecond: cfg.maxEvictionsPerSecond ?? null,
        namespace: cfg.temporalNamespace,
        port: cfg.workerPort,
      },
      'worker running',
    );
  }
  if (runOperator) {
    const metrics = new DrainflowMetrics();
    const connection = await temporalConnection(cfg);
    const client = new Client({ connection, namespace: cfg.temporalNamespace });
    const operator = await startOperator({
      kubeConfig,
      client,
      config: cfg,
      logger: logger.child({ part: 'operator' }),
      metrics,
    });
    const server = await serveHttp(cfg.operatorPort, host, metrics, () => operator.ready());
    stops.push(async () => {
      server.close();
      await connection.close();
    });
    stops.push(() => operator.stop());
    done.push(operator.done);
    logger.info({ port: cfg.operatorPort }, 'operator running');
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  try {
    await Promise.race(done);
  } finally {
    await shutdown('exit');
  }
}
