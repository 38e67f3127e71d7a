/**
 * The `drainflow` command line: `run` (operator and/or worker) and the plan commands
 * (`status`, `pause`, `resume`, `abort`, `release`, `approve`, `extend`, `watch`), plus `preflight` and `demo`.
 *
 * Start-up discipline: this module loads only commander and Node's own modules; each command
 * loads what it needs when it runs (`import()` in its action), so that `--help` and `--version`
 * load no client library, and the plan commands never load the worker's, preflight's or the
 * demo's modules (test/unit/cli-startup.test.ts checks the import graph).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Command, Option } from 'commander';
import type { ConnectionFlags } from '../shared/settings.js';
import type { CliContext } from './plans.js';

/**
 * Installed as the kubectl plugin `kubectl-drainflow` too (kubectl runs `kubectl-<name>` from PATH
 * for `kubectl <name>`): help then speaks of `kubectl drainflow`.
 */
const asKubectlPlugin = basename(process.argv[1] ?? '').startsWith('kubectl-');

/**
 * Flags that reach Temporal, the same for `drainflow run` and the plan commands (the variables are
 * read by src/shared/settings.ts; TEMPORAL_API_KEY has no flag so the key stays out of `ps`).
 */
function withTemporal(cmd: Command): Command {
  return cmd
    .option(
      '--temporal-address <host:port>',
      'Temporal frontend (default $TEMPORAL_ADDRESS or 127.0.0.1:7233)',
    )
    .option('--temporal-namespace <ns>', 'Temporal namespace (default $TEMPORAL_NAMESPACE or default)')
    .option('--temporal-tls-ca <file>', 'CA bundle (PEM) of the Temporal server (default $TEMPORAL_TLS_CA)')
    .option(
      '--temporal-tls-cert <file>',
      'client certificate (PEM) for mTLS, with --temporal-tls-key (default $TEMPORAL_TLS_CERT)',
    )
    .option('--temporal-tls-key <file>', 'key (PEM) of the client certificate (default $TEMPORAL_TLS_KEY)')
    .option(
      '--temporal-tls-server-name <name>',
      'server name to verify when it differs from the address host (default $TEMPORAL_TLS_SERVER_NAME)',
    );
}

/**
 * drainflow's version: of the nearest package.json named `drainflow` above this module (the checkout's
 * for src/cli, the image's /app/package.json for dist/cli); `unknown` when there is none. Never throws.
 */
function drainflowVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'drainflow' && pkg.version) return pkg.version;
    } catch {
      // no package.json here (or not JSON): look further up
    }
    if (dir.pathname === '/') return 'unknown';
  }
}

const program = new Command();
program
  .name(asKubectlPlugin ? 'kubectl drainflow' : 'drainflow')
  .description('Durable, PodDisruptionBudget-aware node drains on Temporal')
  .version(drainflowVersion())
  .showHelpAfterError();

withTemporal(
  program
    .command('run')
    .description('run the operator and the worker (or one of them)')
    .option('--operator', 'run only the operator')
    .option('--worker', 'run only the worker')
    .addOption(new Option('--mode <mode>', 'how to reach Kubernetes').choices(['local', 'in-cluster']))
    .option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG)'),
)
  .option('--task-queue <name>', 'task queue (default $DRAINFLOW_TASK_QUEUE or drainflow)')
  .option(
    '--operator-port <port>',
    'operator /healthz /readyz /metrics port (default $DRAINFLOW_OPERATOR_PORT or 8080)',
  )
  .option(
    '--worker-port <port>',
    'worker /healthz /readyz /metrics port (default $DRAINFLOW_WORKER_PORT or 8081)',
  )
  .option(
    '--lease-namespace <ns>',
    'namespace of the leader-election Lease (default $POD_NAMESPACE or default)',
  )
  .option('--no-leader-election', 'do not take the Lease (single replica)')
  .option(
    '--plan-selector <labels>',
    'act only on MaintenancePlans matching this label selector (default $DRAINFLOW_PLAN_SELECTOR: all)',
  )
  .option(
    '--max-evictions-per-second <n>',
    'cap on Eviction API calls per second across all workers of the task queue, enforced by Temporal (default $DRAINFLOW_MAX_EVICTIONS_PER_SECOND: no limit)',
  )
  .option(
    '--resync-seconds <n>',
    'how often the operator checks that the workflows of unfinished plans still run (default $DRAINFLOW_RESYNC_SECONDS or 60)',
  )
  .option(
    '--orphan-sweep-seconds <n>',
    'how often the operator ends the workflows and node claims of plans that no longer exist (default $DRAINFLOW_ORPHAN_SWEEP_SECONDS or 120)',
  )
  .option(
    '--log-level <level>',
    'trace, debug, info, warn, error, fatal or silent, for drainflow and the Temporal SDK (default $DRAINFLOW_LOG_LEVEL or info)',
  )
  .action(async (opts) => {
    // Loaded on use: the worker's modules (the SDK's native core, the workflow bundler) take
    // seconds to load, which the plan commands should not pay.
    const { run } = await import('./run.js');
    await run(opts);
  });

/** Connection flags shared by the plan commands. */
function withConnection(cmd: Command): Command {
  return withTemporal(
    cmd.option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG or ~/.kube/config)'),
  );
}
/** The validated settings of a plan command. @throws Error naming a bad setting. */
async function context(opts: ConnectionFlags): Promise<CliContext> {
  const { loadCliConfig } = await import('../shared/settings.js');
  return loadCliConfig(opts);
}

withConnection(
  program
    .command('status <plan>')
    .description("show a plan's progress (live from its workflow when running)"),
).action(async (name: string, opts) => {
  const [{ status }, { renderPlan }] = await Promise.all([import('./plans.js'), import('./render.js')]);
  const { plan, live, note, unreachable } = await status(await context(opts), name);
  console.log(
    renderPlan({ metadata: plan.metadata, spec: plan.spec, status: live ?? plan.status }, Date.now()),
  );
  if (unreachable) {
    // The written status is shown, but a Temporal that cannot be reached is a failure to fix.
    console.error(`drainflow: ${note}`);
    process.exitCode = 1;
  } else if (note) console.log(`  note: ${note}`);
});
for (const [action, help] of [
  ['pause', 'stop new evictions (in-flight calls finish; timers keep running)'],
  ['resume', 'continue a paused plan'],
  ['abort', 'stop evicting and hand back the nodes this plan cordoned (per spec.uncordon)'],
  ['release', 'maintenance is over: with uncordon OnRelease the nodes are uncordoned'],
] as const) {
  const cmd = withConnection(program.command(`${action} <plan>`).description(help));
  if (action === 'release')
    cmd.option(
      '--node <node>',
      'uncordon AfterEachNode: hand back this one node (once drained; at once when its hook failed, undrained after a failed beforeDrain)',
    );
  cmd.action(async (name: string, opts) => {
    const [{ control, phaseAfter, releaseNode }, { handBackWords, releaseNodeWords }] = await Promise.all([
      import('./plans.js'),
      import('./render-roll.js'),
    ]);
    if (action === 'release' && typeof opts.node === 'string') {
      const st = await releaseNode(await context(opts), name, opts.node);
      const n = st.nodes?.find((x) => x.name === opts.node);
      console.log(releaseNodeWords(name, opts.node, n));
      return;
    }
    const { status: st, by, uncordon, flag, taskQueue } = await control(await context(opts), name, action);
    if (by === 'spec') {
      console.log(
        `${action}: ${flag} written to plan ${name}; no worker is polling task queue "${taskQueue}", so its workflow acts on it when a worker runs there (drainflow run --worker --task-queue ${taskQueue}; plan phase ${st.phase ?? 'none yet'})`,
      );
      return;
    }
    if (by === 'operator') {
      console.log(
        st.phase === 'Aborted'
          ? `abort: the workflow of plan ${name} had closed without handing the nodes back; spec.abort is set and the operator handed them back: ${st.message ?? ''}`
          : `abort: the workflow of plan ${name} had closed without handing the nodes back; spec.abort is set, and the operator hands them back per spec.uncordon (phase ${st.phase ?? 'unknown'} so far: is the operator running? drainflow watch ${name})`,
      );
      return;
    }
    const then = action === 'release' || action === 'abort' ? handBackWords(action, uncordon) : '';
    const pending = phaseAfter(action, st.phase);
    console.log(
      pending
        ? `${action}: requested and accepted by the workflow of plan ${name}; it is still ${st.phase} while it winds down, and ends ${pending} (drainflow watch ${name})${then}`
        : `${action}: accepted by the workflow of plan ${name} (phase ${st.phase})${then}`,
    );
  });
}
withConnection(
  program
    .command('approve <plan>')
    .description(
      'spec.remedies.rolloutRestart: approve the rollout restart the plan proposes for a Deployment (the Remedy condition names it)',
    ),
)
  .requiredOption('--workload <namespace/name>', 'the Deployment, as the proposal names it')
  .option('--by <name>', 'who approves, recorded in the history and Events (default: your login name)')
  .action(async (name: string, opts) => {
    const [{ approveRemedy }, { userInfo }] = await Promise.all([import('./plans.js'), import('node:os')]);
    const by = typeof opts.by === 'string' ? opts.by : userInfo().username;
    const st = await approveRemedy(await context(opts), name, opts.workload, by);
    const c = st.conditions?.find((x) => x.type === 'Remedy');
    console.log(
      `approve: accepted by the workflow of plan ${name} (by ${by})${c ? `; ${c.reason}: ${c.message}` : ''}`,
    );
  });
withConnection(
  program
    .command('extend <plan>')
    .description(
      'give a Running plan, or one Blocked at its deadline (onDeadline Stop), a later deadline; a Blocked plan drains its nodes again, still cordoned and claimed',
    ),
)
  .option('--by <duration>', 'move the deadline this much later (Go units: 30m, 1h30m, 90s)')
  .option('--to <time>', 'the new deadline, RFC 3339 (2026-12-08T18:00:00Z)')
  .option('--as <name>', 'who extends, recorded in the history and Events (default: your login name)')
  .action(async (name: string, opts) => {
    const [{ CliError, durationSeconds, extendPlan }, { userInfo }] = await Promise.all([
      import('./plans.js'),
      import('node:os'),
    ]);
    if ((opts.by === undefined) === (opts.to === undefined))
      throw new CliError('give exactly one of --by <duration> and --to <RFC 3339 time>');
    const addSeconds = opts.by !== undefined ? durationSeconds(String(opts.by)) : undefined;
    if (opts.by !== undefined && addSeconds === undefined)
      throw new CliError(
        `--by must be a positive duration such as 30m, 1h30m or 90s (got ${String(opts.by)})`,
      );
    const who = typeof opts.as === 'string' ? opts.as : userInfo().username;
    const ask = addSeconds !== undefined ? { addSeconds } : { deadline: String(opts.to) };
    const st = await extendPlan(await context(opts), name, ask, who);
    console.log(
      `extend: accepted by the workflow of plan ${name} (by ${who}); deadline ${st.deadline ?? 'unknown'}, phase ${st.phase ?? 'unknown'}${st.message ? `: ${st.message}` : ''}`,
    );
  });
withConnection(
  program.command('watch <plan>').description('show the drain live until the plan reaches a final phase'),
)
  .option('--follow', 'keep watching after a final phase')
  .action(async (name: string, opts) => {
    const { watch } = await import('./plans.js');
    await watch(await context(opts), name, { follow: Boolean(opts.follow) });
  });

program
  .command('preflight')
  .description(
    "report what a drain of the nodes would evict, skip and be blocked by, with the API server's dry-run verdicts; creates, cordons and evicts nothing",
  )
  .option('--nodes <a,b>', 'the nodes, by name (spec.nodeNames)')
  .option(
    '--selector <k=v>',
    'the nodes, by label selector (spec.nodeSelector; k=v, k!=v, k in (a,b), k, !k)',
  )
  .option(
    '-f, --filename <plan.yaml>',
    'take the spec of this MaintenancePlan (or bare spec) file; flags override it',
  )
  .option('--ignore-daemonsets', 'skip DaemonSet pods (spec.podSelection.ignoreDaemonSets, default)')
  .option('--no-ignore-daemonsets', 'DaemonSet pods block the drain')
  .option('--delete-emptydir-data', 'evict pods with emptyDir volumes (spec.podSelection.deleteEmptyDirData)')
  .option('--force', 'evict pods no controller manages (spec.podSelection.force)')
  .option(
    '--pod-selector <k=v>',
    'only pods matching this selector are evicted (spec.podSelection.podSelector)',
  )
  .option('--no-dry-run', 'do not ask the API server for dry-run evictions')
  .addOption(
    new Option('-o, --output <format>', 'output format').choices(['text', 'json', 'yaml']).default('text'),
  )
  .option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG or ~/.kube/config)')
  .addHelpText(
    'after',
    '\nExit status: 0 every node can drain (NoBlockers); 2 a node has a blocker or a dry-run refusal\n' +
      '(BlockersFound); 3 a node could not be examined (PreflightIncomplete); 1 bad flags, a named node\n' +
      'that does not exist (a typo: nothing to examine), an unreadable kubeconfig or an unreachable cluster\n' +
      '(no report). The report is printed in every case but 1.',
  )
  .action(async (opts) => {
    const { formatPreflight, preflightExitCode, runPreflight } = await import('./preflight.js');
    const report = await runPreflight(opts);
    console.log(formatPreflight(report, String(opts.output)));
    process.exitCode = preflightExitCode(report);
  });

program
  .command('demo')
  .description('bring up the local stack, start drainflow, drain a realistic workload and show it live')
  .option('--nodes <n>', 'kwok nodes in the demo pool', '4')
  .option('--drain <n>', 'nodes to drain', '2')
  .option('--pods-per-node <n>', 'pods per node (about)', '6')
  .addOption(
    new Option('--pdb <tightness>', 'PodDisruptionBudget tightness')
      .choices(['none', 'loose', 'tight'])
      .default('tight'),
  )
  .option('--timeout <seconds>', 'plan drainTimeoutSeconds', '300')
  .option('--keep', 'keep the workload, the plan and drainflow running at the end')
  .option(
    '--replace',
    "remove an earlier demo's plan, namespace and nodes even while its drainflow still runs (without it a running demo is left alone)",
  )
  .option(
    '--rolling',
    'a rolling maintenance: uncordon AfterEachNode, one node at a time, an afterDrain Job hook per node',
  )
  .action(async (opts) => {
    const { demo } = await import('./demo.js');
    const { parseDemoNumbers } = await import('./demo-options.js');
    process.exitCode = await demo({
      ...parseDemoNumbers(opts),
      pdb: opts.pdb,
      keep: Boolean(opts.keep),
      replace: Boolean(opts.replace),
      rolling: Boolean(opts.rolling),
    });
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  const msg = err instanceof Error ? err.message : String(err);
  console.error(`drainflow: ${msg}`);
  process.exit(1);
});
