/**
 * One connection factory to Temporal for the worker, the operator and the CLI alike
 * ({@link temporalConnection}, {@link temporalNativeConnection}), with the same TLS and API key
 * settings (src/shared/settings.ts). TLS files are read and checked at start; a connection that
 * fails says which setting to change, with the cause a TLS handshake names.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import type { NativeConnection } from '@temporalio/worker';
import { Connection, type TLSConfig } from '@temporalio/client';
import { settingName, type TemporalSettings } from './settings.js';

/** Reads one PEM file of a TLS setting and checks that it holds what the setting needs. */
function readPem(key: 'tlsCa' | 'tlsCert' | 'tlsKey', path: string): Buffer {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new Error(`invalid setting ${settingName(key)}: cannot read ${path}: ${e.code ?? e.message}`, {
      cause: err,
    });
  }
  try {
    if (key === 'tlsKey') createPrivateKey(buf);
    else new X509Certificate(buf);
  } catch (err) {
    const what = key === 'tlsKey' ? 'a PEM private key' : 'a PEM certificate';
    throw new Error(`invalid setting ${settingName(key)}: ${path} is not ${what}`, { cause: err });
  }
  return buf;
}

/** Options both Temporal connections take: address, TLS and API key. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | true;
  apiKey?: string;
}

/**
 * The connection options for `s`, reading and checking the TLS files (call it at start, so a
 * missing or bad file fails before anything runs). TLS is on when any TLS setting is given, and
 * with an API key (Temporal Cloud requires TLS with API keys), with the system CAs unless
 * TEMPORAL_TLS_CA names a CA bundle.
 * @throws Error naming the setting of a file that cannot be read or is not PEM.
 */
export function temporalConnectionOptions(s: TemporalSettings): TemporalConnectionOptions {
  const opts: TemporalConnectionOptions = { address: s.temporalAddress };
  if (s.apiKey) opts.apiKey = s.apiKey;
  if (s.tls) {
    const t = s.tls;
    opts.tls = {
      ...(t.serverName ? { serverNameOverride: t.serverName } : {}),
      ...(t.ca ? { serverRootCACertificate: readPem('tlsCa', t.ca) } : {}),
      ...(t.cert && t.key
        ? { clientCertPair: { crt: readPem('tlsCert', t.cert), key: readPem('tlsKey', t.key) } }
        : {}),
    };
  } else if (s.apiKey) opts.tls = true;
  return opts;
}

/** Checks the TLS files of `s` at start. @throws Error naming the setting of a bad file. */
export function checkTemporalFiles(s: TemporalSettings): void {
  temporalConnectionOptions(s);
}

/**
 * Certificate verification failures of node's TLS (OpenSSL codes): the server's certificate is
 * not signed by a trusted CA.
 */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/**
 * After a failed connection: what a TLS handshake with the server says, as a hint naming the
 * setting to change ('' when it says nothing more). The gRPC libraries report a failed handshake
 * as "failed to connect before the deadline" or a transport error; node's TLS names the cause.
 */
export async function diagnoseTls(opts: TemporalConnectionOptions, timeoutMs = 3000): Promise<string> {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(opts.address);
  if (!m) return '';
  const host = m[1] ?? m[2]!;
  const tls = opts.tls === true ? {} : opts.tls;
  const ipHost = /^[\d.]+$/.test(host) || host.includes(':');
  const servername = tls?.serverNameOverride ?? (ipHost ? undefined : host);
  const result = await new Promise<{ ok: boolean; code?: string; message?: string }>((resolve) => {
    const sock = tlsConnect({
      host,
      port: Number(m[3]),
      ...(servername ? { servername } : {}),
      ALPNProtocols: ['h2'],
      // Without TLS settings, only find out whether the server speaks TLS at all.
      rejectUnauthorized: tls !== undefined,
      ...(tls?.serverRootCACertificate ? { ca: Buffer.from(tls.serverRootCACertificate) } : {}),
      ...(tls?.clientCertPair
        ? { cert: Buffer.from(tls.clientCertPair.crt), key: Buffer.from(tls.clientCertPair.key) }
        : {}),
    });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ ok: false, code: 'TIMEOUT' });
    }, timeoutMs);
    sock.once('secureConnect', () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ ok: true });
    });
    sock.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ ok: false, ...(err.code ? { code: err.code } : {}), message: err.message });
    });
  });
  if (tls === undefined) {
    return result.ok
      ? 'the server speaks TLS: set TEMPORAL_TLS_CA / --temporal-tls-ca (its CA), or the client certificate, to connect with TLS'
      : '';
  }
  if (result.ok || result.code === 'TIMEOUT') return '';
  if (result.code && UNTRUSTED.has(result.code))
    return `TLS: the server's certificate is not trusted (${result.message}): set ${settingName('tlsCa')} to the CA that signed it`;
  if (result.code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `TLS: ${result.message}: set ${settingName('tlsServerName')} to a name in the server's certificate`;
  if (result.code === 'ECONNRESET' || result.code === 'EPROTO')
    return `TLS handshake failed (${result.message}): does the server speak TLS, and does it require a client certificate (${settingName('tlsCert')}, ${settingName('tlsKey')})?`;
  return result.message ? `TLS handshake failed: ${result.message}` : '';
}

/** Runs `connect`, turning a failure into an error naming the Temporal settings and the TLS cause. */
async function reach<T>(opts: TemporalConnectionOptions, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (err) {
    const hint = await diagnoseTls(opts).catch(() => '');
    const where = `(${settingName('temporalAddress')}, TLS: TEMPORAL_TLS_*): ${(err as Error).message}`;
    throw new Error(
      hint
        ? `cannot reach Temporal at ${opts.address} ${where}; ${hint}`
        : `the Temporal server at ${opts.address} is unreachable ${where}`,
      { cause: err },
    );
  }
}

/**
 * Client connection to Temporal (operator, CLI), with the TLS and API key settings.
 * @param connectTimeout how long to try, e.g. `'5s'` (default: the SDK's 10 s).
 * @throws Error naming the setting of a bad TLS file, or naming the address and the TLS cause
 *   when the server cannot be reached.
 */
export async function temporalConnection(s: TemporalSettings, connectTimeout?: string): Promise<Connection> {
  const opts = temporalConnectionOptions(s);
  return reach(opts, () =>
    Connection.connect({
      address: opts.address,
      ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
      ...(connectTimeout ? { connectTimeout } : {}),
    }),
  );
}

/**
 * Worker connection to Temporal (native, for the SDK's Rust core), with the same settings.
 * @throws like {@link temporalConnection}.
 */
export async function temporalNativeConnection(s: TemporalSettings): Promise<NativeConnection> {
  const opts = temporalConnectionOptions(s);
  // Loaded here, not at the top: @temporalio/worker (native core) takes seconds to load, and the
  // CLI plan commands, which import this module too, never need it.
  const { NativeConnection } = await import('@temporalio/worker');
  return reach(opts, () =>
    NativeConnection.connect({
      address: opts.address,
      ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
      ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
    }),
  );
}
