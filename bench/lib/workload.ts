/**
 * Builds a scenario's workload on fresh kwok nodes, watches its pods during the run, and removes it.
 *
 * Placement: every node of a run carries a unique pool label and every pod a nodeSelector on it, so only
 * this run's nodes are used. All nodes are created cordoned; the fill nodes (targets, then others) are
 * filled one group at a time: uncordon the group, scale each Deployment up by the group's share, wait
 * until the new pods are bound, cordon the group again. Afterwards every node is uncordoned, all pods
 * must be Ready and every PodDisruptionBudget settled (observed, currentHealthy = expectedPods) before
 * the drain starts.
 */
import { PatchStrategy, Watch, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import {
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  errorCode,
  isPodReady,
  makeDeployment,
  makePdb,
  setUnschedulable,
  uniqueName,
  type Clients,
} from '../../test/helpers/k8s.js';
import { POD_GRACE_SECONDS, POD_READY_DELAY, perTargetList, type Scenario } from '../scenarios.js';
import { log, mapLimit, sleep, until } from './util.js';

export const POOL_LABEL = 'drainflow.dev/pool';
export const BENCH_LABEL = 'drainflow.dev/bench';

/** What the observer knows of one pod. */
interface PodInfo {
  name: string;
  node?: string;
  ready: boolean;
  deleting: boolean;
}

/**
 * A list+watch cache of the pods of one namespace. During a run it records when pods bound to the target
 * nodes disappear (DELETED events), independently of the tool under test.
 */
export class PodObserver {
  readonly pods = new Map<string, PodInfo>();
  private controller: AbortController | undefined;
  private stopped = false;
  private rv = '';
  /** Set during a run: target node names, deletion times of pods that were bound to them. */
  private targets = new Set<string>();
  private deletedFromTargets: number[] = [];
  private recording = false;

  constructor(
    private readonly c: Clients,
    readonly namespace: string,
  ) {}

  async start(): Promise<void> {
    await this.relist();
    void this.loop();
  }

  private async relist(): Promise<void> {
    const list = await this.c.core.listNamespacedPod({ namespace: this.namespace });
    this.pods.clear();
    for (const p of list.items) this.apply('ADDED', p);
    this.rv = list.metadata?.resourceVersion ?? '';
  }

  private apply(type: string, p: V1Pod): void {
    const uid = p.metadata?.uid;
    if (!uid) return;
    if (type === 'DELETED') {
      const known = this.pods.get(uid);
      const node = p.spec?.nodeName ?? known?.node;
      if (this.recording && node && this.targets.has(node)) this.deletedFromTargets.push(Date.now());
      this.pods.delete(uid);
      return;
    }
    this.pods.set(uid, {
      name: p.metadata!.name!,
      ...(p.spec?.nodeName ? { node: p.spec.nodeName } : {}),
      ready: isPodReady(p),
      deleting: Boolean(p.metadata?.deletionTimestamp),
    });
  }

  private async loop(): Promise<void> {
    const watch = new Watch(this.c.kc);
    while (!this.stopped) {
      let gone = false;
      await new Promise<void>((resolve) => {
        watch
          .watch(
            `/api/v1/namespaces/${this.namespace}/pods`,
            { resourceVersion: this.rv, allowWatchBookmarks: true, timeoutSeconds: 600 },
            (type: string, obj: V1Pod & { code?: number }) => {
              if (type === 'ERROR') {
                gone = true;
                return;
              }
              if (obj.metadata?.resourceVersion) this.rv = obj.metadata.resourceVersion;
              if (type === 'BOOKMARK') return;
              this.apply(type, obj);
            },
            () => resolve(),
          )
          .then(
            (ctl) => {
              this.controller = ctl;
              if (this.stopped) ctl.abort();
            },
            () => {
              gone = true;
              resolve();
            },
          );
      });
      if (this.stopped) return;
      if (gone) {
        await sleep(200);
        await this.relist().catch(() => undefined);
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }

  /** Starts recording deletions of pods bound to `targets`. */
  record(targets: string[]): void {
    this.targets = new Set(targets);
    this.deletedFromTargets = [];
    this.recording = true;
  }

  /** Pods deleted from the targets since {@link record}, and the time of the last deletion (ms since epoch). */
  recorded(): { deleted: number; lastDeletedAtMs?: number } {
    const last = this.deletedFromTargets.at(-1);
    return {
      deleted: this.deletedFromTargets.length,
      ...(last !== undefined ? { lastDeletedAtMs: last } : {}),
    };
  }

  /** Pods currently bound to `node` and not terminating. */
  countOn(node: string): number {
    let n = 0;
    for (const p of this.pods.values()) if (p.node === node && !p.deleting) n++;
    return n;
  }

  counts(): { total: number; bound: number; ready: number } {
    let bound = 0;
    let ready = 0;
    for (const p of this.pods.values()) {
      if (p.deleting) continue;
      if (p.node) bound++;
      if (p.ready) ready++;
    }
    return { total: this.pods.size, bound, ready };
  }
}

/** A built workload. */
export interface Workload {
  namespace: string;
  pool: string;
  targets: string[];
  others: string[];
  spares: string[];
  deployments: string[];
  observer: PodObserver;
  /** Pods per target when the drain starts: min and max over the targets. */
  podsPerTarget: { min: number; max: number };
  setupSeconds: number;
}

async function scaleDeployment(c: Clients, namespace: string, name: string, replicas: number): Promise<void> {
  await c.apps.patchNamespacedDeployment(
    { name, namespace, body: { spec: { replicas } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Builds the workload of `s` (see the module comment). Cleans up what it made when it fails. */
export async function buildWorkload(c: Clients, s: Scenario): Promise<Workload> {
  const started = Date.now();
  const namespace = await createNamespace(c, `bench-${s.name}`);
  const pool = uniqueName(`bench-${s.name}`);
  const labels = { [POOL_LABEL]: pool, [BENCH_LABEL]: 'true' };
  const made: Workload = {
    namespace,
    pool,
    targets: [],
    others: [],
    spares: [],
    deployments: [],
    observer: new PodObserver(c, namespace),
    podsPerTarget: { min: 0, max: 0 },
    setupSeconds: 0,
  };
  try {
    const mk = (prefix: string, n: number) =>
      mapLimit(Array.from({ length: n }), 16, () => createNode(c, prefix, { labels, unschedulable: true }));
    made.targets = await mk(`bench-${s.name}-t`, s.targets);
    made.others = await mk(`bench-${s.name}-o`, s.others);
    made.spares = await mk(`bench-${s.name}-s`, s.spares);
    await made.observer.start();

    for (let d = 0; d < s.deployments; d++) {
      const name = `app-${d}`;
      const dep = makeDeployment(namespace, name, 0, {
        readyDelay: POD_READY_DELAY,
        terminationGracePeriodSeconds: POD_GRACE_SECONDS,
      });
      dep.spec!.template.spec!.nodeSelector = { [POOL_LABEL]: pool };
      await c.apps.createNamespacedDeployment({ namespace, body: dep });
      made.deployments.push(name);
      if (s.pdbMaxUnavailable !== undefined) {
        await c.policy.createNamespacedPodDisruptionBudget({
          namespace,
          body: makePdb(namespace, name, { app: name }, { maxUnavailable: s.pdbMaxUnavailable }),
        });
      }
    }

    // Fill targets, then others, group by group.
    const groups: { nodes: string[]; per: number }[] = [];
    if (s.perTargetByNode) {
      // Uneven shares: one target at a time, each with its own share.
      perTargetList(s).forEach((per, i) => groups.push({ nodes: [made.targets[i]!], per }));
    } else {
      for (let i = 0; i < made.targets.length; i += s.fillGroup)
        groups.push({ nodes: made.targets.slice(i, i + s.fillGroup), per: s.perTarget });
    }
    for (let i = 0; i < made.others.length; i += s.fillGroup)
      groups.push({ nodes: made.others.slice(i, i + s.fillGroup), per: s.perOther });
    let replicas = 0;
    for (const [step, { nodes, per }] of groups.entries()) {
      const group = nodes.map((node) => ({ node }));
      await Promise.all(group.map((g) => setUnschedulable(c, g.node, false)));
      replicas += per * group.length;
      await mapLimit(made.deployments, 8, (d) => scaleDeployment(c, namespace, d, replicas));
      const want = replicas * s.deployments;
      await until(
        () => {
          const k = made.observer.counts();
          return k.total === want && k.bound === want;
        },
        120_000,
        `${want} pods bound (fill step ${step + 1}/${groups.length})`,
        100,
      );
      await Promise.all(group.map((g) => setUnschedulable(c, g.node, true)));
    }
    await mapLimit([...made.targets, ...made.others, ...made.spares], 16, (n) =>
      setUnschedulable(c, n, false),
    );

    const total = replicas * s.deployments;
    await until(() => made.observer.counts().ready === total, 180_000, `${total} pods Ready`, 200);
    if (s.pdbMaxUnavailable !== undefined) {
      const perDeployment = replicas;
      // A budget of maxUnavailable 0 settles at 0 allowed disruptions; any other at more than 0.
      const never = s.pdbMaxUnavailable === 0;
      await until(
        async () => {
          const list = await c.policy.listNamespacedPodDisruptionBudget({ namespace });
          return (
            list.items.length === s.deployments &&
            list.items.every(
              (p) =>
                (p.status?.observedGeneration ?? 0) >= (p.metadata?.generation ?? 1) &&
                p.status?.expectedPods === perDeployment &&
                p.status?.currentHealthy === perDeployment &&
                (never ? p.status?.disruptionsAllowed === 0 : (p.status?.disruptionsAllowed ?? 0) > 0),
            )
          );
        },
        120_000,
        'PodDisruptionBudgets settled',
        500,
      );
    }
    const perTarget = made.targets.map((n) => made.observer.countOn(n));
    made.podsPerTarget = { min: Math.min(...perTarget), max: Math.max(...perTarget) };
    made.setupSeconds = (Date.now() - started) / 1000;
    return made;
  } catch (err) {
    await teardown(c, made).catch(() => undefined);
    throw err;
  }
}

/**
 * Deletes the namespace and waits until it is gone (so the next run does not share the control plane
 * with a mass deletion), then deletes the nodes.
 */
export async function teardown(c: Clients, w: Workload): Promise<void> {
  w.observer.stop();
  await deleteNamespace(c, w.namespace);
  try {
    await until(
      async () => {
        try {
          await c.core.readNamespace({ name: w.namespace });
          return false;
        } catch (err) {
          return errorCode(err) === 404;
        }
      },
      600_000,
      `namespace ${w.namespace} deleted`,
      1000,
    );
  } catch (err) {
    log(`warning: ${String(err)}`);
  }
  await mapLimit([...w.targets, ...w.others, ...w.spares], 16, (n) =>
    deleteNode(c, n).catch(() => undefined),
  );
}

/** Pods still bound to the targets and not terminating (0 when drained). */
export function podsLeftOnTargets(w: Workload): number {
  return w.targets.reduce((sum, n) => sum + w.observer.countOn(n), 0);
}
