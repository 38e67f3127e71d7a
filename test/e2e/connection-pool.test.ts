// test-lane: parallel
/**
 * End-to-end test of src/k8s/connection-pool.ts against the real local stack: API calls and
 * watches made through a KubeConfig passed to `reuseConnections` share keep-alive connections,
 * where a plain client-node KubeConfig opens one TCP + TLS connection per request.
 *
 * Connections are counted with undici's diagnostics channel `undici:client:connected` (published
 * by the undici that client-node uses for every request).
 */
import assert from 'node:assert/strict';
import diagnosticsChannel from 'node:diagnostics_channel';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, type KubeConfig, Watch } from '@kubernetes/client-node';
import { reuseConnections } from '../../src/k8s/connection-pool.js';
import { kubeConfig } from '../helpers/k8s.js';

const CALLS = 12;

describe('API server connection reuse', () => {
  let connected = 0;
  const onConnected = () => {
    connected++;
  };
  before(() => diagnosticsChannel.subscribe('undici:client:connected', onConnected));
  after(() => diagnosticsChannel.unsubscribe('undici:client:connected', onConnected));

  /** Connections opened while `fn` runs. */
  async function connectionsOf(fn: () => Promise<void>): Promise<number> {
    const before = connected;
    await fn();
    return connected - before;
  }
  const sequentialReads = (kc: KubeConfig) => async () => {
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < CALLS; i++) await core.listNamespace({ limit: 1 });
  };

  it('a plain KubeConfig opens a connection per request (what reuseConnections fixes)', async () => {
    const n = await connectionsOf(sequentialReads(kubeConfig()));
    assert.equal(n, CALLS, `expected one connection per request, saw ${n} for ${CALLS} requests`);
  });

  it(`${CALLS} sequential requests share one connection`, async () => {
    const kc = reuseConnections(kubeConfig());
    const n = await connectionsOf(sequentialReads(kc));
    assert.ok(n <= 1, `expected at most 1 new connection for ${CALLS} requests, saw ${n}`);
  });

  it('concurrent requests open at most as many connections as are in flight, then reuse them', async () => {
    const kc = reuseConnections(kubeConfig());
    const core = kc.makeApiClient(CoreV1Api);
    const first = await connectionsOf(async () => {
      await Promise.all(Array.from({ length: 4 }, () => core.listNamespace({ limit: 1 })));
    });
    assert.ok(first >= 1 && first <= 4, `4 requests at once opened ${first} connections`);
    const again = await connectionsOf(async () => {
      for (let i = 0; i < CALLS; i++) await core.listNamespace({ limit: 1 });
    });
    assert.equal(again, 0, `requests after the burst opened ${again} new connections`);
  });

  it('a watch and requests beside it work through the shared pool', async () => {
    const kc = reuseConnections(kubeConfig());
    const core = kc.makeApiClient(CoreV1Api);
    let events = 0;
    const req = await new Watch(kc).watch(
      '/api/v1/namespaces',
      { fieldSelector: 'metadata.name=default' },
      () => {
        events++;
      },
      () => undefined,
    );
    try {
      const deadline = Date.now() + 10_000;
      while (events === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(events >= 1, 'the watch delivered no event');
      const n = await connectionsOf(async () => {
        for (let i = 0; i < CALLS; i++) await core.listNamespace({ limit: 1 });
      });
      assert.ok(n <= 1, `requests beside an open watch opened ${n} connections`);
    } finally {
      req.abort();
    }
  });

  it('is idempotent', () => {
    const kc = kubeConfig();
    assert.equal(reuseConnections(reuseConnections(kc)), kc);
  });
});
