/**
 * The demo's input checks (src/cli/demo-options.ts): every numeric flag refused with its name and
 * the value given, and ports another process holds refused with the variable to change (a real
 * listener on a real port, not a fake).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import {
  assertDemoPortsFree,
  parseDemoNumbers,
  portIsFree,
  type DemoFlags,
} from '../../src/cli/demo-options.js';

const defaults: DemoFlags = { nodes: '4', drain: '2', podsPerNode: '6', timeout: '300' };

describe('demo flags', () => {
  it('the defaults', () =>
    assert.deepEqual(parseDemoNumbers(defaults), {
      nodes: 4,
      drain: 2,
      podsPerNode: 6,
      timeoutSeconds: 300,
    }));
  it('the bounds themselves', () =>
    assert.deepEqual(parseDemoNumbers({ nodes: '100', drain: '99', podsPerNode: '1', timeout: '86400' }), {
      nodes: 100,
      drain: 99,
      podsPerNode: 1,
      timeoutSeconds: 86400,
    }));

  const bad: [string, Partial<DemoFlags>, string][] = [
    [
      'negative pods',
      { podsPerNode: '-1' },
      '--pods-per-node must be a whole number from 1 to 100 (pods per node), got "-1"',
    ],
    [
      'a word for the timeout',
      { timeout: 'abc' },
      '--timeout must be a whole number from 1 to 86400 (the plan deadline in seconds), got "abc"',
    ],
    [
      'a fraction',
      { timeout: '1.5' },
      '--timeout must be a whole number from 1 to 86400 (the plan deadline in seconds), got "1.5"',
    ],
    ['zero seconds', { timeout: '0' }, '--timeout must be a whole number from 1 to 86400'],
    [
      'an exponent',
      { podsPerNode: '1e1' },
      '--pods-per-node must be a whole number from 1 to 100 (pods per node), got "1e1"',
    ],
    [
      'empty',
      { nodes: '' },
      '--nodes must be a whole number from 2 to 100 (kwok nodes in the demo pool), got ""',
    ],
    ['one node', { nodes: '1', drain: '1' }, '--nodes must be a whole number from 2 to 100'],
    ['too many nodes', { nodes: '101' }, '--nodes must be a whole number from 2 to 100'],
    [
      'no node drained',
      { drain: '0' },
      '--drain must be a whole number from 1 to 99 (nodes to drain), got "0"',
    ],
    [
      'every node drained',
      { nodes: '3', drain: '3' },
      '--drain must be less than --nodes (the drained pods need somewhere to go), got --drain 3 with --nodes 3',
    ],
    [
      'hex',
      { nodes: '0x4' },
      '--nodes must be a whole number from 2 to 100 (kwok nodes in the demo pool), got "0x4"',
    ],
  ];
  for (const [what, flags, want] of bad)
    it(`refused: ${what}`, () =>
      assert.throws(
        () => parseDemoNumbers({ ...defaults, ...flags }),
        (err: Error) => err.message.startsWith('demo: ') && err.message.includes(want),
      ));

  it('every bad flag is named at once', () =>
    assert.throws(
      () => parseDemoNumbers({ ...defaults, podsPerNode: '-1', timeout: 'abc' }),
      /--pods-per-node must be .*got "-1"; --timeout must be .*got "abc"/,
    ));
});

/** A listener on a free port of 127.0.0.1 (the OS picks it). */
async function listener(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const addr = server.address();
  assert.ok(addr && typeof addr === 'object');
  return { server, port: addr.port };
}

describe('demo ports in use', () => {
  it('a port another process listens on is not free; once it closes, it is', async () => {
    const { server, port } = await listener();
    assert.equal(await portIsFree(port), false);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    assert.equal(await portIsFree(port), true);
  });

  it('refused with the port and the variable to change; a free port is not named', async () => {
    const taken = await listener();
    const free = await listener();
    const freePort = free.port;
    await new Promise<void>((resolve) => free.server.close(() => resolve()));
    try {
      await assert.rejects(
        assertDemoPortsFree([
          { port: taken.port, variable: 'DRAINFLOW_OPERATOR_PORT', what: 'operator' },
          { port: freePort, variable: 'DRAINFLOW_WORKER_PORT', what: 'worker' },
        ]),
        (err: Error) => {
          assert.match(
            err.message,
            new RegExp(
              `^demo: port ${taken.port} \\(the operator, DRAINFLOW_OPERATOR_PORT\\) is already in use on 127\\.0\\.0\\.1: .*set DRAINFLOW_OPERATOR_PORT to a free port$`,
            ),
          );
          assert.doesNotMatch(err.message, /DRAINFLOW_WORKER_PORT/);
          return true;
        },
      );
      // Both free: no error.
      await assertDemoPortsFree([{ port: freePort, variable: 'DRAINFLOW_WORKER_PORT', what: 'worker' }]);
    } finally {
      await new Promise<void>((resolve) => taken.server.close(() => resolve()));
    }
  });
});
