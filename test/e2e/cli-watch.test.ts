// test-lane: parallel
/**
 * `drainflow watch` off a terminal (a pipe, a CI log, the demo's output in a file) prints a block
 * only when the plan's status changes, not once per poll because a countdown ticked. Real API
 * server; the plan's status is written by the test (no operator acts on it: no drainflow runs here).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { GROUP, PLURAL, VERSION, type MaintenancePlanStatus } from '../../src/api/plan.js';
import { MERGE_PATCH } from '../../src/k8s/patch.js';
import { watch } from '../../src/cli/plans.js';
import { loadCliConfig } from '../../src/shared/settings.js';
import { applyCrds, clients, uniqueName, type Clients } from '../helpers/k8s.js';
import { createPlanObject } from '../helpers/direct-plan.js';

describe('drainflow watch off a terminal', () => {
  let c: Clients;
  const name = uniqueName('watch-plan');

  before(async () => {
    c = clients();
    await applyCrds(c);
  });
  after(async () => {
    await c.custom
      .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
      .catch(() => undefined);
  });

  it('prints one block per status change while the countdowns tick', async () => {
    await createPlanObject(c, name, { nodeNames: ['watch-node-a'] }, { 'drainflow.dev/test': 'e2e-watch' });
    const status = (over: Partial<MaintenancePlanStatus>): MaintenancePlanStatus => ({
      phase: 'Running',
      reason: 'Draining',
      message: 'draining 1 node(s)',
      deadline: new Date(Date.now() + 3_600_000).toISOString(),
      nodes: [{ name: 'watch-node-a', phase: 'Draining', podsTotal: 2, podsEvicted: 0 }],
      evictionProgress: { total: 2, evicted: 0, pending: 2, failed: 0, attempts: 0, tooManyRequests: 0 },
      ...over,
    });
    const write = (st: MaintenancePlanStatus) =>
      c.custom.patchClusterCustomObjectStatus(
        { group: GROUP, version: VERSION, plural: PLURAL, name, body: { status: st } },
        MERGE_PATCH,
      );
    const first = status({});
    await write(first);

    const out = new PassThrough() as PassThrough & { isTTY?: boolean };
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    let polls = 0;
    // 12 polls 250 ms apart (3 s: the deadline countdown changes 3 times); one change of the
    // status after the 6th poll.
    await watch(loadCliConfig({}), name, {
      intervalMs: 250,
      out: out as unknown as NodeJS.WriteStream,
      until: () => {
        polls++;
        if (polls === 6)
          void write({
            ...first,
            nodes: [{ name: 'watch-node-a', phase: 'Draining', podsTotal: 2, podsEvicted: 1 }],
            evictionProgress: { ...first.evictionProgress!, evicted: 1, pending: 1 },
          });
        return polls >= 12;
      },
    });
    const blocks = text.split('\n\n').filter((b) => b.trim() !== '');
    console.log(`watch off a terminal: ${polls} polls, ${blocks.length} block(s)`);
    assert.equal(polls, 12);
    assert.equal(blocks.length, 2, `one block per status, not per poll:\n${text}`);
    assert.match(blocks[0]!, /0\/2 evicted/);
    assert.match(blocks[1]!, /1\/2 evicted/);
  });
});
