/**
 * JSON logs (pino) for every drainflow process; children carry plan and workflow IDs. The
 * Temporal SDK's own lines — its TypeScript side (worker, workflow and activity loggers) and its
 * Rust core, forwarded — go through the same logger ({@link installTemporalRuntime}), so stdout
 * carries one JSON object per line and nothing else.
 */
import { pino, type Logger } from 'pino';
import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import type { LogLevel as SdkLogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/common';
import { evictionTaskQueue, parseWorkflowId } from '../contract/names.js';

/** Creates the process logger writing JSON lines to stdout. */
export function createLogger(level: string, component: string): Logger {
  return pino({ level, base: { component } });
}

/**
 * The SDK's log metadata as pino fields: symbol keys (the SDK's timestamp) dropped, `error`
 * as pino's `err` (serialized with its stack), the core's snake_case IDs
 * (`workflow_id`, `run_id`, `task_queue`) under the SDK's camelCase names, and `plan`/`node`
 * added where the workflow ID is a drainflow one.
 */
export function sdkLogFields(meta: LogMetadata | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const renames: Record<string, string> = {
    workflow_id: 'workflowId',
    run_id: 'runId',
    task_queue: 'taskQueue',
    activity_id: 'activityId',
    error: 'err',
  };
  for (const [k, v] of Object.entries(meta ?? {})) {
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    out[renames[k] ?? k] = v;
  }
  const ids = typeof out.workflowId === 'string' ? parseWorkflowId(out.workflowId) : undefined;
  if (ids) Object.assign(out, { plan: ids.plan.name }, ids.node ? { node: ids.node } : {});
  return out;
}

const SDK_TO_PINO: Record<SdkLogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The SDK's WARN of a worker that registers no workflows. drainflow's eviction worker
 * (`<task queue>-evictions`, {@link evictionTaskQueue}) registers only the evictPod activity by
 * design (the server rate-limits that queue), so for it the line is expected and logged at debug;
 * on any other task queue it stays a warning (a worker without workflows there would be a bug).
 */
export const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';

/** The pino level of one SDK line: its own, except {@link NO_WORKFLOWS_WARNING} of the eviction worker. */
export function sdkLineLevel(
  level: SdkLogLevel,
  message: string,
  meta?: LogMetadata,
): 'trace' | 'debug' | 'info' | 'warn' | 'error' {
  const tq = typeof meta?.taskQueue === 'string' ? meta.taskQueue : '';
  if (level === 'WARN' && message === NO_WORKFLOWS_WARNING && tq.endsWith(evictionTaskQueue('')))
    return 'debug';
  return SDK_TO_PINO[level] ?? 'info';
}

/** The Temporal SDK's {@link SdkLogger} interface over a pino logger. */
export function sdkLogger(logger: Logger): SdkLogger {
  return sdkLoggerOf((level, message, meta) =>
    logger[sdkLineLevel(level, message, meta)](sdkLogFields(meta), message),
  );
}

/**
 * A whole {@link SdkLogger} from its one `log(level, message, meta)` function: the per-level
 * methods (trace … error) call it with their level.
 */
export function sdkLoggerOf(
  log: (level: SdkLogLevel, message: string, meta?: LogMetadata) => void,
): SdkLogger {
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

/**
 * The SDK core's level filter for a pino level: the core at that level (TRACE … ERROR; `fatal`
 * and `silent` keep ERROR, which pino then drops or keeps), its third-party crates at WARN or
 * above.
 */
export function coreLogFilter(level: string): string {
  const core: SdkLogLevel =
    level === 'trace'
      ? 'TRACE'
      : level === 'debug'
        ? 'DEBUG'
        : level === 'info'
          ? 'INFO'
          : level === 'warn'
            ? 'WARN'
            : 'ERROR';
  return makeTelemetryFilterString({ core, other: core === 'TRACE' || core === 'DEBUG' ? 'WARN' : 'ERROR' });
}

/**
 * Installs the Temporal Runtime once per process with `logger` as its logger: the TypeScript
 * side's lines and the core's, forwarded (`telemetryOptions.logging.forward`), reach pino with
 * the SDK's metadata (sdkComponent, workflowId, runId, taskQueue, …) plus the plan they belong
 * to. No shutdown signals: `drainflow run` handles SIGTERM/SIGINT itself.
 *
 * The forwarding keeps the process alive until the Runtime shuts down. The SDK shuts it down when
 * its last worker and native connection close; a process that made none must call the returned
 * function (idempotent; it also flushes the buffered log lines).
 * @returns a function that shuts the Runtime down.
 * @throws Error from the SDK when a Runtime was already installed in this process.
 */
export function installTemporalRuntime(logger: Logger): () => Promise<void> {
  const runtime = Runtime.install({
    logger: sdkLogger(logger.child({ part: 'temporal-sdk' })),
    telemetryOptions: { logging: { filter: coreLogFilter(logger.level), forward: {} } },
    shutdownSignals: [],
  });
  return () => runtime.shutdown();
}
