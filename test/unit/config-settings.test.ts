/**
 * The settings module (src/shared/settings.ts): every bad setting of `drainflow run` and of the CLI
 * plan commands fails at start with a message naming its flag / variable — a table of bad
 * settings — and the good ones (defaults, empty optional variables, flags over variables) load.
 * "At start" is what `drainflow run` and the CLI do before connecting: validate the flags and
 * variables, read the TLS files, read the kubeconfig.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  addressProblem,
  kubeConfigFor,
  labelSelectorProblem,
  loadCliConfig,
  loadConfig,
  type ConnectionFlags,
  type RunFlags,
} from '../../src/shared/settings.js';
import { checkTemporalFiles, temporalConnectionOptions } from '../../src/shared/temporal-connection.js';

let dir: string;
let kubeconfig: string;
let ca: string;
let cert: string;
let key: string;
let garbage: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'drainflow-settings-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
      '',
    ].join('\n'),
  );
  // A self-signed certificate and its key, PEM (openssl is a prerequisite of the local stack).
  ca = join(dir, 'ca.crt');
  key = join(dir, 'tls.key');
  cert = ca;
  execFileSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    ca,
    '-days',
    '1',
    '-subj',
    '/CN=drainflow-test',
  ]);
  garbage = join(dir, 'garbage.pem');
  writeFileSync(garbage, 'not a PEM file\n');
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** What `drainflow run` checks at start. */
function startRun(flags: RunFlags, env: NodeJS.ProcessEnv): void {
  const cfg = loadConfig(flags, env);
  checkTemporalFiles(cfg);
  kubeConfigFor(cfg);
}
/** What the CLI plan commands check at start. */
function startCli(flags: ConnectionFlags, env: NodeJS.ProcessEnv): void {
  checkTemporalFiles(loadCliConfig(flags, env));
}

interface BadRow {
  what: string;
  /** Which starts: run, cli or both. */
  of: ('run' | 'cli')[];
  flags?: RunFlags;
  env?: NodeJS.ProcessEnv | (() => NodeJS.ProcessEnv);
  /** The exact start of the message: the setting's name. */
  names: string;
  /** The name in the CLI's message when it differs (a setting the plan commands have no flag for). */
  cliNames?: string;
  /** What the message says about it. */
  says: RegExp;
}

const both: ('run' | 'cli')[] = ['run', 'cli'];
const BAD: BadRow[] = [
  // A missing or bad TLS file
  {
    what: 'missing CA file',
    of: both,
    env: { TEMPORAL_TLS_CA: '/nonexistent/ca.crt' },
    names: '--temporal-tls-ca / TEMPORAL_TLS_CA',
    says: /cannot read \/nonexistent\/ca\.crt: ENOENT/,
  },
  {
    what: 'missing CA file given by flag',
    of: both,
    flags: { temporalTlsCa: '/nonexistent/flag-ca.crt' },
    names: '--temporal-tls-ca / TEMPORAL_TLS_CA',
    says: /cannot read \/nonexistent\/flag-ca\.crt/,
  },
  {
    what: 'CA file that is no certificate',
    of: both,
    env: () => ({ TEMPORAL_TLS_CA: garbage }),
    names: '--temporal-tls-ca / TEMPORAL_TLS_CA',
    says: /is not a PEM certificate/,
  },
  {
    what: 'missing client certificate',
    of: both,
    env: () => ({ TEMPORAL_TLS_CERT: '/nonexistent/tls.crt', TEMPORAL_TLS_KEY: key }),
    names: '--temporal-tls-cert / TEMPORAL_TLS_CERT',
    says: /cannot read \/nonexistent\/tls\.crt/,
  },
  {
    what: 'client key that is no key',
    of: both,
    env: () => ({ TEMPORAL_TLS_CERT: cert, TEMPORAL_TLS_KEY: garbage }),
    names: '--temporal-tls-key / TEMPORAL_TLS_KEY',
    says: /is not a PEM private key/,
  },
  {
    what: 'client certificate without its key',
    of: both,
    env: () => ({ TEMPORAL_TLS_CERT: cert }),
    names: '--temporal-tls-cert / TEMPORAL_TLS_CERT, --temporal-tls-key / TEMPORAL_TLS_KEY',
    says: /must be given together/,
  },
  // A bad port
  {
    what: 'port out of range',
    of: ['run'],
    flags: { operatorPort: '70000' },
    names: '--operator-port / DRAINFLOW_OPERATOR_PORT',
    says: /must be a port number 0-65535, got "70000"/,
  },
  {
    what: 'port that is no number',
    of: ['run'],
    env: { DRAINFLOW_WORKER_PORT: '80a' },
    names: '--worker-port / DRAINFLOW_WORKER_PORT',
    says: /must be a port number/,
  },
  {
    what: 'negative port',
    of: ['run'],
    flags: { workerPort: '-1' },
    names: '--worker-port / DRAINFLOW_WORKER_PORT',
    says: /must be a port number/,
  },
  // An empty variable (of a setting with a default: unset it to get the default)
  {
    what: 'empty port variable',
    of: ['run'],
    env: { DRAINFLOW_OPERATOR_PORT: '' },
    names: '--operator-port / DRAINFLOW_OPERATOR_PORT',
    says: /must not be empty/,
  },
  {
    what: 'empty address variable',
    of: both,
    env: { TEMPORAL_ADDRESS: '' },
    names: '--temporal-address / TEMPORAL_ADDRESS',
    says: /must not be empty/,
  },
  {
    what: 'empty namespace variable',
    of: both,
    env: { TEMPORAL_NAMESPACE: '' },
    names: '--temporal-namespace / TEMPORAL_NAMESPACE',
    says: /must not be empty/,
  },
  {
    what: 'empty task queue variable',
    of: both,
    env: { DRAINFLOW_TASK_QUEUE: '' },
    names: '--task-queue / DRAINFLOW_TASK_QUEUE',
    cliNames: 'DRAINFLOW_TASK_QUEUE',
    says: /must not be empty/,
  },
  {
    what: 'empty resync variable',
    of: ['run'],
    env: { DRAINFLOW_RESYNC_SECONDS: '' },
    names: '--resync-seconds / DRAINFLOW_RESYNC_SECONDS',
    says: /must not be empty/,
  },
  {
    what: 'resync of zero seconds',
    of: ['run'],
    flags: { resyncSeconds: '0' },
    names: '--resync-seconds / DRAINFLOW_RESYNC_SECONDS',
    says: /must be a whole number of seconds from 1 to 86400, e\.g\. 60, got "0"/,
  },
  {
    what: 'orphan sweep of zero seconds',
    of: ['run'],
    env: { DRAINFLOW_ORPHAN_SWEEP_SECONDS: '0' },
    names: '--orphan-sweep-seconds / DRAINFLOW_ORPHAN_SWEEP_SECONDS',
    says: /must be a whole number of seconds from 1 to 86400, e\.g\. 60, got "0"/,
  },
  {
    what: 'resync that is no whole number',
    of: ['run'],
    env: { DRAINFLOW_RESYNC_SECONDS: '1.5' },
    names: '--resync-seconds / DRAINFLOW_RESYNC_SECONDS',
    says: /whole number of seconds/,
  },
  {
    what: 'empty log level variable',
    of: ['run'],
    env: { DRAINFLOW_LOG_LEVEL: '' },
    names: '--log-level / DRAINFLOW_LOG_LEVEL',
    says: /must be one of trace, debug, info, warn, error, fatal, silent/,
  },
  // A bad address
  {
    what: 'address without port',
    of: both,
    env: { TEMPORAL_ADDRESS: 'temporal.example.com' },
    names: '--temporal-address / TEMPORAL_ADDRESS',
    says: /must be host:port, e.g. 127.0.0.1:7233 \(got "temporal.example.com"\)/,
  },
  {
    what: 'address with a scheme',
    of: both,
    flags: { temporalAddress: 'https://temporal.example.com:7233' },
    names: '--temporal-address / TEMPORAL_ADDRESS',
    says: /without a scheme/,
  },
  {
    what: 'address with port 0',
    of: both,
    flags: { temporalAddress: '127.0.0.1:0' },
    names: '--temporal-address / TEMPORAL_ADDRESS',
    says: /port 0 is out of range 1-65535/,
  },
  {
    what: 'address with a space',
    of: both,
    flags: { temporalAddress: 'temporal :7233' },
    names: '--temporal-address / TEMPORAL_ADDRESS',
    says: /must be host:port/,
  },
  {
    what: 'UI URL that is no URL',
    of: ['run'],
    env: { TEMPORAL_UI_URL: 'temporal-ui:8080' },
    names: 'TEMPORAL_UI_URL',
    says: /URL/i,
  },
  // A bad selector
  {
    what: 'selector with an empty requirement',
    of: ['run'],
    flags: { planSelector: 'team=infra,,env=prod' },
    names: '--plan-selector / DRAINFLOW_PLAN_SELECTOR',
    says: /must be a label selector .*: has an empty requirement/,
  },
  {
    what: 'selector with a space in a value',
    of: ['run'],
    env: { DRAINFLOW_PLAN_SELECTOR: 'team=in fra' },
    names: '--plan-selector / DRAINFLOW_PLAN_SELECTOR',
    says: /must be a label selector/,
  },
  {
    what: 'selector with a bad key',
    of: ['run'],
    flags: { planSelector: '-team=infra' },
    names: '--plan-selector / DRAINFLOW_PLAN_SELECTOR',
    says: /"-team" is not a label key/,
  },
  {
    what: 'set selector without values',
    of: ['run'],
    flags: { planSelector: 'env in ()' },
    names: '--plan-selector / DRAINFLOW_PLAN_SELECTOR',
    says: /needs at least one value/,
  },
  {
    what: 'selector with an unclosed parenthesis',
    of: ['run'],
    flags: { planSelector: 'env in (prod' },
    names: '--plan-selector / DRAINFLOW_PLAN_SELECTOR',
    says: /"\(" without "\)"/,
  },
  // The rest of `drainflow run`
  {
    what: 'unknown mode',
    of: ['run'],
    flags: { mode: 'cloud' },
    names: '--mode / DRAINFLOW_MODE',
    says: /local|in-cluster/,
  },
  {
    what: 'no kubeconfig in local mode',
    of: ['run'],
    env: { KUBECONFIG: '' },
    names: '--kubeconfig / KUBECONFIG',
    says: /required with --mode local/,
  },
  {
    what: 'missing kubeconfig file',
    of: ['run'],
    flags: { kubeconfig: '/nonexistent/kubeconfig' },
    names: '--kubeconfig / KUBECONFIG',
    says: /cannot read \/nonexistent\/kubeconfig/,
  },
  {
    what: 'eviction rate of zero',
    of: ['run'],
    env: { DRAINFLOW_MAX_EVICTIONS_PER_SECOND: '0' },
    names: '--max-evictions-per-second / DRAINFLOW_MAX_EVICTIONS_PER_SECOND',
    says: /must be a positive number/,
  },
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('settings: every bad setting fails at start with a message naming it', () => {
  for (const row of BAD) {
    for (const of of row.of) {
      it(`${of}: ${row.what}`, () => {
        const env = { KUBECONFIG: kubeconfig, ...(typeof row.env === 'function' ? row.env() : row.env) };
        const start = () => (of === 'run' ? startRun(row.flags ?? {}, env) : startCli(row.flags ?? {}, env));
        assert.throws(start, (err: Error) => {
          const names = of === 'cli' && row.cliNames ? row.cliNames : row.names;
          assert.match(err.message, new RegExp(`^invalid setting ${escape(names)}: `), err.message);
          assert.match(err.message, row.says, err.message);
          return true;
        });
      });
    }
  }

  it('names each of several bad settings on its own line', () => {
    assert.throws(
      () =>
        loadConfig(
          { operatorPort: 'x', temporalAddress: 'nohost' },
          { KUBECONFIG: kubeconfig, TEMPORAL_NAMESPACE: '' },
        ),
      (err: Error) => {
        const lines = err.message.split('\n');
        assert.equal(lines.length, 3, err.message);
        for (const name of ['--temporal-address', '--temporal-namespace', '--operator-port'])
          assert.ok(
            lines.some((l) => l.startsWith(`invalid setting ${name} / `)),
            `${name} in:\n${err.message}`,
          );
        return true;
      },
    );
  });
});

describe('settings: one rule for run and the CLI', () => {
  // Every variable both read: empty, and a value. Both load it or both refuse it.
  const shared = [
    'TEMPORAL_ADDRESS',
    'TEMPORAL_NAMESPACE',
    'DRAINFLOW_TASK_QUEUE',
    'TEMPORAL_TLS_CA',
    'TEMPORAL_TLS_CERT',
    'TEMPORAL_TLS_KEY',
    'TEMPORAL_TLS_SERVER_NAME',
    'TEMPORAL_API_KEY',
  ];
  const outcome = (start: () => void): string => {
    try {
      start();
      return 'loads';
    } catch (err) {
      return `refused: ${(err as Error).message.replace(/^invalid setting [^:]*: /, '')}`;
    }
  };
  for (const name of shared) {
    for (const value of ['', ' ', 'temporal.example.com:7233']) {
      it(`${name}=${JSON.stringify(value)}`, () => {
        const env = { KUBECONFIG: kubeconfig, [name]: value };
        assert.equal(
          outcome(() => startCli({}, env)),
          outcome(() => startRun({}, env)),
        );
      });
    }
  }
});

describe('settings: what loads', () => {
  it('defaults, with empty optional variables meaning "not used" (as in the deployed ConfigMap)', () => {
    const env = {
      KUBECONFIG: kubeconfig,
      TEMPORAL_TLS_CERT: '',
      TEMPORAL_TLS_KEY: '',
      TEMPORAL_TLS_CA: '',
      TEMPORAL_TLS_SERVER_NAME: '',
      TEMPORAL_API_KEY: '',
      TEMPORAL_UI_URL: '',
      DRAINFLOW_PLAN_SELECTOR: '',
      DRAINFLOW_MAX_EVICTIONS_PER_SECOND: '',
    };
    const run = loadConfig({}, env);
    assert.equal(run.temporalAddress, '127.0.0.1:7233');
    assert.equal(run.temporalNamespace, 'default');
    assert.equal(run.taskQueue, 'drainflow');
    assert.equal(run.operatorPort, 8080);
    assert.equal(run.workerPort, 8081);
    assert.equal(run.logLevel, 'info');
    assert.equal(run.tls, undefined);
    assert.equal(run.apiKey, undefined);
    assert.equal(run.planSelector, undefined);
    assert.equal(run.resyncSeconds, 60);
    assert.equal(run.orphanSweepSeconds, 120);
    const cli = loadCliConfig({}, env);
    assert.deepEqual(cli, {
      kubeconfig,
      temporalAddress: '127.0.0.1:7233',
      temporalNamespace: 'default',
      taskQueue: 'drainflow',
    });
    assert.deepEqual(temporalConnectionOptions(cli), { address: '127.0.0.1:7233' });
  });

  it('flags win over variables, and the CLI reads the same Temporal settings as run', () => {
    const env = {
      KUBECONFIG: kubeconfig,
      TEMPORAL_ADDRESS: 'env-host:7233',
      TEMPORAL_NAMESPACE: 'env-ns',
      TEMPORAL_TLS_CA: '/nonexistent/env-ca.crt',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      TEMPORAL_API_KEY: 'key-1',
      DRAINFLOW_OPERATOR_PORT: '9090',
    };
    const flags = { temporalAddress: '[::1]:7300', temporalTlsCa: ca };
    const run = loadConfig({ ...flags, operatorPort: '0' }, env);
    const cli = loadCliConfig(flags, env);
    for (const c of [run, cli]) {
      assert.equal(c.temporalAddress, '[::1]:7300');
      assert.equal(c.temporalNamespace, 'env-ns');
      assert.deepEqual(c.tls, { ca, serverName: 'temporal.internal' });
      assert.equal(c.apiKey, 'key-1');
      const opts = temporalConnectionOptions(c);
      assert.equal(opts.apiKey, 'key-1');
      assert.ok(opts.tls && opts.tls !== true);
      assert.equal(opts.tls.serverNameOverride, 'temporal.internal');
      assert.ok(opts.tls.serverRootCACertificate?.length, 'the CA file is read');
    }
    assert.equal(run.operatorPort, 0, 'port 0 (any free port) is allowed');
  });

  it('an API key alone turns TLS on with the system CAs; a client certificate and key are read', () => {
    assert.deepEqual(
      temporalConnectionOptions(loadCliConfig({}, { TEMPORAL_API_KEY: 'k', TEMPORAL_ADDRESS: 'a.b:7233' })),
      { address: 'a.b:7233', apiKey: 'k', tls: true },
    );
    const opts = temporalConnectionOptions(loadCliConfig({ temporalTlsCert: cert, temporalTlsKey: key }, {}));
    assert.ok(opts.tls && opts.tls !== true && opts.tls.clientCertPair?.crt.length);
  });
});

describe('addressProblem and labelSelectorProblem', () => {
  it('accepts host names, IPv4 and bracketed IPv6 with a port', () => {
    for (const a of [
      '127.0.0.1:7233',
      'temporal-frontend.temporal.svc:7233',
      '[::1]:7233',
      'ns.acct.tmprl.cloud:7233',
    ])
      assert.equal(addressProblem(a), undefined, a);
  });
  it('accepts the selectors of labels.Parse', () => {
    for (const s of [
      'team=infra',
      'team==infra',
      'env!=prod',
      'drainflow.dev/e2e-cli=cli-abc123',
      'canary',
      '!canary',
      'env in (prod, staging),!legacy',
      'tier notin (frontend)',
      'team=infra, env!=prod',
      'empty=',
    ])
      assert.equal(labelSelectorProblem(s), undefined, s);
  });
  it('refuses what the API server would', () => {
    for (const s of ['', ' ', 'a=b,', 'a b', 'a=b=c', 'a in (b', 'a)', 'Team/x=y', 'a in (b c)', 'a=-b'])
      assert.ok(labelSelectorProblem(s), s);
  });
});
