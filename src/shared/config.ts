/**
 * Process configuration of `drainflow run` (operator and/or worker), from flags and environment,
 * validated with zod: a bad setting fails at start with a message naming it.
 *
 * Environment: KUBECONFIG, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, DRAINFLOW_TASK_QUEUE,
 * TEMPORAL_TLS_CERT / TEMPORAL_TLS_KEY / TEMPORAL_TLS_CA / TEMPORAL_TLS_SERVER_NAME (mTLS, e.g.
 * Temporal Cloud), TEMPORAL_API_KEY, TEMPORAL_UI_URL, DRAINFLOW_OPERATOR_PORT,
 * DRAINFLOW_WORKER_PORT, DRAINFLOW_LOG_LEVEL, DRAINFLOW_PLAN_SELECTOR (label selector: the
 * operator acts only on matching plans, so several installations or test runs can share a cluster),
 * DRAINFLOW_MAX_EVICTIONS_PER_SECOND (server-enforced cap on Eviction API calls of every worker on
 * the task queue), POD_NAME / POD_NAMESPACE (in-cluster identity).
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { reuseConnections } from '../k8s/connection-pool.js';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../workflows/messages.js';

const port = z.coerce.number().int().min(0).max(65535);
const MAX_EVICTIONS_MESSAGE = 'must be a positive number of eviction calls per second, e.g. 5 or 0.5';

/** Schema of the process configuration. */
export const RunConfigSchema = z
  .object({
    mode: z.enum(['local', 'in-cluster']).describe('local: kubeconfig; in-cluster: the pod service account'),
    kubeconfig: z.string().optional(),
    temporalAddress: z
      .string()
      .regex(/^[^\s:]+:\d+$/, 'must be host:port, e.g. 127.0.0.1:7233')
      .default('127.0.0.1:7233'),
    temporalNamespace: z.string().min(1).default('default'),
    taskQueue: z.string().min(1).default(DEFAULT_TASK_QUEUE),
    tls: z
      .object({
        cert: z.string().optional(),
        key: z.string().optional(),
        ca: z.string().optional(),
        serverName: z.string().optional(),
      })
      .refine(
        (t) => Boolean(t.cert) === Boolean(t.key),
        'TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be given together',
      )
      .optional(),
    apiKey: z.string().optional(),
    temporalUiUrl: z.string().url().optional(),
    operatorPort: port.default(8080),
    workerPort: port.default(8081),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    identity: z.string().min(1).default(`${hostname()}-${process.pid}`),
    leaseNamespace: z.string().min(1).default('default'),
    leaderElection: z.boolean().default(true),
    planSelector: z
      .string()
      .min(1)
      .refine(
        (sel) =>
          sel.includes('(') ||
          sel.split(',').every((t) => /^\s*!?[A-Za-z0-9._/-]+(\s*(=|==|!=)\s*[A-Za-z0-9._-]*)?\s*$/.test(t)),
        'must be a label selector such as drainflow.dev/team=infra or env!=prod',
      )
      .optional(),
    /** Eviction calls per second on the eviction task queue, enforced by the Temporal server. Unset: no limit. */
    maxEvictionsPerSecond: z.coerce
      .number({ error: MAX_EVICTIONS_MESSAGE })
      .positive(MAX_EVICTIONS_MESSAGE)
      .optional(),
  })
  .strict();
/** Validated process configuration. */
export type RunConfig = z.infer<typeof RunConfigSchema>;

/** Flags of `drainflow run` that map onto the config (undefined = take the environment). */
export interface RunFlags {
  mode?: string;
  kubeconfig?: string;
  temporalAddress?: string;
  temporalNamespace?: string;
  taskQueue?: string;
  operatorPort?: string;
  workerPort?: string;
  logLevel?: string;
  leaseNamespace?: string;
  leaderElection?: boolean;
  planSelector?: string;
  maxEvictionsPerSecond?: string;
}

/**
 * Builds and validates the configuration: flags win over environment, environment over defaults.
 * @throws Error with one line per bad setting, naming the flag or variable.
 */
export function loadConfig(flags: RunFlags, env: NodeJS.ProcessEnv = process.env): RunConfig {
  const tlsGiven =
    env.TEMPORAL_TLS_CERT || env.TEMPORAL_TLS_KEY || env.TEMPORAL_TLS_CA || env.TEMPORAL_TLS_SERVER_NAME;
  const raw = {
    mode: flags.mode ?? env.DRAINFLOW_MODE ?? 'local',
    kubeconfig: flags.kubeconfig ?? env.KUBECONFIG,
    temporalAddress: flags.temporalAddress ?? env.TEMPORAL_ADDRESS,
    temporalNamespace: flags.temporalNamespace ?? env.TEMPORAL_NAMESPACE,
    taskQueue: flags.taskQueue ?? env.DRAINFLOW_TASK_QUEUE,
    tls: tlsGiven
      ? {
          cert: env.TEMPORAL_TLS_CERT,
          key: env.TEMPORAL_TLS_KEY,
          ca: env.TEMPORAL_TLS_CA,
          serverName: env.TEMPORAL_TLS_SERVER_NAME,
        }
      : undefined,
    apiKey: env.TEMPORAL_API_KEY || undefined,
    temporalUiUrl: env.TEMPORAL_UI_URL || undefined,
    operatorPort: flags.operatorPort ?? env.DRAINFLOW_OPERATOR_PORT,
    workerPort: flags.workerPort ?? env.DRAINFLOW_WORKER_PORT,
    logLevel: flags.logLevel ?? env.DRAINFLOW_LOG_LEVEL,
    identity: env.POD_NAME || undefined,
    leaseNamespace: flags.leaseNamespace ?? env.POD_NAMESPACE,
    leaderElection: flags.leaderElection,
    planSelector: flags.planSelector ?? (env.DRAINFLOW_PLAN_SELECTOR || undefined),
    maxEvictionsPerSecond:
      flags.maxEvictionsPerSecond ?? (env.DRAINFLOW_MAX_EVICTIONS_PER_SECOND || undefined),
  };
  const res = RunConfigSchema.safeParse(JSON.parse(JSON.stringify(raw)));
  if (!res.success) {
    const names: Record<string, string> = {
      mode: '--mode',
      kubeconfig: '--kubeconfig / KUBECONFIG',
      temporalAddress: '--temporal-address / TEMPORAL_ADDRESS',
      temporalNamespace: '--temporal-namespace / TEMPORAL_NAMESPACE',
      taskQueue: '--task-queue / DRAINFLOW_TASK_QUEUE',
      tls: 'TEMPORAL_TLS_*',
      temporalUiUrl: 'TEMPORAL_UI_URL',
      operatorPort: '--operator-port / DRAINFLOW_OPERATOR_PORT',
      workerPort: '--worker-port / DRAINFLOW_WORKER_PORT',
      logLevel: '--log-level / DRAINFLOW_LOG_LEVEL',
      planSelector: '--plan-selector / DRAINFLOW_PLAN_SELECTOR',
      maxEvictionsPerSecond: '--max-evictions-per-second / DRAINFLOW_MAX_EVICTIONS_PER_SECOND',
    };
    const lines = res.error.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      return `invalid setting ${names[key] ?? key}: ${i.message}`;
    });
    throw new Error(lines.join('\n'));
  }
  if (res.data.mode === 'local' && !res.data.kubeconfig) {
    throw new Error('invalid setting --kubeconfig / KUBECONFIG: required with --mode local');
  }
  return res.data;
}

/**
 * The KubeConfig for the configured mode, reusing its API server connections (see
 * src/k8s/connection-pool.ts). @throws Error when the kubeconfig cannot be read. */
export function kubeConfigFor(cfg: RunConfig): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (cfg.mode === 'in-cluster') kc.loadFromCluster();
    else kc.loadFromFile(cfg.kubeconfig!);
  } catch (err) {
    throw new Error(
      `invalid setting --kubeconfig / KUBECONFIG: cannot read ${cfg.kubeconfig}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return reuseConnections(kc);
}

/** Runs `connect`, turning a failure into an error naming the Temporal settings. */
async function reach<T>(cfg: RunConfig, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (err) {
    throw new Error(
      `cannot reach Temporal at ${cfg.temporalAddress} (--temporal-address / TEMPORAL_ADDRESS, TLS: TEMPORAL_TLS_*): ${(err as Error).message}`,
      { cause: err },
    );
  }
}

function tlsOptions(cfg: RunConfig): ConnectionOptions['tls'] {
  if (!cfg.tls) return cfg.apiKey ? true : undefined;
  return {
    ...(cfg.tls.serverName ? { serverNameOverride: cfg.tls.serverName } : {}),
    ...(cfg.tls.ca ? { serverRootCACertificate: readFileSync(cfg.tls.ca) } : {}),
    ...(cfg.tls.cert && cfg.tls.key
      ? { clientCertPair: { crt: readFileSync(cfg.tls.cert), key: readFileSync(cfg.tls.key) } }
      : {}),
  };
}

/** Client connection to Temporal (operator, CLI). */
export async function temporalConnection(cfg: RunConfig): Promise<Connection> {
  const tls = tlsOptions(cfg);
  return reach(cfg, () =>
    Connection.connect({
      address: cfg.temporalAddress,
      ...(tls !== undefined ? { tls } : {}),
      ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}),
    }),
  );
}

/** Worker connection to Temporal. */
export async function temporalNativeConnection(cfg: RunConfig): Promise<NativeConnection> {
  const tls = tlsOptions(cfg) as NativeConnectionOptions['tls'];
  return reach(cfg, () =>
    NativeConnection.connect({
      address: cfg.temporalAddress,
      ...(tls !== undefined ? { tls } : {}),
      ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}),
    }),
  );
}
