/**
 * `npm run bench -- [--scenario NAME] [--repeat K] [--out FILE]`: drains the same workload with
 * drainflow and with `kubectl drain`, alternating, K times per scenario, and writes the results as
 * JSON, bench/RESULTS.md and bench/results.png. Needs the local stack (`npm run stack -- up`).
 * See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { Client, Connection } from '@temporalio/client';
import { stackVersions } from '../test/helpers/binaries.js';
import { clients } from '../test/helpers/k8s.js';
import { kubectlPath } from '../test/helpers/binaries.js';
import { readdirSync } from 'node:fs';
import { SCENARIOS } from './scenarios.js';
import {
  summarise,
  writeChart,
  writeMarkdown,
  type ResultsFile,
  type ScenarioResults,
  type SweepResults,
} from './lib/report.js';
import type { DrainflowRuntime } from './lib/drainflow.js';
import { runValid, type RunResult, type Tool } from './lib/runs.js';
import { auditSetup, auditWorks, type AuditSetup } from './lib/audit.js';
import { log, sleep } from './lib/util.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(benchDir, '..');

/** Loads the stack's environment (`stack.sh env`) when KUBECONFIG / TEMPORAL_ADDRESS are unset. */
function loadStackEnv(): void {
  const stack = join(repoRoot, 'scripts', 'stack', 'stack.sh');
  try {
    execFileSync('bash', [stack, 'status'], { stdio: 'ignore' });
  } catch {
    throw new Error('the local stack is not running: start it with `npm run stack -- up` first');
  }
  const out = execFileSync('bash', [stack, 'env'], { encoding: 'utf8' });
  for (const line of out.split('\n')) {
    const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (!m || m[1] === 'PATH') continue;
    process.env[m[1]!] ??= m[2]!;
  }
}

/**
 * Installs the MaintenancePlan CRD of this checkout from deploy/crds/ (server-side apply, taking
 * over fields other managers set): the API server fills a plan's defaults from the CRD, so a CRD
 * left on the stack by an older checkout would make the bench measure that checkout's defaults
 * (e.g. its eviction.maxConcurrentPerNode).
 */
async function ensureCrd(): Promise<void> {
  const dir = join(repoRoot, 'deploy', 'crds');
  for (const f of readdirSync(dir).filter((x) => /\.ya?ml$/.test(x))) {
    if (!/kind:\s*CustomResourceDefinition/.test(readFileSync(join(dir, f), 'utf8'))) continue;
    execFileSync(kubectlPath(), ['apply', '--server-side', '--force-conflicts', '-f', join(dir, f)], {
      env: process.env,
      stdio: 'inherit',
    });
  }
  // A CRD created a moment ago has no status.conditions yet, and kubectl wait refuses that at once
  // (".status.conditions accessor error: <nil>") instead of waiting: try again for up to 60 s.
  const giveUpAt = Date.now() + 60_000;
  for (;;) {
    try {
      execFileSync(
        kubectlPath(),
        [
          'wait',
          '--for=condition=Established',
          '--timeout=60s',
          'crd/maintenanceplans.maintenance.drainflow.dev',
        ],
        { env: process.env, stdio: ['ignore', 'inherit', 'pipe'] },
      );
      return;
    } catch (err) {
      if (Date.now() >= giveUpAt) throw err;
      await sleep(500);
    }
  }
}

function machine(): ResultsFile['machine'] {
  return {
    nproc: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    kernel: release(),
  };
}

function versions(): Record<string, string> {
  const v = stackVersions();
  const out: Record<string, string> = {
    kubernetes: v.K8S_VERSION ?? '?',
    etcd: v.ETCD_VERSION ?? '?',
    kwok: v.KWOK_VERSION ?? '?',
    'temporal CLI (dev server)': v.TEMPORAL_CLI_VERSION ?? '?',
    node: process.version,
  };
  try {
    out.drainflow = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
  } catch {
    // not a checkout
  }
  return out;
}

const list = (v: string, prev: string[] = []) => [
  ...prev,
  ...v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
];

const program = new Command()
  .name('bench')
  .description('drainflow vs kubectl drain on the local stack')
  .option(
    '--scenario <name>',
    `scenario(s), repeatable or comma-separated: ${Object.keys(SCENARIOS).join(', ')} (default free,tight,fleet)`,
    list,
  )
  .option('--repeat <k>', 'repetitions per scenario (drainflow and kubectl alternate)', '3')
  .option(
    '--out <file>',
    'JSON results (merged with the scenarios already in it)',
    join(benchDir, 'results.json'),
  )
  .option('--markdown <file>', 'Markdown report', join(benchDir, 'RESULTS.md'))
  .option('--chart <file>', 'PNG chart', join(benchDir, 'results.png'))
  .option('--tools <list>', 'drainflow,kubectl or one of them', 'drainflow,kubectl')
  .option(
    '--sweep <values>',
    'also run the sweep scenario with drainflow only, for each eviction.maxConcurrentPerNode value (e.g. 1,4,16)',
  )
  .option('--sweep-scenario <name>', 'scenario of --sweep', 'free')
  .option('--only-sweep', 'run only the sweep')
  .option('--split', 'run the drainflow operator and worker as two processes (peak RSS of each)')
  .option('--runtime <how>', 'dist (compiled, plain node, as the image runs it; built first) or tsx', 'dist')
  .option('--cordon <policy>', "PerNode or AllAtStart for every scenario (default: the scenario's own)")
  .option(
    '--blocked-seconds <s>',
    'deadline of the blocked scenario (plan drainTimeoutSeconds, kubectl drain --timeout) [600]',
  )
  .option('--fresh', 'discard the results already in --out')
  .option('--report-only', 'run nothing: regenerate the Markdown and the chart from --out')
  .option('--log-dir <dir>', 'drainflow process logs', join(tmpdir(), 'drainflow-bench'));

async function main(): Promise<void> {
  const opts = program.parse(process.argv).opts<{
    scenario?: string[];
    repeat: string;
    out: string;
    markdown: string;
    chart: string;
    tools: string;
    sweep?: string;
    sweepScenario: string;
    onlySweep?: boolean;
    split?: boolean;
    cordon?: string;
    runtime: string;
    fresh?: boolean;
    blockedSeconds?: string;
    reportOnly?: boolean;
    logDir: string;
  }>();
  const notesFile = join(benchDir, 'notes.md');
  const notes = () => (existsSync(notesFile) ? readFileSync(notesFile, 'utf8').trimEnd().split('\n') : []);
  if (opts.reportOnly) {
    const res = JSON.parse(readFileSync(opts.out, 'utf8')) as ResultsFile;
    // Medians anew from the runs, so figures added since a run was recorded show for it too.
    for (const sc of Object.values(res.scenarios)) sc.summary = summarise(sc.runs);
    for (const v of res.sweep?.values ?? []) v.summary = summarise(v.runs);
    writeMarkdown(opts.markdown, res, notes());
    await writeChart(opts.chart, res);
    log(`wrote ${opts.markdown}, ${opts.chart} from ${opts.out}`);
    return;
  }
  const repeat = Number(opts.repeat);
  if (!Number.isInteger(repeat) || repeat < 1) throw new Error('--repeat must be a positive integer');
  const names = opts.onlySweep ? [] : (opts.scenario ?? ['free', 'tight', 'fleet']);
  for (const n of [...names, ...(opts.sweep ? [opts.sweepScenario] : [])]) {
    if (!SCENARIOS[n]) throw new Error(`unknown scenario ${n}; known: ${Object.keys(SCENARIOS).join(', ')}`);
  }
  const tools = list(opts.tools) as Tool[];
  if (tools.length === 0 || tools.some((t) => t !== 'drainflow' && t !== 'kubectl'))
    throw new Error('--tools takes drainflow and/or kubectl');
  if (opts.blockedSeconds !== undefined) {
    const secs = Number(opts.blockedSeconds);
    if (!Number.isInteger(secs) || secs < 10) throw new Error('--blocked-seconds takes an integer >= 10');
    SCENARIOS.blocked = { ...SCENARIOS.blocked!, timeoutSeconds: secs };
  }
  const sweepValues = opts.sweep ? list(opts.sweep).map(Number) : [];
  if (sweepValues.some((v) => !Number.isInteger(v) || v < 1))
    throw new Error('--sweep takes positive integers');

  loadStackEnv();
  mkdirSync(opts.logDir, { recursive: true });
  const c = clients();
  await ensureCrd();
  // Requests per client need the API server's audit log and the tools' own users (stack.sh up).
  let audit: AuditSetup | undefined = auditSetup();
  if (audit && !(await auditWorks(audit))) audit = undefined;
  if (audit) log(`audit log ${audit.logFile}: the tools run as users bench-drainflow and bench-kubectl`);
  else
    log(
      'warning: the API server keeps no audit log of the bench users (a stack started by an older stack.sh: ' +
        'restart it with `npm run stack -- down && npm run stack -- up` when nobody else uses it): ' +
        'the tools run with the admin kubeconfig and requests per client are not measured',
    );
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'default' });

  const previous: ResultsFile | undefined =
    !opts.fresh && existsSync(opts.out)
      ? (JSON.parse(readFileSync(opts.out, 'utf8')) as ResultsFile)
      : undefined;
  const results: ResultsFile = {
    generatedAt: new Date().toISOString(),
    machine: machine(),
    versions: versions(),
    scenarios: { ...(previous?.scenarios ?? {}) },
    ...(previous?.sweep ? { sweep: previous.sweep } : {}),
  };
  const save = async () => {
    results.generatedAt = new Date().toISOString();
    writeFileSync(opts.out, JSON.stringify(results, null, 2) + '\n');
    writeMarkdown(opts.markdown, results, notes());
    await writeChart(opts.chart, results);
  };
  if (opts.cordon !== undefined && opts.cordon !== 'PerNode' && opts.cordon !== 'AllAtStart')
    throw new Error('--cordon takes PerNode or AllAtStart');
  if (opts.runtime !== 'dist' && opts.runtime !== 'tsx') throw new Error('--runtime takes dist or tsx');
  if (opts.runtime === 'dist' && tools.includes('drainflow')) {
    log('building dist/ (npm run build)');
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: join(benchDir, '..'), stdio: 'inherit' });
  }
  const runOpts = {
    runtime: opts.runtime as DrainflowRuntime,
    logDir: opts.logDir,
    split: Boolean(opts.split),
    ...(audit ? { audit } : {}),
    ...(opts.cordon ? { cordon: opts.cordon as 'PerNode' | 'AllAtStart' } : {}),
  };

  try {
    for (const name of names) {
      const s = SCENARIOS[name]!;
      // With --tools naming one side only, the other side's runs already in --out are kept, so
      // drainflow can be re-measured against the same kubectl runs (each run keeps its own date).
      const kept = (previous?.scenarios[name]?.runs ?? []).filter((r) => !tools.includes(r.tool));
      const entry: ScenarioResults = {
        scenario: s,
        date: new Date().toISOString(),
        repeat,
        tools: [...new Set([...tools, ...kept.map((r) => r.tool)])],
        runs: [...kept],
        summary: kept.length > 0 ? summarise(kept) : {},
      };
      for (let rep = 1; rep <= repeat; rep++) {
        for (const tool of tools) {
          entry.runs.push(await runValid(c, client, s, tool, rep, runOpts));
          entry.summary = summarise(entry.runs);
          results.scenarios[name] = entry;
          await save();
        }
      }
      log(`${name}: ${JSON.stringify(entry.summary)}`);
    }
    if (sweepValues.length > 0) {
      const s = SCENARIOS[opts.sweepScenario]!;
      const sweep: SweepResults = {
        scenario: s.name,
        date: new Date().toISOString(),
        repeat,
        values: sweepValues.map((v) => ({ maxConcurrentPerNode: v, runs: [] as RunResult[], summary: {} })),
      };
      for (let rep = 1; rep <= repeat; rep++) {
        for (const v of sweep.values) {
          v.runs.push(
            await runValid(c, client, s, 'drainflow', rep, {
              ...runOpts,
              maxConcurrentPerNode: v.maxConcurrentPerNode,
            }),
          );
          v.summary = summarise(v.runs);
          results.sweep = sweep;
          await save();
        }
      }
    }
    await save();
    log(`wrote ${opts.out}, ${opts.markdown}, ${opts.chart}`);
  } finally {
    await connection.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
