/**
 * startHeartbeats (src/activities/context.ts): an activity's first heartbeat waits, so an activity
 * that ends sooner sends none to the Temporal server; later ones follow every interval; the first
 * never comes later than half the heartbeat timeout. Run in the SDK's MockActivityEnvironment (no
 * server), with real timers of a few hundred ms.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { startHeartbeats, type HeartbeatTiming } from '../../src/activities/context.js';

/** Runs an activity of `runMs` that heartbeats with `timing`; @returns the heartbeat times, ms after its start. */
async function beatsOf(
  runMs: number,
  timing: HeartbeatTiming,
  heartbeatTimeoutMs?: number,
): Promise<number[]> {
  const env = new MockActivityEnvironment(
    heartbeatTimeoutMs !== undefined ? { heartbeatTimeoutMs } : undefined,
  );
  const beats: number[] = [];
  let t0 = 0;
  env.on('heartbeat', () => beats.push(Date.now() - t0));
  await env.run(async () => {
    t0 = Date.now();
    const stop = startHeartbeats(Context.current(), timing);
    try {
      await sleep(runMs);
    } finally {
      stop();
    }
  });
  await sleep(timing.intervalMs * 2); // nothing may follow the stop
  return beats;
}

describe('startHeartbeats', () => {
  it('an activity that ends before the first heartbeat sends none', async () => {
    assert.deepEqual(await beatsOf(100, { firstAfterMs: 400, intervalMs: 100 }), []);
  });

  it('the first after firstAfterMs, then every intervalMs, none after the stop', async () => {
    const beats = await beatsOf(650, { firstAfterMs: 300, intervalMs: 100 });
    assert.ok(beats.length >= 3 && beats.length <= 5, `heartbeats at ${beats.join(', ')} ms`);
    assert.ok(beats[0]! >= 280 && beats[0]! < 450, `first at ${beats[0]} ms`);
  });

  it('the first comes by half the heartbeat timeout when that is sooner', async () => {
    const beats = await beatsOf(300, { firstAfterMs: 5000, intervalMs: 1000 }, 400);
    assert.equal(beats.length, 1, `heartbeats at ${beats.join(', ')} ms`);
    assert.ok(beats[0]! >= 180 && beats[0]! < 350, `first at ${beats[0]} ms`);
  });

  it('outside an activity it does nothing', () => {
    const stop = startHeartbeats(undefined, { firstAfterMs: 0, intervalMs: 1 });
    stop();
  });
});
