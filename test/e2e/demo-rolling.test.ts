// test-lane: parallel
/**
 * `npm run demo -- --rolling` on the real stack, run like a user runs it (`drainflow demo`, off a
 * terminal, output captured): a rolling maintenance of two kwok nodes, one at a time, with an
 * afterDrain Job hook per node, shown live and ending with a timeline node by node. Small sizes
 * (2 pods per node, loose PDBs) keep it short.
 *
 * Checks: exit status 0 and the plan Completed/AllNodesHandedBack; node by node, each node's hook
 * ran after its drain and before its hand-back, and the second node was cordoned only after the
 * first was handed back; the live view shows the hook lines; off a terminal it printed a block
 * only when the status changed (no two blocks alike once the countdowns are masked); drainflow
 * listened on the ports of DRAINFLOW_OPERATOR_PORT / DRAINFLOW_WORKER_PORT.
 *
 * The demo brings the stack up itself (`stack.sh up`, at once when it runs) and uses the plan
 * `demo-maintenance`, namespace `drainflow-demo` and nodes `demo-node-*`, deleted at its end.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freePorts } from '../helpers/processes.js';
import { runCommand } from './cli-fixtures.js';

describe('npm run demo -- --rolling', () => {
  it('rolls a maintenance over two nodes, one at a time, each handed back after its Job hook', async () => {
    const [operatorPort, workerPort] = await freePorts(2);
    const r = await runCommand(
      ['demo', '--rolling', '--nodes', '3', '--drain', '2', '--pods-per-node', '2', '--pdb', 'loose'],
      {
        env: {
          ...process.env,
          DRAINFLOW_OPERATOR_PORT: String(operatorPort),
          DRAINFLOW_WORKER_PORT: String(workerPort),
        },
        timeoutMs: 300_000,
      },
    );
    const lines = r.out.split('\n');
    console.log(
      `demo --rolling: exit ${r.code} in ${(r.ms / 1000).toFixed(1)} s, ${lines.length} lines of output`,
    );
    // Where the time goes (the demo's own progress lines carry the seconds since it began).
    for (const l of r.err.split('\n').filter((x) => x.startsWith('[demo '))) console.log(l.slice(0, 120));
    assert.equal(r.code, 0, `exit status 0\n--- stdout\n${r.out}\n--- stderr\n${r.err}`);
    assert.match(
      r.err,
      new RegExp(`operator on port ${operatorPort}, worker on port ${workerPort}`),
      'the ports of DRAINFLOW_OPERATOR_PORT / DRAINFLOW_WORKER_PORT',
    );
    assert.match(r.out, /plan demo-maintenance: Completed \(AllNodesHandedBack\) in [\d.]+ s/);
    assert.match(r.out, /every node is uncordoned again/);

    // The live view: the hook while it runs and after it succeeded.
    assert.match(
      r.out,
      /afterDrain hook (Running|Succeeded) .*Job drainflow-demo\/drainflow-after-demo-node-0-/,
    );

    // The timeline, node by node: [seconds, node, text].
    const timeline = lines
      .map((l) => /^ +([\d.]+) s {2}(demo-node-\d+): (.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ at: Number(m[1]), node: m[2]!, text: m[3]! }));
    const when = (node: string, re: RegExp) => timeline.find((e) => e.node === node && re.test(e.text))?.at;
    for (const node of ['demo-node-0', 'demo-node-1']) {
      const drained = when(node, /^Drained/);
      const hook = when(node, /afterDrain hook (Running|Succeeded)/);
      const back = when(node, /^Released \(HandedBack\); afterDrain hook Succeeded/);
      assert.ok(
        drained !== undefined && hook !== undefined && back !== undefined,
        `${node}: drained, hook, handed back\n${r.out}`,
      );
      assert.ok(drained <= hook && hook <= back, `${node}: drain, then hook, then hand-back\n${r.out}`);
    }
    const firstBack = when('demo-node-0', /^Released/)!;
    const secondCordoned = when('demo-node-1', /^(Cordoned|Draining)/);
    assert.ok(
      secondCordoned !== undefined && secondCordoned >= firstBack,
      `demo-node-1 starts only after demo-node-0 was handed back\n${r.out}`,
    );

    // Off a terminal: one block per change of the status, not one per poll (countdowns masked).
    const live = r.out.split('\n=== summary ===')[0]!;
    const blocks = live
      .split('\n\n')
      .filter((b) => b.startsWith('MaintenancePlan '))
      .map((b) =>
        b
          .replace(/in \d+ s/g, 'in N s')
          .replace(/for \d+ s/g, 'for N s')
          .replace(/the first in \d+ s/g, ''),
      );
    for (let i = 1; i < blocks.length; i++)
      assert.notEqual(blocks[i], blocks[i - 1], `block ${i} repeats block ${i - 1}:\n${blocks[i]}`);
    console.log(`demo --rolling: ${blocks.length} status blocks, ${timeline.length} timeline entries`);
  });
});
