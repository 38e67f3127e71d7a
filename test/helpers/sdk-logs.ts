/**
 * The Temporal SDK's log lines in tests go through drainflow's own logger (pino, JSON), as in
 * `drainflow run` (src/shared/logger.ts): the TypeScript side's lines and the Rust core's,
 * forwarded. Tests print only warnings and errors (`DRAINFLOW_TEST_LOG_LEVEL`, default `warn`),
 * so a worker's INFO lines do not drown the test output while a real warning or error still shows.
 *
 * Lines the tests cause on purpose or that the time-skipping test server causes, which say
 * nothing about drainflow, are logged at debug instead ({@link testLineLevel}); so is the eviction
 * worker's "No workflows registered" (by design, see `sdkLineLevel` in src/shared/logger.ts).
 * Every other SDK warning and error still shows, as one JSON line.
 */
import { Runtime } from '@temporalio/worker';
import type { LogLevel, LogMetadata, Logger as SdkLogger } from '@temporalio/common';
import { coreLogFilter, createLogger, sdkLogger, sdkLoggerOf } from '../../src/shared/logger.js';

/**
 * SDK warnings caused by the test server, not by the code under test: the time-skipping server
 * (temporal-test-server) does not advertise the `activity_failure_include_heartbeat` capability,
 * so the core warns once per worker that heartbeat details may be lost when an activity fails.
 */
export const TEST_SERVER_ARTIFACTS: readonly RegExp[] = [
  /^Temporal Server [\d.]+ or newer is required to guarantee that the latest heartbeat details are preserved/,
];

/** Messages of the failures test/helpers/sim-cluster.ts injects into activities (`fail(...)`). */
const INJECTED_FAILURE = /^injected (non-retryable )?failure of /;

/**
 * The level an SDK line is logged at in tests: debug for a warning that is a
 * {@link TEST_SERVER_ARTIFACTS} line or the SDK's "Activity failed" for a failure the sim cluster
 * injected on purpose; else the line's own level.
 */
export function testLineLevel(level: LogLevel, message: string, meta?: LogMetadata): LogLevel {
  if (level !== 'WARN') return level;
  if (TEST_SERVER_ARTIFACTS.some((r) => r.test(message))) return 'DEBUG';
  const err = meta?.error;
  if (message === 'Activity failed' && err instanceof Error && INJECTED_FAILURE.test(err.message))
    return 'DEBUG';
  return level;
}

/** An SDK logger over `base` that logs {@link TEST_SERVER_ARTIFACTS} lines at debug. */
export function testSdkLogger(base: SdkLogger): SdkLogger {
  return sdkLoggerOf((level, message, meta) => base.log(testLineLevel(level, message, meta), message, meta));
}

let installed: Runtime | undefined;

/**
 * Installs the Temporal Runtime of this test process with drainflow's logger (once; later calls do
 * nothing). Call before the first worker, connection or test environment of the process. The SDK
 * re-creates the Runtime with the same options when it shut down after its last worker closed.
 * @throws Error from the SDK when something already instantiated the Runtime (a worker or
 *   connection created before this call): the fix is to call this first.
 */
export function installTestRuntime(): void {
  if (installed) return;
  const logger = createLogger(process.env.DRAINFLOW_TEST_LOG_LEVEL ?? 'warn', 'test');
  installed = Runtime.install({
    logger: testSdkLogger(sdkLogger(logger.child({ part: 'temporal-sdk' }))),
    telemetryOptions: { logging: { filter: coreLogFilter(logger.level), forward: {} } },
  });
}

/**
 * Shuts down the Runtime {@link installTestRuntime} installed, for a setup that failed before its
 * first connection: the log forwarding would keep the test process alive, turning the failure into
 * a hang. Call it only then (it shuts the Runtime down whatever still uses it); once a connection
 * or worker ran, the SDK shuts the Runtime down itself when the last one closes.
 */
export async function releaseUnusedTestRuntime(): Promise<void> {
  await installed?.shutdown();
}
