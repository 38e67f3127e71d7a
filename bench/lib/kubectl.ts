/**
 * The `kubectl drain` side of a run: the stack's own kubectl, one process per node
 * (`kubectl drain NODE --ignore-daemonsets --delete-emptydir-data --timeout=Ns`), at most
 * `parallel` processes at once (the plan's maxUnavailableNodes), each under GNU time for its CPU
 * seconds and peak RSS, as the bench's user `bench-kubectl` when given its kubeconfig. Scenarios
 * with cordon AllAtStart run `kubectl cordon` over all targets first.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlPath } from '../../test/helpers/binaries.js';
import { mapLimit } from './util.js';

const GNU_TIME = '/usr/bin/time';
const run = promisify(execFile);

/** What one `kubectl drain` process did. */
export interface KubectlNodeResult {
  node: string;
  exitCode: number | null;
  seconds: number;
  /** "evicting pod" lines: eviction calls kubectl says it sent. */
  attempts: number;
  /** "will retry after" lines: 429 answers kubectl reports. */
  tooManyRequests: number;
  cpuSeconds?: number;
  peakRssMb?: number;
  /** Last lines of output when it failed. */
  tail?: string;
}

export interface KubectlRunResult {
  startMs: number;
  endMs: number;
  nodes: KubectlNodeResult[];
  ok: boolean;
}

function drainOne(
  node: string,
  timeoutSeconds: number,
  logDir: string,
  env: NodeJS.ProcessEnv,
): Promise<KubectlNodeResult> {
  const timeFile = join(logDir, `time-${node}-${Date.now()}.txt`);
  const kubectlArgs = [
    'drain',
    node,
    '--ignore-daemonsets',
    '--delete-emptydir-data',
    `--timeout=${timeoutSeconds}s`,
  ];
  const useTime = existsSync(GNU_TIME);
  const [cmd, args] = useTime
    ? [GNU_TIME, ['-f', '%U %S %M', '-o', timeFile, kubectlPath(), ...kubectlArgs]]
    : [kubectlPath(), kubectlArgs];
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args as string[], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.once('close', (code) => {
      writeFileSync(join(logDir, `kubectl-drain-${node}.log`), out);
      const res: KubectlNodeResult = {
        node,
        exitCode: code,
        seconds: (Date.now() - started) / 1000,
        attempts: (out.match(/^evicting pod /gm) ?? []).length,
        tooManyRequests: (out.match(/will retry after/g) ?? []).length,
      };
      if (useTime && existsSync(timeFile)) {
        const m = /(\d+\.\d+) (\d+\.\d+) (\d+)\s*$/.exec(readFileSync(timeFile, 'utf8'));
        if (m) {
          res.cpuSeconds = Number(m[1]) + Number(m[2]);
          res.peakRssMb = Number(m[3]) / 1024;
        }
        rmSync(timeFile, { force: true });
      }
      if (code !== 0) res.tail = out.split('\n').slice(-8).join('\n');
      resolve(res);
    });
  });
}

/**
 * Drains `nodes`, `parallel` at a time. With `cordonFirst`, one `kubectl cordon` over every node runs
 * first (its time counts in the run); a failure of it is thrown.
 */
export async function kubectlDrain(
  nodes: string[],
  parallel: number,
  timeoutSeconds: number,
  logDir: string,
  cordonFirst = false,
  kubeconfig?: string,
): Promise<KubectlRunResult> {
  const env = kubeconfig ? { ...process.env, KUBECONFIG: kubeconfig } : process.env;
  const startMs = Date.now();
  if (cordonFirst) await run(kubectlPath(), ['cordon', ...nodes], { env, maxBuffer: 64 << 20 });
  const results = await mapLimit(nodes, parallel, (node) => drainOne(node, timeoutSeconds, logDir, env));
  return { startMs, endMs: Date.now(), nodes: results, ok: results.every((r) => r.exitCode === 0) };
}
