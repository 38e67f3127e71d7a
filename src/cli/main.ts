/**
 * The `drainflow` command line: `run` (operator and/or worker) and the plan commands
 * (`status`, `pause`, `resume`, `abort`, `release`, `watch`), plus `demo`.
 */
import { Command, Option } from 'commander';
import { run } from './run.js';

const program = new Command();
program.name('drainflow').description('Durable, PodDisruptionBudget-aware node drains on Temporal').showHelpAfterError();

program
  .command('run')
  .description('run the operator and the worker (or one of them)')
  .option('--operator', 'run only the operator')
  .option('--worker', 'run only the worker')
  .addOption(new Option('--mode <mode>', 'how to reach Kubernetes').choices(['local', 'in-cluster']))
  .option('--kubeconfig <path>', 'kubeconfig file (default $KUBECONFIG)')
  .option('--temporal-address <host:port>', 'Temporal frontend (default $TEMPORAL_ADDRESS or 127.0.0.1:7233)')
  .option('--temporal-namespace <ns>', 'Temporal namespace (default $TEMPORAL_NAMESPACE or default)')
  .option('--task-queue <name>', 'task queue (default $DRAINFLOW_TASK_QUEUE or drainflow)')
  .option('--operator-port <port>', 'operator /healthz /readyz /metrics port (default 8080)')
  .option('--worker-port <port>', 'worker /healthz /readyz /metrics port (default 8081)')
  .option('--lease-namespace <ns>', 'namespace of the leader-election Lease (default $POD_NAMESPACE or default)')
  .option('--no-leader-election', 'do not take the Lease (single replica)')
  .option('--log-level <level>', 'trace, debug, info, warn, error')
  .action(async (opts) => {
    await run(opts);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(`drainflow: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
