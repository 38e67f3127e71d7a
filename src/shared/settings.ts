/**
 * The settings of every drainflow process — `drainflow run` (operator and/or worker) and the CLI
 * commands (`status`, `pause`, `resume`, `abort`, `release`, `watch`) — from flags and environment,
 * validated with zod: a bad setting fails at start with a message naming its flag and variable.
 * How they reach Temporal is src/shared/temporal-connection.ts.
 *
 * Every setting is listed in {@link SETTINGS} (flag, environment variable). Flags win over the
 * environment, the environment over defaults. An empty variable of an optional setting (TLS files,
 * API key, UI URL, selector, eviction rate) means "not used", as in the deployed ConfigMap
 * (deploy/base/temporal.env); an empty variable of a setting that has a default (address,
 * namespace, task queue, ports, log level) is refused, since it is almost always a templating
 * mistake.
 */
import { hostname } from 'node:os';
import { KubeConfig } from '../k8s/client.js';
import { reuseConnections } from '../k8s/connection-pool.js';
import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from '../contract/names.js';
import type { LabelSelector } from '../api/plan.js';

/** Where a setting comes from: its command-line flag and/or its environment variable. */
export interface SettingSource {
  flag?: string;
  env?: string;
  /** True when an empty environment variable means "not set" (optional settings). */
  emptyIsUnset?: boolean;
}

/** Every setting of drainflow, by config key. Error messages name a setting by these. */
export const SETTINGS = {
  mode: { flag: '--mode', env: 'DRAINFLOW_MODE' },
  kubeconfig: { flag: '--kubeconfig', env: 'KUBECONFIG', emptyIsUnset: true },
  temporalAddress: { flag: '--temporal-address', env: 'TEMPORAL_ADDRESS' },
  temporalNamespace: { flag: '--temporal-namespace', env: 'TEMPORAL_NAMESPACE' },
  taskQueue: { flag: '--task-queue', env: 'DRAINFLOW_TASK_QUEUE' },
  tlsCert: { flag: '--temporal-tls-cert', env: 'TEMPORAL_TLS_CERT', emptyIsUnset: true },
  tlsKey: { flag: '--temporal-tls-key', env: 'TEMPORAL_TLS_KEY', emptyIsUnset: true },
  tlsCa: { flag: '--temporal-tls-ca', env: 'TEMPORAL_TLS_CA', emptyIsUnset: true },
  tlsServerName: {
    flag: '--temporal-tls-server-name',
    env: 'TEMPORAL_TLS_SERVER_NAME',
    emptyIsUnset: true,
  },
  // No flag: a key on the command line is visible to every user of the machine (ps).
  apiKey: { env: 'TEMPORAL_API_KEY', emptyIsUnset: true },
  temporalUiUrl: { env: 'TEMPORAL_UI_URL', emptyIsUnset: true },
  operatorPort: { flag: '--operator-port', env: 'DRAINFLOW_OPERATOR_PORT' },
  workerPort: { flag: '--worker-port', env: 'DRAINFLOW_WORKER_PORT' },
  logLevel: { flag: '--log-level', env: 'DRAINFLOW_LOG_LEVEL' },
  identity: { env: 'POD_NAME', emptyIsUnset: true },
  leaseNamespace: { flag: '--lease-namespace', env: 'POD_NAMESPACE' },
  leaderElection: { flag: '--no-leader-election' },
  planSelector: { flag: '--plan-selector', env: 'DRAINFLOW_PLAN_SELECTOR', emptyIsUnset: true },
  maxEvictionsPerSecond: {
    flag: '--max-evictions-per-second',
    env: 'DRAINFLOW_MAX_EVICTIONS_PER_SECOND',
    emptyIsUnset: true,
  },
  resyncSeconds: { flag: '--resync-seconds', env: 'DRAINFLOW_RESYNC_SECONDS' },
  orphanSweepSeconds: { flag: '--orphan-sweep-seconds', env: 'DRAINFLOW_ORPHAN_SWEEP_SECONDS' },
} as const satisfies Record<string, SettingSource>;

/** A key of {@link SETTINGS}. */
export type SettingKey = keyof typeof SETTINGS;

/** How messages name a setting: `--temporal-address / TEMPORAL_ADDRESS`. */
export function settingName(key: SettingKey): string {
  const s: SettingSource = SETTINGS[key];
  return [s.flag, s.env].filter(Boolean).join(' / ');
}

/** Log levels of pino, lowest first (`silent`: none). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

const EMPTY = 'must not be empty: unset the variable to use the default, or give a value';
const MAX_EVICTIONS_MESSAGE = 'must be a positive number of eviction calls per second, e.g. 5 or 0.5';
const RESYNC_MESSAGE = 'must be a whole number of seconds from 1 to 86400, e.g. 60';

/** Default period of the operator's resync of plans that expect a running workflow, seconds. */
export const DEFAULT_RESYNC_SECONDS = 60;

/**
 * Default period of the operator's sweep for orphans (workflows and node claims of plans that no
 * longer exist, src/operator/orphans.ts), seconds: one visibility list and one node list per sweep.
 */
export const DEFAULT_ORPHAN_SWEEP_SECONDS = 120;

/** A whole number of seconds from 1 to 86400 given as a string, `fallback` when absent. */
function periodSeconds(fallback: number) {
  return z
    .string()
    .superRefine((v, ctx) => {
      const ok = /^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= 86_400;
      if (!ok) ctx.addIssue({ code: 'custom', message: v === '' ? EMPTY : `${RESYNC_MESSAGE}, got "${v}"` });
    })
    .transform(Number)
    .default(fallback);
}

/** A TCP port 0-65535 (0: any free port) given as a decimal string or a number. */
const port = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const s = String(v).trim();
  if (s === '') {
    ctx.addIssue({ code: 'custom', message: EMPTY });
    return z.NEVER;
  }
  const n = /^\d{1,5}$/.test(s) ? Number(s) : NaN;
  if (!(n >= 0 && n <= 65535)) {
    ctx.addIssue({ code: 'custom', message: `must be a port number 0-65535, got "${s}"` });
    return z.NEVER;
  }
  return n;
});

/**
 * Why `address` is not a gRPC `host:port` (host name, IPv4, or `[IPv6]`; port 1-65535), or
 * undefined when it is one.
 */
export function addressProblem(address: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address))
    return 'must be host:port without a scheme, e.g. 127.0.0.1:7233';
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/.exec(address);
  if (!m) return 'must be host:port, e.g. 127.0.0.1:7233';
  const p = Number(m[2]);
  if (p < 1 || p > 65535) return `port ${m[2]} is out of range 1-65535`;
  return undefined;
}

const address = z
  .string()
  .superRefine((a, ctx) => {
    const problem = a === '' ? EMPTY : addressProblem(a);
    if (problem) ctx.addIssue({ code: 'custom', message: `${problem} (got "${a}")` });
  })
  .default('127.0.0.1:7233');

/** A non-empty string (an empty variable of a setting with a default is refused). */
const nonEmpty = z.string().min(1, EMPTY);

/**
 * The task queue, one rule for `drainflow run` and the CLI: non-empty, default `drainflow`. The
 * plan commands talk to the task queue Temporal records for the plan's workflow, yet refuse a bad
 * DRAINFLOW_TASK_QUEUE as `run` does, so one environment works for both or fails for both.
 */
const taskQueue = nonEmpty.default(DEFAULT_TASK_QUEUE);

/** Name: DNS-1123 label-ish part of a label key or a label value (at most 63 characters). */
const LABEL_NAME = /^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$/;
/** Prefix of a label key: a DNS subdomain (at most 253 characters). */
const LABEL_PREFIX = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

function labelKeyOk(key: string): boolean {
  const slash = key.lastIndexOf('/');
  if (slash < 0) return LABEL_NAME.test(key);
  return LABEL_PREFIX.test(key.slice(0, slash)) && LABEL_NAME.test(key.slice(slash + 1));
}

/**
 * Parses a label selector string in the grammar of `labels.Parse`
 * (k8s.io/apimachinery/pkg/labels/selector.go; kubectl's `-l`): requirements separated by commas,
 * each `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (v1,v2)` or
 * `key notin (v1,v2)`; keys are `[prefix/]name`, values names or empty.
 *
 * @returns the `metav1.LabelSelector`, or the problem that makes `text` none, e.g.
 *   `"Team/x" is not a label key`.
 */
export function parseLabelSelectorText(text: string): { selector: LabelSelector } | { problem: string } {
  const problem = (p: string) => ({ problem: p });
  if (text.trim() === '') return problem('must not be empty');
  // Split at commas outside parentheses.
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) return problem('has a ")" without "("');
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (depth !== 0) return problem('has a "(" without ")"');
  parts.push(cur);
  const matchLabels: Record<string, string> = {};
  const matchExpressions: NonNullable<LabelSelector['matchExpressions']> = [];
  for (const raw of parts) {
    const req = raw.trim();
    if (req === '') return problem('has an empty requirement (two commas, or a comma at an end)');
    const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(req);
    const eq = /^([^\s=!]+)\s*(==|=|!=)\s*(\S*)$/.exec(req);
    const exists = /^(!?)\s*([^\s=!(),]+)$/.exec(req);
    const key = set?.[1] ?? eq?.[1] ?? exists?.[2];
    if (key === undefined)
      return problem(
        `"${req}" is not a requirement (key, !key, key=value, key!=value, key in (a,b), key notin (a,b))`,
      );
    if (!labelKeyOk(key)) return problem(`"${key}" is not a label key`);
    if (set) {
      const values = set[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      if (values.length === 0) return problem(`"${req}" needs at least one value`);
      const bad = values.find((v) => !LABEL_NAME.test(v));
      if (bad !== undefined) return problem(`"${bad}" is not a label value`);
      matchExpressions.push({ key, operator: set[2] === 'in' ? 'In' : 'NotIn', values });
    } else if (eq) {
      const value = eq[3]!;
      if (value !== '' && !LABEL_NAME.test(value)) return problem(`"${value}" is not a label value`);
      if (eq[2] === '!=') matchExpressions.push({ key, operator: 'NotIn', values: [value] });
      else matchLabels[key] = value;
    } else matchExpressions.push({ key, operator: exists![1] ? 'DoesNotExist' : 'Exists' });
  }
  return {
    selector: {
      ...(Object.keys(matchLabels).length ? { matchLabels } : {}),
      ...(matchExpressions.length ? { matchExpressions } : {}),
    },
  };
}

/**
 * Why `selector` is not a Kubernetes label selector string ({@link parseLabelSelectorText}), or
 * undefined when it is one. The API server would refuse a bad one on the operator's first list,
 * after start; this refuses it at start.
 */
export function labelSelectorProblem(selector: string): string | undefined {
  const parsed = parseLabelSelectorText(selector);
  return 'problem' in parsed ? parsed.problem : undefined;
}

/** TLS to Temporal: file paths (PEM) and the server name to verify. */
const TlsSchema = z
  .object({
    cert: z.string().optional(),
    key: z.string().optional(),
    ca: z.string().optional(),
    serverName: z.string().optional(),
  })
  .refine(
    (t) => Boolean(t.cert) === Boolean(t.key),
    'a client certificate and its key must be given together',
  );

/** The settings that reach Temporal, shared by `drainflow run` and the CLI. */
const temporalShape = {
  temporalAddress: address,
  temporalNamespace: nonEmpty.default('default'),
  /** (m)TLS; undefined: TLS only when an API key is set, with the system CAs. */
  tls: TlsSchema.optional(),
  apiKey: z.string().optional(),
};

/** Schema of the configuration of `drainflow run`. */
export const RunConfigSchema = z
  .object({
    mode: z.enum(['local', 'in-cluster']).describe('local: kubeconfig; in-cluster: the pod service account'),
    kubeconfig: z.string().optional(),
    ...temporalShape,
    taskQueue,
    temporalUiUrl: z
      .string()
      .refine((u) => /^https?:\/\/[^\s/]+/.test(u) && URL.canParse(u), {
        message: 'must be an http(s) URL, e.g. https://cloud.temporal.io',
      })
      .optional(),
    operatorPort: port.default(8080),
    workerPort: port.default(8081),
    logLevel: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
    identity: nonEmpty.default(`${hostname()}-${process.pid}`),
    leaseNamespace: nonEmpty.default('default'),
    leaderElection: z.boolean().default(true),
    planSelector: z
      .string()
      .superRefine((sel, ctx) => {
        const problem = labelSelectorProblem(sel);
        if (problem)
          ctx.addIssue({
            code: 'custom',
            message: `must be a label selector such as drainflow.dev/team=infra or env!=prod: ${problem}`,
          });
      })
      .optional(),
    /** Eviction calls per second on the eviction task queue, enforced by the Temporal server. Unset: no limit. */
    maxEvictionsPerSecond: z.coerce
      .number({ error: MAX_EVICTIONS_MESSAGE })
      .positive(MAX_EVICTIONS_MESSAGE)
      .optional(),
    /**
     * Every this many seconds the operator asks Temporal about each plan whose phase still expects a
     * running workflow, so a workflow terminated, failed, timed out or cancelled behind the plan's back
     * is noticed without any change to the plan (one describe call per such plan and period).
     */
    resyncSeconds: periodSeconds(DEFAULT_RESYNC_SECONDS),
    /**
     * Every this many seconds (and once when it starts leading) the operator looks for workflows on
     * its task queue and node claims whose plan no longer exists, ends them and hands the nodes back
     * (src/operator/orphans.ts).
     */
    orphanSweepSeconds: periodSeconds(DEFAULT_ORPHAN_SWEEP_SECONDS),
  })
  .strict();
/** Validated configuration of `drainflow run`. */
export type RunConfig = z.infer<typeof RunConfigSchema>;

/** Schema of the configuration of the CLI plan commands. */
export const CliConfigSchema = z
  .object({
    /** Undefined: the kubeconfig's default loading ($KUBECONFIG, then ~/.kube/config). */
    kubeconfig: z.string().optional(),
    ...temporalShape,
    /** Checked by the rule of `drainflow run` (DRAINFLOW_TASK_QUEUE; no flag), see {@link taskQueue}. */
    taskQueue,
  })
  .strict();
/** Validated configuration of the CLI plan commands. */
export type CliConfig = z.infer<typeof CliConfigSchema>;

/** What both `drainflow run` and the CLI need to reach Temporal. */
export type TemporalSettings = Pick<RunConfig, 'temporalAddress' | 'temporalNamespace' | 'tls' | 'apiKey'>;

/** Flags shared by `drainflow run` and the CLI (undefined = take the environment). */
export interface ConnectionFlags {
  kubeconfig?: string;
  temporalAddress?: string;
  temporalNamespace?: string;
  temporalTlsCert?: string;
  temporalTlsKey?: string;
  temporalTlsCa?: string;
  temporalTlsServerName?: string;
}

/** Flags of `drainflow run` that map onto the config (undefined = take the environment). */
export interface RunFlags extends ConnectionFlags {
  mode?: string;
  taskQueue?: string;
  operatorPort?: string;
  workerPort?: string;
  logLevel?: string;
  leaseNamespace?: string;
  leaderElection?: boolean;
  planSelector?: string;
  maxEvictionsPerSecond?: string;
  resyncSeconds?: string;
  orphanSweepSeconds?: string;
}

/** The value of a setting: its flag, else its variable (empty → unset for optional settings). */
function pick(key: SettingKey, flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag !== undefined) return flag;
  const s: SettingSource = SETTINGS[key];
  const v = s.env ? env[s.env] : undefined;
  if (v === undefined || (v === '' && s.emptyIsUnset)) return undefined;
  return v;
}

/** The Temporal part of the raw configuration, from flags and environment. */
function rawTemporal(flags: ConnectionFlags, env: NodeJS.ProcessEnv) {
  const tls = {
    cert: pick('tlsCert', flags.temporalTlsCert, env),
    key: pick('tlsKey', flags.temporalTlsKey, env),
    ca: pick('tlsCa', flags.temporalTlsCa, env),
    serverName: pick('tlsServerName', flags.temporalTlsServerName, env),
  };
  return {
    temporalAddress: pick('temporalAddress', flags.temporalAddress, env),
    temporalNamespace: pick('temporalNamespace', flags.temporalNamespace, env),
    tls: Object.values(tls).some((v) => v !== undefined) ? tls : undefined,
    apiKey: pick('apiKey', undefined, env),
  };
}

/** Config key (first path element) → setting, for the keys whose name differs. */
const TLS_KEYS: Record<string, SettingKey> = {
  cert: 'tlsCert',
  key: 'tlsKey',
  ca: 'tlsCa',
  serverName: 'tlsServerName',
};

/**
 * Parses `raw` with `schema`. `envOnly`: settings named by their variable alone (the command has no
 * flag for them). @throws Error with one line per bad setting, naming it.
 */
function parseSettings<S extends z.ZodType>(
  schema: S,
  raw: object,
  envOnly: ReadonlySet<SettingKey> = new Set(),
): z.infer<S> {
  const res = schema.safeParse(JSON.parse(JSON.stringify(raw)));
  if (res.success) return res.data;
  const lines = res.error.issues.map((i) => {
    const [first, second] = i.path.map(String);
    let name: string;
    if (first === 'tls')
      name =
        second && TLS_KEYS[second]
          ? settingName(TLS_KEYS[second])
          : `${settingName('tlsCert')}, ${settingName('tlsKey')}`;
    else if (first && envOnly.has(first as SettingKey))
      name = (SETTINGS[first as SettingKey] as SettingSource).env ?? first;
    else if (first && first in SETTINGS) name = settingName(first as SettingKey);
    else name = first ?? '(configuration)';
    return `invalid setting ${name}: ${i.message}`;
  });
  throw new Error(lines.join('\n'));
}

/**
 * Builds and validates the configuration of `drainflow run`: flags win over environment,
 * environment over defaults. Reads no file: `checkTemporalFiles` (src/shared/temporal-connection.ts)
 * and {@link kubeConfigFor} do, at start.
 * @throws Error with one line per bad setting, naming the flag or variable.
 */
export function loadConfig(flags: RunFlags, env: NodeJS.ProcessEnv = process.env): RunConfig {
  const raw = {
    mode: flags.mode ?? env.DRAINFLOW_MODE ?? 'local',
    kubeconfig: pick('kubeconfig', flags.kubeconfig, env),
    ...rawTemporal(flags, env),
    taskQueue: pick('taskQueue', flags.taskQueue, env),
    temporalUiUrl: pick('temporalUiUrl', undefined, env),
    operatorPort: pick('operatorPort', flags.operatorPort, env),
    workerPort: pick('workerPort', flags.workerPort, env),
    logLevel: pick('logLevel', flags.logLevel, env),
    identity: pick('identity', undefined, env),
    leaseNamespace: pick('leaseNamespace', flags.leaseNamespace, env),
    leaderElection: flags.leaderElection,
    planSelector: pick('planSelector', flags.planSelector, env),
    maxEvictionsPerSecond: pick('maxEvictionsPerSecond', flags.maxEvictionsPerSecond, env),
    resyncSeconds: pick('resyncSeconds', flags.resyncSeconds, env),
    orphanSweepSeconds: pick('orphanSweepSeconds', flags.orphanSweepSeconds, env),
  };
  const cfg = parseSettings(RunConfigSchema, raw);
  if (cfg.mode === 'local' && !cfg.kubeconfig) {
    throw new Error(`invalid setting ${settingName('kubeconfig')}: required with --mode local`);
  }
  return cfg;
}

/**
 * Builds and validates the configuration of the CLI plan commands, with the same Temporal
 * settings (address, namespace, TLS, API key) and the same rules as `drainflow run`.
 * @throws Error with one line per bad setting, naming the flag or variable.
 */
export function loadCliConfig(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): CliConfig {
  return parseSettings(
    CliConfigSchema,
    {
      kubeconfig: pick('kubeconfig', flags.kubeconfig, env),
      ...rawTemporal(flags, env),
      taskQueue: pick('taskQueue', undefined, env),
    },
    new Set<SettingKey>(['taskQueue']),
  );
}

/**
 * The KubeConfig for the configured mode, reusing its API server connections (see
 * src/k8s/connection-pool.ts). @throws Error when the kubeconfig cannot be read.
 */
export function kubeConfigFor(cfg: Pick<RunConfig, 'mode' | 'kubeconfig'>): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (cfg.mode === 'in-cluster') kc.loadFromCluster();
    else kc.loadFromFile(cfg.kubeconfig!);
  } catch (err) {
    throw new Error(
      `invalid setting ${settingName('kubeconfig')}: cannot read ${cfg.kubeconfig}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return reuseConnections(kc);
}
