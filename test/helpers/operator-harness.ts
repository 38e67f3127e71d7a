/**
 * The operator + worker fixture of the end-to-end tests that run drainflow as real processes
 * (`drainflow run --operator` and `drainflow run --worker`) against the local stack, and the plan
 * helpers they share: plans written with kubectl and labelled for one run (the operator under test
 * selects them with `--plan-selector`), read back through the API, deleted through the operator's
 * finalizer (forced when that does not finish), and their Events removed at the end.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`. Without
 * KUBECONFIG / TEMPORAL_ADDRESS {@link requireEnv} fails with that instruction.
 */
import { execFileSync } from 'node:child_process';
import {
  CoordinationV1Api,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
} from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import {
  GROUP,
  PLURAL,
  VERSION,
  type MaintenancePlan,
  type MaintenancePlanSpecInput,
} from '../../src/api/plan.js';
import { kubectlPath } from './binaries.js';
import {
  applyCrds,
  clients,
  createNamespace,
  createNode,
  deleteNamespace,
  ignoreNotFound,
  uniqueName,
  waitFor,
  type Clients,
} from './k8s.js';
import { onFreePorts, startDrainflow, startWorkerProcess, type DrainflowProcess } from './processes.js';
import { createDirectPlan } from './direct-plan.js';

export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Label on a run's plans; the operator under test selects them with --plan-selector. */
export const RUN_LABEL = 'drainflow.dev/e2e-run';
/** Where the operator records the plans' Events. */
export const EVENT_NAMESPACE = 'default';
/** The operator's Lease (its default name). */
const LEASE_NAME = 'drainflow-operator';

/** The value of an environment variable the stack sets. @throws Error with the setup instructions. */
export function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) {
    throw new Error(
      `${name} is not set: these end-to-end tests need the local stack. Start it and load its environment first:\n` +
        '  bash scripts/stack/stack.sh up\n  eval "$(bash scripts/stack/stack.sh env)"',
    );
  }
  return v;
}

/**
 * The API clients of an e2e test that also needs Temporal, with this checkout's CRDs applied.
 * @throws Error with the setup instructions when TEMPORAL_ADDRESS is not set.
 */
export async function stackClients(): Promise<Clients> {
  requireEnv('TEMPORAL_ADDRESS');
  const c = clients();
  await applyCrds(c);
  return c;
}

/** Runs the project's kubectl; `input` goes to its stdin. @returns stdout. */
export function kubectl(args: string[], input?: string): string {
  return execFileSync(kubectlPath(), args, {
    encoding: 'utf8',
    env: process.env,
    ...(input !== undefined ? { input } : {}),
  });
}

/** The environment of a drainflow process on the stack. */
export function drainflowEnv(): NodeJS.ProcessEnv {
  return {
    KUBECONFIG: requireEnv('KUBECONFIG'),
    TEMPORAL_ADDRESS: requireEnv('TEMPORAL_ADDRESS'),
    TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? 'default',
    ...(process.env.TEMPORAL_UI_URL ? { TEMPORAL_UI_URL: process.env.TEMPORAL_UI_URL } : {}),
  };
}

/**
 * A kwok node `<prefix>-*` with the NoSchedule taint `key=value`, so that only pods tolerating it
 * (none but the test's own) land there. @returns the node name.
 */
export async function createTaintedNode(
  c: Clients,
  prefix: string,
  opts: { labels?: Record<string, string>; unschedulable?: boolean; taint: { key: string; value: string } },
): Promise<string> {
  const node = await createNode(c, prefix, {
    ...(opts.labels ? { labels: opts.labels } : {}),
    ...(opts.unschedulable !== undefined ? { unschedulable: opts.unschedulable } : {}),
  });
  await c.core.patchNode(
    {
      name: node,
      body: { spec: { taints: [{ key: opts.taint.key, value: opts.taint.value, effect: 'NoSchedule' }] } },
    },
    MERGE_PATCH,
  );
  return node;
}

/** Options of {@link OperatorHarness}. */
export interface OperatorHarnessOptions {
  /** The task queue of the operator and the worker (unique per file). */
  taskQueue: string;
  /** The value of {@link RUN_LABEL} on this file's plans, the operator's --plan-selector. */
  run: string;
  /**
   * Where the operator takes its Lease: `{ create: prefix }` a namespace of its own (neither waits
   * for nor blocks another test's operator), deleted at the end; `{ name }` an existing one.
   */
  lease: { create: string } | { name: string };
  /** Poll interval of the plan waits, ms (default 250). */
  pollMs?: number;
}

/**
 * The operator and worker processes of one test file, its clients, and its plans. Call
 * {@link connect} then {@link startProcesses} in `before`, {@link removePlans} after each test and
 * {@link stop} in `after`.
 */
/**
 * A harness for tests that start plan workflows directly (no operator is started): task queue and
 * run label made unique from the given prefixes.
 */
export function directHarness(taskQueuePrefix: string, runPrefix: string): OperatorHarness {
  return new OperatorHarness({
    taskQueue: uniqueName(taskQueuePrefix),
    run: uniqueName(runPrefix),
    lease: { name: 'default' },
  });
}

export class OperatorHarness {
  c!: Clients;
  connection: Connection | undefined;
  client!: Client;
  worker: DrainflowProcess | undefined;
  operator: DrainflowProcess | undefined;
  leaseNs: string | undefined;
  /** Plans of the current test, not deleted yet. */
  readonly plans = new Set<string>();
  /** Every plan this file created (their Events are deleted at the end). */
  readonly allPlans = new Set<string>();
  private readonly pollMs: number;

  constructor(readonly opts: OperatorHarnessOptions) {
    this.pollMs = opts.pollMs ?? 250;
  }

  /** Clients for Kubernetes (fails with the setup instructions when KUBECONFIG is unset) and Temporal; the CRDs applied. */
  async connect(): Promise<void> {
    this.c = clients();
    const address = requireEnv('TEMPORAL_ADDRESS');
    await applyCrds(this.c);
    this.connection = await Connection.connect({ address });
    this.client = new Client({
      connection: this.connection,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    });
  }

  /** The Lease namespace (created when asked), the worker, then the operator, leading. */
  async startProcesses(): Promise<void> {
    const lease = this.opts.lease;
    this.leaseNs = 'create' in lease ? await createNamespace(this.c, lease.create) : lease.name;
    this.worker = await startWorkerProcess(this.opts.taskQueue, drainflowEnv());
    this.operator = await this.startOperator();
  }

  /** The arguments of `drainflow run --operator` for this run, serving on `port`. */
  operatorArgs(port: number): string[] {
    return [
      'run',
      '--operator',
      '--operator-port',
      String(port),
      '--task-queue',
      this.opts.taskQueue,
      '--lease-namespace',
      this.leaseNamespace(),
      '--plan-selector',
      `${RUN_LABEL}=${this.opts.run}`,
      '--log-level',
      'debug',
    ];
  }

  /**
   * Starts an operator process and waits until it leads and its cache is synced (/readyz is also
   * 200 on a healthy standby). Does not replace {@link operator}.
   * @throws Error naming the Lease holder, with the log, when it does not lead in 45 s (the process is killed).
   */
  async startOperator(): Promise<DrainflowProcess> {
    const p = await onFreePorts(1, ([port]) =>
      startDrainflow({ args: this.operatorArgs(port!), env: drainflowEnv() }),
    );
    try {
      await waitFor(() => p.logs().includes('cache synced'), 45_000, {
        what: 'operator leads and lists the plans',
        intervalMs: 200,
      });
    } catch (err) {
      const held = await this.c.kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name: LEASE_NAME, namespace: this.leaseNamespace() })
        .catch(() => undefined);
      await p.stop('SIGKILL');
      throw new Error(
        `the operator did not become leader (Lease held by ${held?.spec?.holderIdentity ?? 'nobody'}): ${String(err)}\n${p.logs().slice(-4000)}`,
        { cause: err },
      );
    }
    return p;
  }

  private leaseNamespace(): string {
    const lease = this.opts.lease;
    if ('name' in lease) return lease.name;
    if (!this.leaseNs) throw new Error('the Lease namespace is created by startProcesses()');
    return this.leaseNs;
  }

  /** Creates or updates a plan labelled for this run with `kubectl apply`. */
  /**
   * Creates plan `name` unlabelled (no operator acts on it) and starts its workflow on this
   * harness's task queue, as the operator would. @returns the plan's UID and workflow ID.
   */
  async startDirectPlan(
    name: string,
    spec: MaintenancePlanSpecInput,
  ): Promise<{ uid: string; workflowId: string }> {
    const plan = await createDirectPlan(this.c, name, spec);
    this.allPlans.add(name);
    await this.client.workflow.start('drainPlanWorkflow', {
      taskQueue: this.opts.taskQueue,
      workflowId: plan.workflowId,
      args: [plan.input],
    });
    return { uid: plan.input.plan.uid, workflowId: plan.workflowId };
  }

  applyPlan(name: string, spec: MaintenancePlanSpecInput): void {
    this.plans.add(name);
    this.allPlans.add(name);
    const manifest = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'MaintenancePlan',
      metadata: { name, labels: { [RUN_LABEL]: this.opts.run } },
      spec,
    };
    kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
  }

  /** The plan, `undefined` when it does not exist. */
  async getPlan(name: string): Promise<MaintenancePlan | undefined> {
    return ignoreNotFound(
      async () =>
        (await this.c.custom.getClusterCustomObject({
          group: GROUP,
          version: VERSION,
          plural: PLURAL,
          name,
        })) as MaintenancePlan,
    );
  }

  /**
   * Waits until `pred` holds for the plan, calling `onEach` with every plan read; the error shows
   * the last status.
   */
  async waitPlan(
    name: string,
    pred: (p: MaintenancePlan) => boolean,
    timeoutMs: number,
    what: string,
    onEach?: (p: MaintenancePlan) => void,
  ): Promise<MaintenancePlan> {
    let last: MaintenancePlan | undefined;
    try {
      return await waitFor(
        async () => {
          last = await this.getPlan(name);
          if (last) onEach?.(last);
          return last && pred(last) ? last : undefined;
        },
        timeoutMs,
        { what: `${name}: ${what}`, intervalMs: this.pollMs },
      );
    } catch (err) {
      throw new Error(`${String(err)}\nlast status: ${JSON.stringify(last?.status, null, 1)}`, {
        cause: err,
      });
    }
  }

  /** Deletes the plan object (the operator's finalizer runs first); ignores a missing one. */
  async deletePlanObject(name: string): Promise<void> {
    await ignoreNotFound(() =>
      this.c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }),
    );
  }

  /** Waits until the plan is gone (finalizer removed). */
  async waitPlanGone(name: string, timeoutMs: number): Promise<void> {
    await waitFor(async () => (await this.getPlan(name)) === undefined, timeoutMs, {
      what: `plan ${name} deleted (finalizer removed)`,
      intervalMs: 250,
    });
    this.plans.delete(name);
  }

  /** Deletes the plan and waits until the operator removed its finalizer. */
  async deletePlan(name: string, timeoutMs = 90_000): Promise<void> {
    await this.deletePlanObject(name);
    await this.waitPlanGone(name, timeoutMs);
  }

  /** The core Events whose involvedObject is the plan with this uid. */
  async planEvents(name: string, uid: string): Promise<CoreV1Event[]> {
    const list = await this.c.core.listNamespacedEvent({
      namespace: EVENT_NAMESPACE,
      fieldSelector: `involvedObject.name=${name},involvedObject.uid=${uid}`,
    });
    return list.items;
  }

  /**
   * Deletes the current test's plans whatever its outcome: through the operator while it runs
   * (finalizer cleanup, up to `timeoutMs` each), then forced (finalizer removed) for those left.
   */
  async removePlans(timeoutMs: number): Promise<void> {
    const op = this.operator;
    for (const name of [...this.plans]) {
      if (!op || op.proc.exitCode !== null || op.proc.signalCode !== null) break;
      await this.deletePlan(name, timeoutMs).catch(() => undefined);
    }
    for (const name of [...this.plans]) {
      await this.c.custom
        .patchClusterCustomObject(
          { group: GROUP, version: VERSION, plural: PLURAL, name, body: { metadata: { finalizers: null } } },
          MERGE_PATCH,
        )
        .catch(() => undefined);
      await this.deletePlanObject(name).catch(() => undefined);
      this.plans.delete(name);
    }
  }

  /**
   * Stops the operator and the worker (their log files printed when the run failed or
   * E2E_KEEP_LOGS is set), deletes the Events of every plan of this file, closes the Temporal
   * connection and deletes a Lease namespace created here.
   */
  async stop(): Promise<void> {
    await this.operator?.stop('SIGTERM');
    await this.worker?.stop('SIGTERM');
    if (process.env.E2E_KEEP_LOGS || process.exitCode) {
      console.error(`operator log: ${this.operator?.logFile}\nworker log: ${this.worker?.logFile}`);
    }
    await this.connection?.close();
    if (!this.c) return;
    for (const name of this.allPlans) {
      const events = await this.c.core
        .listNamespacedEvent({ namespace: EVENT_NAMESPACE, fieldSelector: `involvedObject.name=${name}` })
        .catch(() => undefined);
      for (const e of events?.items ?? [])
        await ignoreNotFound(() =>
          this.c.core.deleteNamespacedEvent({ namespace: EVENT_NAMESPACE, name: e.metadata!.name! }),
        ).catch(() => undefined);
    }
    if (this.leaseNs && 'create' in this.opts.lease) await deleteNamespace(this.c, this.leaseNs);
  }
}
