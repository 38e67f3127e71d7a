// test-lane: parallel
/**
 * drainflow against a Temporal server reached over mutual TLS, on the real stack. The Temporal
 * dev server has no TLS flags (`temporal server start-dev --help`), so the test puts a
 * TLS-terminating TCP proxy (node `tls`, ALPN h2, client certificate required) in front of the
 * stack's dev server, with a CA, a server and a client certificate it makes with openssl.
 *
 * `drainflow run` (worker: the SDK's native connection; operator: the client connection) and the
 * CLI plan commands reach Temporal only through the proxy, with the same settings (variables or
 * flags). Without the CA, with a wrong server name or without TLS, the CLI fails and says which
 * setting to change. The kubectl plugin (`kubectl drainflow`) runs the same CLI.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { kubectlPath } from '../helpers/binaries.js';
import { uniqueName, waitFor, type Clients } from '../helpers/k8s.js';
import { stackClients } from '../helpers/operator-harness.js';
import { nodePath, startRunProcess, type DrainflowProcess } from '../helpers/processes.js';
import { blockedPlan, root, runCommand, type BlockedPlan } from './cli-fixtures.js';

const RUN_LABEL = 'drainflow.dev/e2e-cli-tls';
const SERVER_NAME = 'temporal.drainflow.test';

/** Makes a CA and a server and a client certificate signed by it (EC P-256, valid one day). */
function makePki(
  dir: string,
): Record<'ca' | 'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> {
  const p = (f: string) => join(dir, f);
  const ossl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ossl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '1',
    '-subj',
    '/CN=drainflow e2e CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  for (const [name, ext] of [
    ['server', `subjectAltName=DNS:${SERVER_NAME}\nextendedKeyUsage=serverAuth\n`],
    ['client', 'subjectAltName=DNS:drainflow-client\nextendedKeyUsage=clientAuth\n'],
  ] as const) {
    writeFileSync(p(`${name}.ext`), ext);
    ossl('req', ...ec, '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', `/CN=${name}`);
    ossl(
      'x509',
      '-req',
      '-in',
      p(`${name}.csr`),
      '-CA',
      p('ca.crt'),
      '-CAkey',
      p('ca.key'),
      '-CAcreateserial',
      '-out',
      p(`${name}.crt`),
      '-days',
      '1',
      '-extfile',
      p(`${name}.ext`),
    );
  }
  return {
    ca: p('ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    clientCert: p('client.crt'),
    clientKey: p('client.key'),
  };
}

describe('drainflow over mutual TLS to Temporal (TLS proxy in front of the dev server)', () => {
  let c: Clients;
  let dir: string;
  let pki: ReturnType<typeof makePki>;
  let proxy: TlsServer | undefined;
  let proxyAddress: string;
  /** TLS sessions the proxy accepted (client certificate verified). */
  let sessions = 0;
  let proc: DrainflowProcess | undefined;
  let plan: BlockedPlan | undefined;
  const run = uniqueName('cli-tls');
  /** The environment of a user with the TLS settings, Temporal reachable only through the proxy. */
  let tlsEnv: NodeJS.ProcessEnv;

  before(async () => {
    c = await stackClients();
    const [upstreamHost, upstreamPort] = process.env.TEMPORAL_ADDRESS!.split(':') as [string, string];
    dir = mkdtempSync(join(tmpdir(), 'drainflow-tls-'));
    pki = makePki(dir);
    const server = createTlsServer(
      {
        key: readFileSync(pki.serverKey),
        cert: readFileSync(pki.serverCert),
        ca: readFileSync(pki.ca),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (tls) => {
        sessions++;
        const up = netConnect(Number(upstreamPort), upstreamHost);
        tls.pipe(up).pipe(tls);
        tls.on('error', () => up.destroy());
        up.on('error', () => tls.destroy());
      },
    );
    proxy = server;
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxyAddress = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    tlsEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: proxyAddress,
      TEMPORAL_TLS_CA: pki.ca,
      TEMPORAL_TLS_CERT: pki.clientCert,
      TEMPORAL_TLS_KEY: pki.clientKey,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
    };
    proc = await startRunProcess({ run, label: RUN_LABEL, env: tlsEnv });
  });

  after(async () => {
    await plan?.cleanup();
    await proc?.stop('SIGTERM');
    // Only a proxy that exists: a promise waiting for close() of none would never settle.
    const server = proxy;
    if (server) await new Promise((resolve) => server.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the worker and the operator drive a plan through the proxy; status, pause and kubectl drainflow succeed with the CA', async () => {
    const before = sessions;
    plan = await blockedPlan(c, 'cli-tls', { [RUN_LABEL]: run });
    assert.ok(sessions > 0, 'drainflow run connected through the TLS proxy');

    const st = await runCommand(['status', plan.name], { env: tlsEnv });
    assert.equal(st.code, 0, st.err);
    assert.match(st.out, new RegExp(`MaintenancePlan ${plan.name}: Running`));
    assert.match(st.out, /blocked by .*PodDisruptionBudget/);
    assert.doesNotMatch(st.out, /note:/, 'the live answer of the workflow, through the proxy');
    assert.ok(sessions > before, 'the CLI connected through the TLS proxy');

    // The same settings as flags.
    const flagsEnv: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: proxyAddress };
    const paused = await runCommand(
      [
        'pause',
        plan.name,
        '--temporal-tls-ca',
        pki.ca,
        '--temporal-tls-cert',
        pki.clientCert,
        '--temporal-tls-key',
        pki.clientKey,
        '--temporal-tls-server-name',
        SERVER_NAME,
      ],
      { env: flagsEnv },
    );
    assert.equal(paused.code, 0, paused.err);
    assert.match(paused.out, /pause: accepted by the workflow/);
    await waitFor(async () => (await plan!.read()).status?.phase === 'Paused', 30_000, {
      what: 'plan Paused',
    });

    // kubectl finds the plugin on PATH; the project's Node 24 first (the plugin runs under `env node`).
    const kubectl = kubectlPath();
    const pluginEnv = {
      ...tlsEnv,
      PATH: [join(root, 'bin'), dirname(nodePath()), process.env.PATH ?? ''].join(delimiter),
    };
    const list = await runCommand(['plugin', 'list'], { command: kubectl, env: pluginEnv });
    assert.match(list.out, /kubectl-drainflow/, list.out + list.err);
    const viaKubectl = await runCommand(['drainflow', 'status', plan.name], {
      command: kubectl,
      env: pluginEnv,
    });
    assert.equal(viaKubectl.code, 0, viaKubectl.err);
    assert.match(viaKubectl.out, new RegExp(`MaintenancePlan ${plan.name}: Paused`));
    const help = await runCommand(['drainflow', '--help'], { command: kubectl, env: pluginEnv });
    assert.match(help.out, /Usage: kubectl drainflow/);
    const unknown = await runCommand(['drainflow', 'status', 'no-such-plan-anywhere'], {
      command: kubectl,
      env: pluginEnv,
    });
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.err, /no MaintenancePlan named "no-such-plan-anywhere"/);
  });

  it('fails clearly without the CA, with a wrong server name, and without TLS', async () => {
    assert.ok(plan, 'the first test made the plan');
    const noCa = { ...tlsEnv };
    delete noCa.TEMPORAL_TLS_CA;
    const untrusted = await runCommand(['status', plan.name], { env: noCa });
    assert.equal(untrusted.code, 1, untrusted.out);
    assert.match(untrusted.err, new RegExp(`cannot reach Temporal at ${proxyAddress}`));
    assert.match(untrusted.err, /certificate is not trusted .*set --temporal-tls-ca \/ TEMPORAL_TLS_CA/);

    const wrongName = await runCommand(['status', plan.name], {
      env: { ...tlsEnv, TEMPORAL_TLS_SERVER_NAME: 'other.drainflow.test' },
    });
    assert.equal(wrongName.code, 1, wrongName.out);
    assert.match(wrongName.err, /--temporal-tls-server-name \/ TEMPORAL_TLS_SERVER_NAME/);

    const plain = await runCommand(['status', plan.name], {
      env: { ...process.env, TEMPORAL_ADDRESS: proxyAddress },
    });
    assert.equal(plain.code, 1, plain.out);
    assert.match(plain.err, /the server speaks TLS: set TEMPORAL_TLS_CA/);

    const missingCa = await runCommand(['status', plan.name], {
      env: { ...tlsEnv, TEMPORAL_TLS_CA: join(dir, 'nope.crt') },
    });
    assert.equal(missingCa.code, 1);
    assert.match(
      missingCa.err,
      /invalid setting --temporal-tls-ca \/ TEMPORAL_TLS_CA: cannot read .*nope\.crt: ENOENT/,
    );
    for (const r of [untrusted, wrongName, plain]) console.log(r.err.trim());
  });
});
