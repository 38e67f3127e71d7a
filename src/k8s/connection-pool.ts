/**
 * Connection reuse for `@kubernetes/client-node`.
 *
 * `KubeConfig.applySecurityAuthentication` (called before every API request and every watch of
 * client-node 2.x) builds a new undici `Agent` from the cluster's TLS options each time, so no
 * connection is ever reused: every eviction, patch, list and watch opens a TCP connection and
 * makes a full TLS handshake with the API server (client-go, and kubectl with it, keep one pool
 * of HTTP/2 or keep-alive connections per cluster instead). On a busy host that handshake costs
 * both sides CPU and every call one or two round trips more.
 */
import type { AgentOptions } from 'node:https';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';

/** client-node's (private) per-request dispatcher factory, as of 2.0.x. */
type CreateDispatcher = (cluster: Cluster | null, agentOptions: AgentOptions) => unknown;

const POOLED = Symbol('drainflow.pooledDispatchers');

/**
 * Makes `kc` hand out one undici dispatcher (a keep-alive connection pool) per distinct set of
 * cluster and TLS options instead of a new one per request. Mutates and returns `kc`; calling it
 * twice changes nothing more.
 *
 * The cache key is what the dispatcher is built from (proxy URL, server, CA, client certificate
 * and key, server name, verification): a rotated client certificate (a kubeconfig reloaded from
 * disk, an exec plugin returning certificates) gets a new pool; bearer tokens travel as request
 * headers and do not touch the pool. The pools live as long as `kc`; undici closes idle
 * connections itself (keep-alive timeout of the server's answers) and reconnects when the API
 * server restarts.
 *
 * `createDispatcher` is a private method of client-node (pinned in package.json); when a version
 * no longer has it, `kc` is returned as it is (requests still work, one connection each) — the
 * e2e test test/e2e/connection-pool.test.ts fails then.
 */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  const marked = kc as unknown as { [POOLED]?: true; createDispatcher?: CreateDispatcher };
  if (marked[POOLED] || typeof marked.createDispatcher !== 'function') return kc;
  const create = marked.createDispatcher.bind(kc);
  const pools = new Map<string, unknown>();
  marked.createDispatcher = (cluster, agentOptions) => {
    const key = JSON.stringify([
      cluster?.server,
      cluster?.proxyUrl,
      cluster?.skipTLSVerify,
      agentOptions?.ca,
      agentOptions?.cert,
      agentOptions?.key,
      agentOptions?.pfx,
      agentOptions?.passphrase,
      agentOptions?.servername,
      agentOptions?.rejectUnauthorized,
    ]);
    if (!pools.has(key)) pools.set(key, create(cluster, agentOptions));
    return pools.get(key);
  };
  marked[POOLED] = true;
  return kc;
}
