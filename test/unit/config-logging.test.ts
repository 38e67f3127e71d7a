/**
 * The Temporal SDK's log lines through drainflow's pino logger (src/shared/logger.ts): the SDK's
 * metadata becomes pino fields, the plan and node are added where the workflow ID is drainflow's,
 * and `--log-level` sets the core's filter.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import {
  NO_WORKFLOWS_WARNING,
  coreLogFilter,
  sdkLineLevel,
  sdkLogFields,
  sdkLogger,
} from '../../src/shared/logger.js';
import {
  evictionTaskQueue,
  nodeWorkflowId,
  parseWorkflowId,
  planWorkflowId,
} from '../../src/contract/names.js';

const uid = '0f8b4c2e-1d3a-4b5c-9e7f-123456789abc';

describe('parseWorkflowId', () => {
  it('reads the plan and the node from drainflow workflow IDs, names with dashes too', () => {
    const plan = planWorkflowId({ name: 'rack-7-kernel', uid });
    assert.deepEqual(parseWorkflowId(plan), { plan: { name: 'rack-7-kernel', uid } });
    assert.deepEqual(parseWorkflowId(nodeWorkflowId(plan, 'worker-node-1')), {
      plan: { name: 'rack-7-kernel', uid },
      node: 'worker-node-1',
    });
  });
  it('gives nothing for other IDs', () => {
    for (const id of [
      '',
      'maintenanceplan-x',
      'maintenanceplan-p-u1',
      'other-workflow',
      `other-p-${uid}`,
      `maintenanceplan--${uid.slice(1)}`,
    ])
      assert.equal(parseWorkflowId(id), undefined, id);
  });
});

describe('sdkLogFields', () => {
  it("renames the core's snake_case IDs, drops symbols and empty lists, adds the plan", () => {
    const ts = Symbol('timestamp');
    const err = new Error('boom');
    const fields = sdkLogFields({
      [ts]: 123n,
      sdkComponent: 'core',
      workflow_id: nodeWorkflowId(planWorkflowId({ name: 'p1', uid }), 'n1'),
      run_id: 'r1',
      task_queue: 'drainflow',
      spanContexts: [],
      error: err,
    });
    assert.deepEqual(fields, {
      sdkComponent: 'core',
      workflowId: `maintenanceplan-p1-${uid}-node-n1`,
      runId: 'r1',
      taskQueue: 'drainflow',
      err,
      plan: 'p1',
      node: 'n1',
    });
  });
});

describe('sdkLogger', () => {
  it('writes one JSON line per SDK message at its level, with the plan', () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        cb();
      },
    });
    const log = sdkLogger(pino({ level: 'debug' }, out));
    log.warn('Activity failed', { workflowId: planWorkflowId({ name: 'p2', uid }), error: new Error('x') });
    log.trace('dropped below debug');
    log.log('ERROR', 'core said', { sdkComponent: 'core' });
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(parsed.length, 2);
    assert.equal(parsed[0]!.level, 40);
    assert.equal(parsed[0]!.msg, 'Activity failed');
    assert.equal(parsed[0]!.plan, 'p2');
    assert.match(String((parsed[0]!.err as { stack?: string }).stack), /Error: x/);
    assert.equal(parsed[1]!.level, 50);
    assert.equal(parsed[1]!.sdkComponent, 'core');
  });
});

describe('sdkLineLevel', () => {
  it("logs the eviction worker's 'No workflows registered' at debug, elsewhere at warn", () => {
    assert.equal(
      sdkLineLevel('WARN', NO_WORKFLOWS_WARNING, { taskQueue: evictionTaskQueue('drainflow') }),
      'debug',
    );
    assert.equal(sdkLineLevel('WARN', NO_WORKFLOWS_WARNING, { taskQueue: 'drainflow' }), 'warn');
    assert.equal(sdkLineLevel('WARN', NO_WORKFLOWS_WARNING), 'warn');
    assert.equal(
      sdkLineLevel('WARN', 'Activity failed', { taskQueue: evictionTaskQueue('drainflow') }),
      'warn',
    );
    assert.equal(sdkLineLevel('ERROR', 'x'), 'error');
  });
});

describe('coreLogFilter', () => {
  it("follows --log-level, quieter for the core's dependencies", () => {
    assert.match(coreLogFilter('info'), /temporalio_sdk_core=INFO/);
    assert.match(coreLogFilter('debug'), /temporalio_sdk_core=DEBUG/);
    assert.match(coreLogFilter('warn'), /temporalio_sdk_core=WARN/);
    for (const l of ['error', 'fatal', 'silent']) assert.match(coreLogFilter(l), /temporalio_sdk_core=ERROR/);
    assert.match(coreLogFilter('info'), /^ERROR,/);
  });
});
