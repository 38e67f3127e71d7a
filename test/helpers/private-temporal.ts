/**
 * A Temporal dev server of one test's own, so that a test may kill it (`kill -9`) and start it
 * again without touching the stack's shared server, and so still run in the parallel e2e lane.
 *
 * It is the stack's pinned `temporal` CLI (scripts/stack/build.sh) started as scripts/stack/stack.sh
 * starts the shared one (`server start-dev`, the same dynamic config values and search
 * attributes), but on free ports of its own, with its own SQLite file in a temporary directory,
 * and without the Web UI (`--headless`: nothing in a test opens it). A restart reuses the ports and
 * the file, so the workflows, their timers and their task queues are where the kill left them, and
 * workers and clients connected to the address reach it again.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheDir, stackVersions } from './binaries.js';
import { waitFor } from './k8s.js';
import { freePorts } from './processes.js';

const run = promisify(execFile);

/** The search attributes the workflows upsert, as stack.sh registers them (`--search-attribute`). */
const SEARCH_ATTRIBUTES = [
  'DrainflowPlan=Keyword',
  'DrainflowNodes=KeywordList',
  'DrainflowPhase=Keyword',
  'DrainflowReason=Keyword',
];

/** How long a start waits for `temporal operator cluster health` to answer SERVING, ms. */
const HEALTHY_WITHIN_MS = 60_000;

/** Path of the pinned `temporal` CLI. @throws Error when the stack was not built. */
export function temporalCliPath(): string {
  if (process.env.DRAINFLOW_TEMPORAL_CLI) return process.env.DRAINFLOW_TEMPORAL_CLI;
  const v = stackVersions();
  return join(
    cacheDir(),
    `temporal-${v.TEMPORAL_CLI_VERSION}-ts${v.TEMPORAL_TEST_SERVER_VERSION}`,
    'bin',
    'temporal',
  );
}

/** A running (or killed) private Temporal dev server. */
export interface PrivateTemporal {
  /** `127.0.0.1:<port>` of its frontend (gRPC), the same across restarts. */
  readonly address: string;
  /** Its SQLite file, the same across restarts. */
  readonly dbFile: string;
  /** Its log file (every start appends). */
  readonly logFile: string;
  /** The pid of the server process now running, `undefined` after a kill or stop. */
  pid(): number | undefined;
  /** Sends `signal` (`SIGKILL` for a crash) and waits until the process has exited. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports and file; resolves once it is healthy. */
  restart(): Promise<void>;
  /** Stops it (SIGTERM, SIGKILL after 10 s) and removes its directory unless `keepFiles`. */
  stop(opts?: { keepFiles?: boolean }): Promise<void>;
}

/**
 * Starts a private Temporal dev server (see the module comment) and waits until
 * `temporal operator cluster health` reports it serving (at most 60 s).
 * @throws Error with the tail of its log when it exits or does not get healthy in time.
 */
export async function startPrivateTemporal(): Promise<PrivateTemporal> {
  const cli = temporalCliPath();
  const dir = mkdtempSync(join(tmpdir(), 'drainflow-temporal-'));
  const dbFile = join(dir, 'temporal.db');
  const logFile = join(dir, 'temporal.log');
  const [port, httpPort, metricsPort] = await freePorts(3);
  const address = `127.0.0.1:${port}`;
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    dbFile,
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--metrics-port',
    String(metricsPort),
    '--headless',
    '--namespace',
    'default',
    ...SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', a]),
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    '--dynamic-config-value',
    'history.defaultWorkflowTaskTimeout="30s"',
    '--log-level',
    'warn',
  ];
  let proc: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const tail = () => readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');

  async function start(): Promise<void> {
    const fd = openSync(logFile, 'a');
    const p = spawn(cli, args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    proc = p;
    let gone = false;
    exited = new Promise((resolve) =>
      p.once('exit', () => {
        gone = true;
        resolve();
      }),
    );
    try {
      await waitFor(
        async () => {
          if (gone) throw new Error('exited');
          const { stdout } = await run(cli, ['operator', 'cluster', 'health', '--address', address], {
            timeout: 5000,
          });
          return /SERVING/.test(stdout);
        },
        HEALTHY_WITHIN_MS,
        { what: `private Temporal at ${address} healthy`, intervalMs: 250 },
      );
    } catch (err) {
      p.kill('SIGKILL');
      throw new Error(`${String(err)}\n${tail()}`, { cause: err });
    }
  }

  async function kill(signal: NodeJS.Signals): Promise<void> {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    p.kill(signal);
    await exited;
    proc = undefined;
  }

  await start();
  return {
    address,
    dbFile,
    logFile,
    pid: () => proc?.pid,
    kill,
    restart: start,
    async stop({ keepFiles = false } = {}) {
      const p = proc;
      if (p) {
        const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
        await kill('SIGTERM');
        clearTimeout(timer);
      }
      if (!keepFiles) rmSync(dir, { recursive: true, force: true });
    },
  };
}
