/**
 * Health and metrics endpoints of a drainflow process: `/healthz` (alive), `/readyz` (ready to
 * work: connected, informer synced), `/metrics` (prom-client text format).
 */
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The metrics of one process. Units: seconds for durations. */
export class DrainflowMetrics {
  readonly registry = new Registry();
  /** MaintenancePlans by phase, as the operator last saw them. */
  readonly plansByPhase = new Gauge({
    name: 'drainflow_plans',
    help: 'MaintenancePlans by phase',
    labelNames: ['phase'],
    registers: [this.registry],
  });
  /**
   * Deadline (status.deadline) of each plan that has started and not reached a final phase, as
   * Unix time in seconds, labelled with the plan name; for the "deadline about to pass" alert.
   */
  readonly planDeadline = new Gauge({
    name: 'drainflow_plan_deadline_timestamp_seconds',
    help: 'Deadline of each started, unfinished MaintenancePlan (Unix seconds)',
    labelNames: ['plan'],
    registers: [this.registry],
  });
  /** Eviction API calls by classified outcome (Evicted, Gone, TooManyRequests, Failed, Error). */
  readonly evictions = new Counter({
    name: 'drainflow_evictions_total',
    help: 'Eviction API calls by outcome',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  /** Eviction API calls answered 429, by cause (DisruptionBudget, Throttled). */
  readonly tooManyRequests = new Counter({
    name: 'drainflow_eviction_429_total',
    help: 'Eviction calls answered 429',
    labelNames: ['cause'],
    registers: [this.registry],
  });
  /** Time from plan start to its final phase, seconds. */
  readonly drainDuration = new Histogram({
    name: 'drainflow_drain_duration_seconds',
    help: 'Plan drain duration from start to a final phase',
    labelNames: ['phase'],
    buckets: [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200],
    registers: [this.registry],
  });
  /** Workflow starts and signals sent by the operator, by kind. */
  readonly operatorActions = new Counter({
    name: 'drainflow_operator_actions_total',
    help: 'Workflow starts and signals sent by the operator',
    labelNames: ['action'],
    registers: [this.registry],
  });
  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}

/**
 * Serves /healthz, /readyz and /metrics on 127.0.0.1 (local) or 0.0.0.0 (in-cluster).
 * @param ready returns whether the process is ready (readiness probe).
 */
export async function serveHttp(
  port: number,
  host: string,
  metrics: DrainflowMetrics,
  ready: () => boolean,
): Promise<Server> {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url.startsWith('/healthz')) {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (url.startsWith('/readyz')) {
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ready' : 'not ready');
    } else if (url.startsWith('/metrics')) {
      metrics.registry.metrics().then(
        (body) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(body),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    } else {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`port ${port} on ${host} is already in use (--operator-port / --worker-port)`, {
              cause: err,
            })
          : err,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  return server;
}
