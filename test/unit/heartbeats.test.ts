/**
 * startHeartbeats (src/activities/context.ts): an activity's first heartbeat waits, so an activity
 * that ends sooner sends none to the Temporal server; later ones follow every interval; the first
 * never comes later than half the heartbeat timeout. activityWaits: a wait ends at its time or at
 * once when the activity is cancelled, which it then throws. Run in the SDK's
 * MockActivityEnvironment (no server), with real timers of a few hundred ms.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { activityWaits, startHeartbeats, type HeartbeatTiming } from '../../src/activities/context.js';

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

describe('activityWaits', () => {
  /** A wait that resolves `false` when its signal aborts, `true` after `ms` otherwise. */
  const waitFor = (ms: number) => (signal: AbortSignal) =>
    new Promise<boolean>((resolve) => {
      const t = setTimeout(() => resolve(true), ms);
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve(false);
      });
    });
  const timing = { firstAfterMs: 5000, intervalMs: 5000 };

  it('a wait ends at its time', async () => {
    const env = new MockActivityEnvironment();
    const [answer, ms] = await env.run(async (): Promise<readonly [boolean, number]> => {
      const waits = activityWaits('test n1', timing);
      const t0 = Date.now();
      try {
        return [await waits.until(Date.now() + 200, waitFor(5000)), Date.now() - t0] as const;
      } finally {
        waits.close();
      }
    });
    assert.equal(answer, false);
    assert.ok(ms >= 180 && ms < 1000, `${ms} ms`);
  });

  it('what the wait answers first is its answer', async () => {
    const env = new MockActivityEnvironment();
    const answer = await env.run(async () => {
      const waits = activityWaits('test n1', timing);
      try {
        return await waits.until(Date.now() + 5000, waitFor(50));
      } finally {
        waits.close();
      }
    });
    assert.equal(answer, true);
  });

  it('a cancellation ends the wait at once and is thrown', async () => {
    const env = new MockActivityEnvironment();
    const t0 = Date.now();
    setTimeout(() => env.cancel('CANCELLED'), 150);
    await assert.rejects(
      env.run(async () => {
        const waits = activityWaits('test n1', timing);
        try {
          await waits.until(Date.now() + 5000, waitFor(5000));
          return 'not cancelled';
        } finally {
          waits.close();
        }
      }),
      (err: Error) => /cancel/i.test(`${err.name} ${err.message}`),
    );
    assert.ok(Date.now() - t0 < 1000, `${Date.now() - t0} ms`);
  });

  it('outside an activity a wait still ends at its time', async () => {
    const waits = activityWaits('test n1', timing);
    try {
      assert.equal(await waits.until(Date.now() + 50, waitFor(5000)), false);
      waits.throwIfCancelled();
    } finally {
      waits.close();
    }
  });
});
