/**
 * `npm run demo`: the whole product on this machine. Brings the local stack up (building what is
 * missing), installs the CRD, starts drainflow (operator + worker), creates a realistic workload on
 * kwok nodes (Deployments behind PodDisruptionBudgets of different tightness, a StatefulSet, a
 * DaemonSet), applies a MaintenancePlan, shows the drain live and ends with a summary.
 * Exit status 0 when the plan ends Drained.
 *
 * `--rolling`: a rolling maintenance instead (docs/guides/rolling-maintenance.md): uncordon
 * AfterEachNode, maxUnavailableNodes 1 and an afterDrain Job hook per node (a kernel patch that
 * "reboots" the node and checks its health); each node is drained, patched by its Job and handed
 * back before the next one is cordoned. Exit status 0 when the plan ends Completed with every node
 * handed back (AllNodesHandedBack). On kwok the Job's pod does not run its command: kwok marks a
 * Job pod Succeeded as soon as it runs (scripts/stack/kwok-stages.yaml).
 *
 * The operator and worker listen on DRAINFLOW_OPERATOR_PORT and DRAINFLOW_WORKER_PORT (the
 * settings of src/shared/settings.ts), 18080 and 18081 when unset.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PolicyV1Api,
  type V1Node,
  type V1PodTemplateSpec,
} from '../k8s/client.js';
import {
  GROUP,
  PLURAL,
  type MaintenancePlanSpecInput,
  type MaintenancePlanStatus,
  type NodeStatus,
} from '../api/plan.js';
import { FINAL_PLAN_PHASES, type PlanPhase } from '../api/reasons.js';
import { PlanApi } from '../k8s/plans.js';
import { SETTINGS, loadConfig } from '../shared/settings.js';
import { temporalConnection } from '../shared/temporal-connection.js';
import { assertDemoPortsFree } from './demo-options.js';
import { liveWorkers, taskQueueWorkers } from '../shared/workers.js';
import { watch } from './plans.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const NS = 'drainflow-demo';
const PLAN = 'demo-maintenance';
const POOL_LABEL = 'drainflow.dev/pool';
const POOL = 'demo';
/** The demo's operator acts only on plans with this label (--plan-selector). */
const DEMO_LABEL = 'drainflow.dev/demo';
/** Ports of the demo's operator and worker when DRAINFLOW_OPERATOR_PORT / DRAINFLOW_WORKER_PORT are unset. */
export const DEMO_PORTS = { operator: 18080, worker: 18081 } as const;

/** Options of the demo (see `npm run demo -- --help`). */
export interface DemoOptions {
  nodes: number;
  drain: number;
  podsPerNode: number;
  pdb: 'none' | 'loose' | 'tight';
  timeoutSeconds: number;
  keep: boolean;
  /** Remove an earlier demo's plan, namespace and nodes even while its drainflow still runs. */
  replace?: boolean;
  /** A rolling maintenance (uncordon AfterEachNode, maxUnavailableNodes 1, an afterDrain Job hook). */
  rolling?: boolean;
}

/** The demo's task queue (its drainflow's `--task-queue`). */
const DEMO_TASK_QUEUE = 'drainflow-demo';
/**
 * Whether the scheduler may place pods on a (demo) node: Ready, and no taint the node controllers
 * set (`node.kubernetes.io/not-ready`, `…/unreachable`, `…/unschedulable`, … stay on a node for up
 * to one node-monitor pass after it turned Ready).
 */
export function schedulableNode(n: V1Node): boolean {
  const ready = n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  return ready && !n.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/'));
}

/**
 * What to do with the plan of an earlier demo found at start-up (the demo's names are fixed:
 * plan `demo-maintenance`, namespace `drainflow-demo`, nodes `demo-node-*`):
 * - `none`: there is none;
 * - `remove`: a leftover (its plan ended or is being deleted, or no drainflow serves the demo's
 *   task queue any more: a demo stopped with Ctrl-C or killed), or `replace` was asked for;
 * - `refuse`: another demo is still running on this stack (its plan has not ended and a drainflow
 *   serves the demo's task queue); removing its objects would break it.
 * @param liveDrainflow a worker polls the demo's task queue and is not reported stopped
 *   ({@link liveWorkers}: a poll within 70 s, a running worker heartbeat when the server lists them).
 */
export function earlierDemo(
  plan: { phase?: string; deleting: boolean } | undefined,
  liveDrainflow: boolean,
  replace: boolean,
): 'none' | 'remove' | 'refuse' {
  if (!plan) return 'none';
  if (replace || plan.deleting) return 'remove';
  if (plan.phase && FINAL_PLAN_PHASES.has(plan.phase as PlanPhase)) return 'remove';
  return liveDrainflow ? 'refuse' : 'remove';
}

/**
 * The operator and worker ports of the demo: DRAINFLOW_OPERATOR_PORT and DRAINFLOW_WORKER_PORT
 * when set (validated as `drainflow run` validates them), else {@link DEMO_PORTS}.
 * @throws Error naming the variable when it is not a port number, or is 0 (the demo must know
 *   the port to check that drainflow is ready).
 */
export function demoPorts(env: NodeJS.ProcessEnv): { operator: number; worker: number } {
  const op = SETTINGS.operatorPort.env;
  const wk = SETTINGS.workerPort.env;
  const cfg = loadConfig(
    { mode: 'local', kubeconfig: 'unused' },
    { [op]: env[op] ?? String(DEMO_PORTS.operator), [wk]: env[wk] ?? String(DEMO_PORTS.worker) },
  );
  for (const [name, port] of [
    [op, cfg.operatorPort],
    [wk, cfg.workerPort],
  ] as const)
    if (port === 0)
      throw new Error(
        `invalid setting ${name}: the demo needs a fixed port to check that drainflow is ready (got 0)`,
      );
  if (cfg.operatorPort === cfg.workerPort)
    throw new Error(
      `invalid settings ${op} and ${wk}: both are ${cfg.operatorPort}; the operator and the worker need a port each`,
    );
  return { operator: cfg.operatorPort, worker: cfg.workerPort };
}

/**
 * The demo's afterDrain hook: a Job that "patches the kernel", "reboots" and checks the node's
 * health, allowed 120 s or the plan's deadline (`planTimeoutSeconds`) when that is shorter.
 */
export function kernelPatchHook(
  namespace: string,
  planTimeoutSeconds = 120,
): NonNullable<MaintenancePlanSpecInput['hooks']> {
  return {
    afterDrain: {
      job: {
        namespace,
        // At most the plan's deadline (the CRD refuses a hook allowed longer than the plan).
        timeoutSeconds: Math.min(120, planTimeoutSeconds),
        template: {
          metadata: { labels: { app: 'kernel-patch' } },
          spec: {
            template: {
              spec: {
                automountServiceAccountToken: false,
                containers: [
                  {
                    name: 'patch',
                    image: 'registry.k8s.io/pause:3.10',
                    // What a real hook would run (kwok does not run containers).
                    command: ['/bin/sh', '-c', 'apply-kernel-patch && reboot-node && wait-node-healthy'],
                  },
                ],
              },
            },
          },
        },
      },
    },
  };
}

/** One line of the rolling timeline: what changed on a node, `seconds` after the plan was applied. */
export interface TimelineEntry {
  seconds: number;
  node: string;
  text: string;
}

/**
 * What the timeline says of a node: phase, reason (when it differs), hook and message (unless the
 * hook says it), e.g. `Drained (HookRunning); afterDrain hook Running (Job ns/j)`.
 */
export function nodeMoment(n: NodeStatus): string {
  const h = n.hook;
  const hook = h
    ? `; ${h.name} hook ${h.phase}${h.ref ? ` (${h.ref.includes('/') ? 'Job' : 'workflow'} ${h.ref})` : ''}${h.message ? `: ${h.message}` : ''}`
    : '';
  const reason = n.reason && n.reason !== n.phase ? ` (${n.reason})` : '';
  const message = n.message && n.reason !== 'HookRunning' ? ` — ${n.message}` : '';
  return `${n.phase}${reason}${hook}${message}`;
}

/**
 * Adds to `timeline` one entry per node whose phase, reason or hook phase changed since `seen`
 * (node name → last moment key), and updates `seen`.
 */
export function recordTimeline(
  timeline: TimelineEntry[],
  seen: Map<string, string>,
  status: MaintenancePlanStatus,
  seconds: number,
): void {
  for (const n of status.nodes ?? []) {
    const key = `${n.phase}|${n.reason ?? ''}|${n.hook?.name ?? ''}|${n.hook?.phase ?? ''}`;
    if (seen.get(n.name) === key) continue;
    seen.set(n.name, key);
    timeline.push({ seconds, node: n.name, text: nodeMoment(n) });
  }
}

const began = Date.now();
/** A progress line on stderr with the seconds since the demo began: `[demo 12.3 s] …`. */
const say = (msg: string) =>
  process.stderr.write(`[demo ${((Date.now() - began) / 1000).toFixed(1)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined | false>,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`demo: timed out waiting for ${what}`);
    await sleep(500);
  }
}

function stackEnv(): Record<string, string> {
  const out = execFileSync('bash', [join(root, 'scripts/stack/stack.sh'), 'env'], { encoding: 'utf8' });
  const env: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line);
    if (m && m[1] !== 'PATH') env[m[1]!] = m[2]!;
  }
  return env;
}

function template(app: string, grace: number, readyDelay: string): V1PodTemplateSpec {
  return {
    metadata: { labels: { app }, annotations: { 'drainflow.dev/ready-delay': readyDelay } },
    spec: {
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
      terminationGracePeriodSeconds: grace,
      automountServiceAccountToken: false,
      nodeSelector: { [POOL_LABEL]: POOL },
    },
  };
}

/** Runs the demo. @returns the process exit status. */
export async function demo(opts: DemoOptions): Promise<number> {
  if (!(opts.nodes >= 2) || !(opts.drain >= 1) || opts.drain >= opts.nodes) {
    throw new Error(
      'demo: need --nodes >= 2 and 1 <= --drain < --nodes (the drained pods need somewhere to go)',
    );
  }
  // Before the stack: a port another process holds is refused at once.
  const ports = demoPorts(process.env);
  await assertDemoPortsFree([
    { port: ports.operator, variable: SETTINGS.operatorPort.env, what: 'operator' },
    { port: ports.worker, variable: SETTINGS.workerPort.env, what: 'worker' },
  ]);
  say('bringing up the local stack (first run builds Kubernetes from source: ~10 min)');
  execFileSync('bash', [join(root, 'scripts/stack/stack.sh'), 'up'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const env = stackEnv();
  Object.assign(process.env, env);
  const kubectl = env.DRAINFLOW_KUBECTL!;
  const kc = new KubeConfig();
  kc.loadFromFile(env.KUBECONFIG!);
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const policy = kc.makeApiClient(PolicyV1Api);
  const plans = new PlanApi(kc);

  try {
    execFileSync(
      kubectl,
      [
        'apply',
        '--server-side',
        '--force-conflicts',
        '--field-manager=drainflow',
        '-f',
        join(root, 'deploy/crds'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: process.env },
    );
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`demo: installing the CRD failed: ${stderr || (err as Error).message}`, { cause: err });
  }
  await until('the CRD to be established', 30_000, async () => {
    const out = execFileSync(
      kubectl,
      [
        'get',
        'crd',
        `${PLURAL}.${GROUP}`,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Established")].status}',
      ],
      // Piped: right after the apply the CRD has no conditions yet and kubectl's jsonpath error
      // (a page of the object) would land on the user's terminal; the next poll asks again.
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return out === 'True';
  });

  // Another demo still running on this stack keeps its objects: the demo's names are fixed.
  const earlier = await plans.get(PLAN);
  if (earlier) {
    const live = await liveDemoWorker(env);
    const verdict = earlierDemo(
      { phase: earlier.status?.phase, deleting: Boolean(earlier.metadata?.deletionTimestamp) },
      live !== undefined,
      Boolean(opts.replace),
    );
    if (verdict === 'refuse') {
      console.error(
        `demo: another demo is running on this stack: plan ${PLAN} is ${earlier.status?.phase ?? 'not started'} and drainflow ${live!.identity} polled task queue ${DEMO_TASK_QUEUE} ${Math.round(live!.ageMs / 1000)} s ago. ` +
          `Wait for it to end, or run again with --replace to remove its plan, namespace ${NS} and nodes demo-node-*.`,
      );
      return 1;
    }
  }

  const logDir = join(env.KUBECONFIG!, '..', 'logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'drainflow-demo.log');
  say(
    `starting drainflow (operator on port ${ports.operator}, worker on port ${ports.worker}); log: ${logFile}`,
  );
  const fd = openSync(logFile, 'a');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(root, 'bin/drainflow.js'),
      'run',
      '--task-queue',
      DEMO_TASK_QUEUE,
      '--operator-port',
      String(ports.operator),
      '--worker-port',
      String(ports.worker),
      '--plan-selector',
      `${DEMO_LABEL}=true`,
    ],
    {
      env: { ...process.env, TEMPORAL_UI_URL: env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233' },
      stdio: ['ignore', fd, fd],
    },
  );
  const stopChild = async () => {
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    await until(
      'drainflow to stop',
      30_000,
      async () => child.exitCode !== null || child.signalCode !== null,
    );
  };
  try {
    // `until` swallows the errors of its probe: an exit is a value, checked after the wait.
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    await until('drainflow to become ready', 90_000, async () => {
      if (exited()) return true;
      const [a, b] = await Promise.all([
        fetch(`http://127.0.0.1:${ports.operator}/readyz`).then((r) => r.ok),
        fetch(`http://127.0.0.1:${ports.worker}/readyz`).then((r) => r.ok),
      ]);
      return a && b;
    });
    if (exited())
      throw new Error(
        `demo: drainflow exited (${child.exitCode ?? child.signalCode}) before it was ready; see ${logFile}`,
      );

    say('drainflow is ready');
    // Leftovers of an earlier demo: the plan first (the operator hands its nodes back), then the rest.
    if (await plans.get(PLAN)) {
      say('removing the plan of an earlier demo');
      await plans.delete(PLAN);
      await until('the old plan to go', 120_000, async () => !(await plans.get(PLAN)));
    }
    if (await core.readNamespace({ name: NS }).catch(() => undefined)) {
      say(`removing namespace ${NS} of an earlier demo (its pods' grace periods first)`);
      await core.deleteNamespace({ name: NS }).catch(() => undefined);
      await until(
        'the old demo namespace to go',
        120_000,
        async () => !(await core.readNamespace({ name: NS }).catch(() => undefined)),
      );
    }

    // Nodes: the demo pool, created fresh (kwok makes them Ready).
    const names = Array.from({ length: opts.nodes }, (_, i) => `demo-node-${i}`);
    for (const name of names) {
      await core.deleteNode({ name }).catch(() => undefined);
    }
    await until('old demo nodes to go', 60_000, async () => {
      const left = (await core.listNode({ labelSelector: `${POOL_LABEL}=${POOL}` })).items.length;
      return left === 0;
    });
    for (const name of names) {
      await core.createNode({
        body: {
          metadata: {
            name,
            annotations: { 'kwok.x-k8s.io/node': 'fake' },
            labels: { 'kubernetes.io/hostname': name, type: 'kwok', [POOL_LABEL]: POOL },
          },
        },
      });
    }
    // Ready and schedulable: the node lifecycle controller removes the node.kubernetes.io/not-ready
    // taint of a new node only on its next pass (up to 5 s after Ready), and pods created before
    // that all land on the other nodes: targets without a pod to evict.
    await until('demo nodes Ready and schedulable', 60_000, async () => {
      const nodes = (await core.listNode({ labelSelector: `${POOL_LABEL}=${POOL}` })).items;
      return nodes.filter(schedulableNode).length === opts.nodes;
    });

    say(`nodes ${names.join(', ')} Ready`);
    // Workload: sized to about podsPerNode pods per node.
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await until('the default ServiceAccount', 30_000, async () =>
      core.readNamespacedServiceAccount({ namespace: NS, name: 'default' }),
    );
    const total = opts.nodes * opts.podsPerNode;
    const perApp = Math.max(2, Math.floor((total - opts.nodes) / 3));
    const deployments: [string, number][] = [
      ['frontend', perApp],
      ['api', perApp],
    ];
    for (const [app, replicas] of deployments) {
      await apps.createNamespacedDeployment({
        namespace: NS,
        body: {
          metadata: { name: app },
          spec: { replicas, selector: { matchLabels: { app } }, template: template(app, 3, '2s') },
        },
      });
    }
    const dbReplicas = Math.max(2, total - opts.nodes - 2 * perApp);
    await apps.createNamespacedStatefulSet({
      namespace: NS,
      body: {
        metadata: { name: 'db' },
        spec: {
          replicas: dbReplicas,
          serviceName: 'db',
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: { app: 'db' } },
          template: template('db', 5, '3s'),
        },
      },
    });
    await apps.createNamespacedDaemonSet({
      namespace: NS,
      body: {
        metadata: { name: 'node-agent' },
        spec: { selector: { matchLabels: { app: 'node-agent' } }, template: template('node-agent', 1, '0s') },
      },
    });
    if (opts.pdb !== 'none') {
      const pdbs: [string, Record<string, number | string>][] =
        opts.pdb === 'tight'
          ? [
              ['frontend', { maxUnavailable: 1 }],
              // 75% of fewer than 4 replicas rounds up to all of them: no disruption ever allowed.
              ['api', perApp >= 4 ? { minAvailable: '75%' } : { minAvailable: perApp - 1 }],
              ['db', { maxUnavailable: 1 }],
            ]
          : [
              ['frontend', { maxUnavailable: '50%' }],
              ['api', { maxUnavailable: 2 }],
              ['db', { maxUnavailable: 1 }],
            ];
      for (const [app, budget] of pdbs) {
        await policy.createNamespacedPodDisruptionBudget({
          namespace: NS,
          body: { metadata: { name: app }, spec: { selector: { matchLabels: { app } }, ...budget } },
        });
      }
    }
    const expected = 2 * perApp + dbReplicas + opts.nodes;
    say(
      `workload: Deployments frontend and api (${perApp} replicas each), StatefulSet db (${dbReplicas}), DaemonSet node-agent; PDBs ${opts.pdb}`,
    );
    await until(`${expected} pods Running and Ready`, 180_000, async () => {
      const pods = (await core.listNamespacedPod({ namespace: NS })).items;
      return (
        pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
          .length >= expected
      );
    });

    const targets = names.slice(0, opts.drain);
    say(
      `applying MaintenancePlan ${PLAN} for ${targets.join(', ')}${opts.rolling ? ': rolling maintenance, one node out of service at a time, an afterDrain Job hook per node (kernel patch, "reboot", health check), each node uncordoned when its hook succeeded' : ''}`,
    );
    const t0 = Date.now();
    const spec: MaintenancePlanSpecInput = opts.rolling
      ? {
          nodeNames: targets,
          maxUnavailableNodes: 1,
          drainTimeoutSeconds: opts.timeoutSeconds,
          uncordon: 'AfterEachNode',
          hooks: kernelPatchHook(NS, opts.timeoutSeconds),
        }
      : {
          nodeNames: targets,
          maxUnavailableNodes: 1,
          drainTimeoutSeconds: opts.timeoutSeconds,
          uncordon: 'OnDelete',
        };
    await plans.create({ name: PLAN, labels: { [DEMO_LABEL]: 'true' } }, spec);
    const timeline: TimelineEntry[] = [];
    const seen = new Map<string, string>();
    const final = (await watch(
      {
        kubeconfig: env.KUBECONFIG!,
        temporalAddress: env.TEMPORAL_ADDRESS!,
        temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
      },
      PLAN,
      {
        intervalMs: 500,
        until: (st) => {
          recordTimeline(timeline, seen, st, (Date.now() - t0) / 1000);
          return st.phase !== undefined && FINAL_PLAN_PHASES.has(st.phase);
        },
      },
    )) as MaintenancePlanStatus;
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    const p = final.evictionProgress;
    console.log('\n=== summary ===');
    console.log(`plan ${PLAN}: ${final.phase} (${final.reason}) in ${seconds} s`);
    console.log(
      `pods evicted: ${p?.evicted ?? 0}/${p?.total ?? 0}; eviction calls: ${p?.attempts ?? 0}; answered 429: ${p?.tooManyRequests ?? 0}`,
    );
    for (const n of final.nodes ?? []) {
      const hook = n.hook
        ? `; ${n.hook.name} hook ${n.hook.phase}${n.hook.ref ? ` (Job ${n.hook.ref})` : ''}`
        : '';
      console.log(
        `  ${n.name}: ${n.phase}, ${n.podsEvicted}/${n.podsTotal} pods evicted${hook}${n.blockedBy?.length ? `, blocked by ${n.blockedBy.map((b) => b.pod).join(', ')}` : ''}`,
      );
    }
    let ok = final.phase === 'Drained';
    if (opts.rolling) {
      console.log('node by node (seconds after the plan was applied):');
      for (const e of timeline) console.log(`  ${e.seconds.toFixed(1).padStart(6)} s  ${e.node}: ${e.text}`);
      const cordoned = (await core.listNode({ labelSelector: `${POOL_LABEL}=${POOL}` })).items
        .filter((n) => n.spec?.unschedulable)
        .map((n) => n.metadata!.name!);
      console.log(
        cordoned.length
          ? `still cordoned: ${cordoned.join(', ')}`
          : 'every node is uncordoned again: each was handed back after its hook',
      );
      ok = final.phase === 'Completed' && final.reason === 'AllNodesHandedBack' && cordoned.length === 0;
    }
    console.log(`Temporal UI: ${final.workflow?.url ?? env.TEMPORAL_UI_URL}`);
    if (opts.keep) {
      say(
        `kept: plan ${PLAN}, namespace ${NS}, nodes ${names.join(', ')}; drainflow keeps running (Ctrl-C to stop). Try: kubectl describe mp ${PLAN}`,
      );
      await new Promise<void>((resolve) => child.once('exit', () => resolve()));
    } else {
      say(
        `cleaning up: deleting the plan (drainflow uncordons its nodes${opts.rolling ? '; its hook Jobs go with it' : ''}), the workload and the demo nodes`,
      );
      await plans.delete(PLAN);
      await until('the plan to be deleted', 120_000, async () => !(await plans.get(PLAN)));
      // The namespace before the nodes: kwok ends a pod's termination only on a node it still has,
      // so pods left on deleted nodes waited for the pod garbage collector (a next demo waited
      // 75 s for this namespace to go).
      await core.deleteNamespace({ name: NS });
      await until(
        'the demo namespace to go',
        120_000,
        async () => !(await core.readNamespace({ name: NS }).catch(() => undefined)),
      );
      for (const name of names) await core.deleteNode({ name }).catch(() => undefined);
      say('done; the local stack keeps running (npm run stack -- down stops it)');
    }
    return ok ? 0 : 1;
  } finally {
    await stopChild();
  }
}

/**
 * The newest live worker of the demo's task queue ({@link liveWorkers}); undefined when there is
 * none or Temporal does not answer within a few seconds.
 */
async function liveDemoWorker(
  env: Record<string, string>,
): Promise<{ identity: string; ageMs: number } | undefined> {
  const namespace = env.TEMPORAL_NAMESPACE ?? 'default';
  const connection = await temporalConnection(
    { temporalAddress: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233', temporalNamespace: namespace },
    '3s',
  ).catch(() => undefined);
  if (!connection) return undefined;
  try {
    const client = new Client({ connection, namespace });
    return liveWorkers(await taskQueueWorkers(client, namespace, DEMO_TASK_QUEUE))[0];
  } catch {
    return undefined;
  } finally {
    await connection.close();
  }
}
