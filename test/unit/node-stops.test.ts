/**
 * The operator's direct stops to a plan's node workflows (src/operator/node-stops.ts): the
 * visibility query, which workflows are signalled with what, and the Event words.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  nodeStopWords,
  runningNodesQuery,
  signalNodeStop,
  stopNodeWorkflows,
} from '../../src/operator/node-stops.js';
import { nodeWorkflowId } from '../../src/contract/names.js';

const PLAN = 'maintenanceplan-p-uid-p';

/** A Client whose list answers `listed` and whose signals are recorded; `gone` IDs are closed. */
function fakeClient(listed: string[], gone: string[] = [], failing: string[] = []) {
  const queries: string[] = [];
  const signals: { id: string; name: string; args: unknown }[] = [];
  const client = {
    workflow: {
      list: ({ query }: { query: string }) => {
        queries.push(query);
        return (async function* () {
          for (const workflowId of listed) yield { workflowId };
        })();
      },
      getHandle: (id: string) => ({
        signal: async (def: { name: string }, args: unknown) => {
          if (gone.includes(id)) throw new WorkflowNotFoundError('closed', id, undefined);
          if (failing.includes(id)) throw new Error('unavailable');
          signals.push({ id, name: def.name, args });
        },
      }),
    },
  } as unknown as Client;
  return { client, queries, signals };
}

describe('runningNodesQuery', () => {
  it('the running node workflows of the plan by type and ID prefix (hook workflows excluded by type)', () => {
    assert.equal(
      runningNodesQuery(PLAN),
      `WorkflowType = "drainNodeWorkflow" AND WorkflowId STARTS_WITH "${PLAN}-node-" AND ExecutionStatus = "Running"`,
    );
    assert.ok(nodeWorkflowId(PLAN, 'n1').startsWith(`${PLAN}-node-`));
  });
  it('escapes quotes and backslashes', () => {
    assert.match(runningNodesQuery('a"b\\c'), /STARTS_WITH "a\\"b\\\\c-node-"/);
  });
});

describe('stopNodeWorkflows', () => {
  it('signals nodeControl {action, generation} to each listed node workflow', async () => {
    const ids = [nodeWorkflowId(PLAN, 'n2'), nodeWorkflowId(PLAN, 'n1')];
    const f = fakeClient(ids);
    const sent = await stopNodeWorkflows(f.client, PLAN, 'pause', 4);
    assert.deepEqual(sent, [...ids].sort());
    assert.deepEqual(f.queries, [runningNodesQuery(PLAN)]);
    assert.deepEqual(
      f.signals.map((s) => [s.id, s.name, s.args]).sort(),
      ids.map((id) => [id, 'nodeControl', { action: 'pause', generation: 4 }]).sort(),
    );
  });
  it('no running node workflow: nothing signalled', async () => {
    const f = fakeClient([]);
    assert.deepEqual(await stopNodeWorkflows(f.client, PLAN, 'abort', 2), []);
    assert.equal(f.signals.length, 0);
  });
  it('a node workflow that closed meanwhile is skipped, not an error', async () => {
    const f = fakeClient([], [nodeWorkflowId(PLAN, 'n1')]);
    const sent = await signalNodeStop(
      f.client,
      [nodeWorkflowId(PLAN, 'n1'), nodeWorkflowId(PLAN, 'n2')],
      'abort',
    );
    assert.deepEqual(sent, [nodeWorkflowId(PLAN, 'n2')]);
    assert.deepEqual(f.signals[0]?.args, { action: 'abort' });
  });
  it('any other error is thrown once every signal settled', async () => {
    const f = fakeClient([], [], [nodeWorkflowId(PLAN, 'n1')]);
    await assert.rejects(
      signalNodeStop(f.client, [nodeWorkflowId(PLAN, 'n1'), nodeWorkflowId(PLAN, 'n2')], 'pause', 3),
      /unavailable/,
    );
    assert.deepEqual(
      f.signals.map((s) => s.id),
      [nodeWorkflowId(PLAN, 'n2')],
    );
  });
});

describe('nodeStopWords', () => {
  it('one clause for all node workflows, nothing when none', () => {
    assert.equal(nodeStopWords([]), '');
    assert.equal(nodeStopWords(['a', 'b']), ' and directly to 2 running node workflow(s)');
  });
});
