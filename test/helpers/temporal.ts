/**
 * Temporal helpers for tests: the time-skipping environment backed by the installed
 * temporal-test-server (no download), with drainflow's search attributes registered.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import proto from '@temporalio/proto';
import { temporalTestServerPath } from './binaries.js';

const { IndexedValueType } = proto.temporal.api.enums.v1;

/** The search attributes drainflow's workflows upsert (see src/contract/names.ts). */
export const SEARCH_ATTRIBUTES = {
  DrainflowPlan: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  DrainflowNodes: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  DrainflowPhase: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  DrainflowReason: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
};

/** Starts the time-skipping test server and registers the search attributes in `default`. */
export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: temporalTestServerPath() } },
  });
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: SEARCH_ATTRIBUTES,
  });
  return env;
}

/** A logger for `bundleWorkflowCode` in tests: only errors are printed. */
export const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: console.error,
};
