/**
 * A small, worker-wide cache of the Kubernetes objects a node drain looks at, built on
 * `@kubernetes/client-node`'s informer ({@link ListWatch}: list, then watch from the list's
 * resourceVersion, re-listing after `410 Gone`).
 *
 * - One cluster-wide Node informer (`/api/v1/nodes`) and one cluster-wide PodDisruptionBudget
 *   informer (`/apis/policy/v1/poddisruptionbudgets`), started lazily by the first
 *   {@link WatchCache.acquire} and shared by every user.
 * - One Pod informer per node (`/api/v1/pods?fieldSelector=spec.nodeName=<node>`), reference-counted
 *   by the {@link NodeWatch}es of that node and stopped {@link WatchCacheOptions.podIdleMs} after the
 *   last one was released, so a caller observing the same node in a loop reuses the warm cache
 *   instead of a new LIST + WATCH each time.
 * - A change counter per node with waiters ({@link NodeWatch.changes},
 *   {@link NodeWatch.waitForChange}): it moves on every add/update/delete of the node itself, of a pod
 *   bound to it, and of a PDB in a namespace where the node has pods. The last
 *   {@link RECENT_CHANGES} moves of each node are remembered with the PDB whose update left its
 *   metadata.generation as it was (a status write: the disruption controller's, after every
 *   eviction and every pod that turns Ready), so a waiter may ignore those of PDBs it does not
 *   care about (`ignorePdbStatus`) instead of waking for each.
 *
 * client-node 2.0.1's ListWatch stops for good after it reports an `error` (a failed list, a watch
 * refused with anything but 410, a dropped connection); this module restarts it with a bounded
 * exponential backoff ({@link WatchCacheOptions.restartBackoffMs}). A restarted informer resumes from
 * its last resourceVersion (re-listing when that is too old), so no change is lost, only delayed.
 * Between an error and the restart the cache serves what it last saw.
 *
 * RBAC: list and watch on nodes, pods and poddisruptionbudgets, cluster-wide.
 */
import {
  CoreV1Api,
  ListWatch,
  PolicyV1Api,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
} from './client.js';
import { pino, type Logger } from 'pino';

/** Options of {@link WatchCache}. All durations in ms. */
export interface WatchCacheOptions {
  /** Where and as whom to reach the Kubernetes API. */
  kubeConfig: KubeConfig;
  /** Structured logger; a pino logger named `drainflow.watch-cache` at level `info` when absent. */
  logger?: Logger;
  /** How long a node's Pod informer keeps running after its last user released it. Default 60 000. */
  podIdleMs?: number;
  /**
   * How long the cluster-wide Node and PDB informers keep running after the last node's Pod informer
   * stopped (so an idle worker holds no watches). Default 600 000.
   */
  clusterIdleMs?: number;
  /** Restart delay after an informer error: `initial`, doubled per consecutive failure up to `max`. Default 500 / 30 000. */
  restartBackoffMs?: { initial: number; max: number };
  /** Page size of the informers' list calls. Default 500. */
  listPageSize?: number;
}

/** What an informer of the cache is doing, for logs and tests. */
export interface InformerState {
  /** The watched path, with its field selector, e.g. `/api/v1/pods?fieldSelector=spec.nodeName=n1`. */
  what: string;
  /** Whether it is started (possibly waiting to restart after an error). */
  running: boolean;
  /** Whether its first list of the current run completed and its watch was opened. */
  synced: boolean;
  /** Errors reported since it was started. */
  errors: number;
  /** The last error, when there was one. */
  lastError?: unknown;
}

/** One change-feed subscription on a node: what {@link WatchCache.acquire} hands out. Release it when done. */
export interface NodeWatch {
  /** The node name. */
  readonly node: string;
  /**
   * Counter of changes relevant to the node (see the module doc). Read it before taking a snapshot
   * and pass it to {@link waitForChange} to wait for anything newer.
   */
  readonly changes: number;
  /** Whether the Node, PDB and this node's Pod informers have all completed their first list. */
  isSynced(): boolean;
  /**
   * Resolves `true` when all three informers have synced, `false` when `signal` aborts first or an
   * informer not yet synced reports an error for which `giveUp(err)` is true. Never rejects:
   * informer errors are retried; see {@link lastError} for why it takes long.
   */
  waitSynced(signal?: AbortSignal, giveUp?: (err: unknown) => boolean): Promise<boolean>;
  /**
   * The last error of an informer this watch depends on that has not synced yet, `undefined` when
   * none (or all synced). A 4xx there (e.g. 403 from missing RBAC) will not heal by waiting.
   */
  lastError(): unknown;
  /**
   * Resolves `true` as soon as {@link changes} exceeds `after` (at once when it already does), `false`
   * when `signal` aborts first. Never rejects. With `ignorePdbStatus`, the updates of a PDB that
   * leave its metadata.generation as it was (status and metadata writes: its selector and budget are
   * unchanged) do not count when `ignorePdbStatus(key)` (`namespace/name`) is true; a change older
   * than the last {@link RECENT_CHANGES} of the node always counts.
   */
  waitForChange(
    after: number,
    signal?: AbortSignal,
    ignorePdbStatus?: (key: string) => boolean,
  ): Promise<boolean>;
  /** The Node from the cache, `undefined` when it does not exist (or before sync). */
  getNode(): V1Node | undefined;
  /** The pods bound to the node (`spec.nodeName`) from the cache, in no particular order. */
  listPods(): readonly V1Pod[];
  /** The PDBs of `namespace` from the cache. */
  listPdbs(namespace: string): readonly V1PodDisruptionBudget[];
  /** Ends this subscription (idempotent). The node's Pod informer stops after the idle time when no one else holds it. */
  release(): void;
}

/**
 * How many of a node's latest changes {@link NodeWatch.waitForChange} can tell apart (older ones
 * always wake a waiter): enough for the PDB status writes of a busy plan between two observations.
 */
export const RECENT_CHANGES = 256;

const DEFAULTS = {
  podIdleMs: 60_000,
  clusterIdleMs: 600_000,
  restartBackoffMs: { initial: 500, max: 30_000 },
  listPageSize: 500,
};

/** A list call the informer makes (paged by {@link pagedList}). */
type Lister<T extends KubernetesObject> = () => Promise<KubernetesListObject<T>>;

/** Fetches every page of a list; the resourceVersion is the first page's (all pages are one snapshot). */
async function pagedList<T extends KubernetesObject>(
  page: (cont: string | undefined) => Promise<KubernetesListObject<T>>,
): Promise<KubernetesListObject<T>> {
  const first = await page(undefined);
  const items = [...first.items];
  let cont = first.metadata?._continue || undefined;
  while (cont) {
    const next = await page(cont);
    items.push(...next.items);
    cont = next.metadata?._continue || undefined;
  }
  return { ...first, metadata: { ...first.metadata, _continue: undefined }, items };
}

/** A notification callback (sync state or change counter moved). */
type Waiter = () => void;

/**
 * One client-node ListWatch with what 2.0.1 lacks: a synced flag with waiters, restart with backoff
 * after an `error`, and no leaked watch when stopped while its first list is in flight.
 */
class ManagedInformer<T extends KubernetesObject> {
  private informer: ListWatch<T> | undefined;
  private running = false;
  private synced = false;
  private errors = 0;
  private failures = 0;
  private lastErr: unknown;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly syncWaiters = new Set<Waiter>();

  constructor(
    readonly what: string,
    private readonly kc: KubeConfig,
    private readonly path: string,
    private readonly fieldSelector: string | undefined,
    private readonly list: Lister<T>,
    private readonly onChange: (obj: T, kind: 'add' | 'update' | 'delete') => void,
    private readonly backoff: { initial: number; max: number },
    private readonly log: Logger,
  ) {}

  /** Starts it (no-op when running). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.synced = false;
    this.errors = 0;
    this.failures = 0;
    this.lastErr = undefined;
    const lw = new ListWatch<T>(
      this.path,
      new Watch(this.kc),
      this.list,
      false,
      undefined,
      this.fieldSelector,
    );
    const changed =
      (kind: 'add' | 'update' | 'delete') =>
      (obj: T): void => {
        if (this.informer === lw) this.onChange(obj, kind);
      };
    lw.on('add', changed('add'));
    lw.on('update', changed('update'));
    lw.on('delete', changed('delete'));
    lw.on('error', (err: unknown) => {
      if (this.informer === lw) this.failed(err);
    });
    this.informer = lw;
    void this.run(lw);
  }

  /** Stops it and drops its objects (no-op when stopped). */
  stop(): void {
    if (!this.running) return;
    this.running = false;
    this.synced = false;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const lw = this.informer;
    this.informer = undefined;
    void lw?.stop();
    for (const w of [...this.syncWaiters]) w();
  }

  /** The cached objects (empty when stopped). */
  objects(namespace?: string): readonly T[] {
    return this.informer?.list(namespace) ?? [];
  }

  /** One cached object. */
  get(name: string, namespace?: string): T | undefined {
    return this.informer?.get(name, namespace);
  }

  isSynced(): boolean {
    return this.synced;
  }

  /** The last error while not synced (see {@link NodeWatch.lastError}). */
  pendingError(): unknown {
    return this.synced ? undefined : this.lastErr;
  }

  state(): InformerState {
    const s: InformerState = {
      what: this.what,
      running: this.running,
      synced: this.synced,
      errors: this.errors,
    };
    if (this.lastErr !== undefined) s.lastError = this.lastErr;
    return s;
  }

  /** Calls `cb` whenever the synced flag or running state may have changed; returns the unsubscribe. */
  onSyncChange(cb: Waiter): () => void {
    this.syncWaiters.add(cb);
    return () => this.syncWaiters.delete(cb);
  }

  /** One (re)start of `lw`: resolves after its list and the opening of its watch, or after an error. */
  private async run(lw: ListWatch<T>): Promise<void> {
    const errorsBefore = this.errors;
    try {
      await lw.start();
    } catch (err) {
      // start() rejects only when the watch request cannot even be built (no cluster, auth plugin error).
      if (this.informer === lw) this.failed(err);
      return;
    }
    if (this.informer !== lw) {
      // Stopped while listing: client-node opened the watch anyway after the list; close it.
      void lw.stop();
      return;
    }
    if (this.errors !== errorsBefore) return; // failed during start: failed() scheduled the restart
    this.failures = 0;
    if (!this.synced) {
      this.synced = true;
      this.log.debug({ informer: this.what }, 'informer synced');
      for (const w of [...this.syncWaiters]) w();
    }
  }

  /** An `error` of the informer (it has stopped itself): schedule the restart. */
  private failed(err: unknown): void {
    if (!this.running) return;
    this.errors++;
    this.failures++;
    this.lastErr = err;
    const delay = Math.min(this.backoff.max, this.backoff.initial * 2 ** Math.min(this.failures - 1, 20));
    this.log.warn(
      { informer: this.what, err: describeError(err), restartInMs: delay },
      'informer failed, restarting',
    );
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      const lw = this.informer;
      if (!this.running || lw === undefined) return;
      void this.run(lw);
    }, delay);
    this.restartTimer.unref();
    for (const w of [...this.syncWaiters]) w();
  }
}

/** `HTTP 403: message` or the error's message, for logs. */
function describeError(err: unknown): string {
  const e = err as { code?: unknown; statusCode?: unknown; message?: unknown; body?: unknown } | null;
  const code =
    typeof e?.code === 'number' ? e.code : typeof e?.statusCode === 'number' ? e.statusCode : undefined;
  const msg = err instanceof Error ? err.message : String(err);
  return code !== undefined ? `HTTP ${code}: ${msg.slice(0, 300)}` : msg.slice(0, 300);
}

/** The Pod informer of one node, with its users and change counter. */
interface NodeEntry {
  node: string;
  pods: ManagedInformer<V1Pod>;
  users: number;
  changes: number;
  /** The last {@link RECENT_CHANGES} moves of `changes`: the new value, and the PDB of a status-only update. */
  recent: { seq: number; pdbStatus?: string }[];
  changeWaiters: Set<Waiter>;
  idleTimer: NodeJS.Timeout | undefined;
}

/**
 * The worker-wide cache: see the module doc. Create one per worker (the activities do), and
 * {@link close} it on shutdown; open watches keep the Node.js event loop alive until then (or until
 * the idle times pass).
 */
export class WatchCache {
  private readonly kc: KubeConfig;
  private readonly log: Logger;
  private readonly opts: Required<Omit<WatchCacheOptions, 'kubeConfig' | 'logger'>>;
  private readonly core: CoreV1Api;
  private readonly policy: PolicyV1Api;
  private readonly nodeInformer: ManagedInformer<V1Node>;
  private readonly pdbInformer: ManagedInformer<V1PodDisruptionBudget>;
  private readonly entries = new Map<string, NodeEntry>();
  /** metadata.generation of every PDB in the cache, by `namespace/name`. */
  private readonly pdbGenerations = new Map<string, number | undefined>();
  private clusterIdleTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** Creates the cache; nothing is listed or watched before the first {@link acquire}. */
  constructor(options: WatchCacheOptions) {
    this.kc = options.kubeConfig;
    this.log = options.logger ?? pino({ name: 'drainflow.watch-cache', level: 'info' });
    this.opts = {
      podIdleMs: options.podIdleMs ?? DEFAULTS.podIdleMs,
      clusterIdleMs: options.clusterIdleMs ?? DEFAULTS.clusterIdleMs,
      restartBackoffMs: options.restartBackoffMs ?? DEFAULTS.restartBackoffMs,
      listPageSize: options.listPageSize ?? DEFAULTS.listPageSize,
    };
    this.core = this.kc.makeApiClient(CoreV1Api);
    this.policy = this.kc.makeApiClient(PolicyV1Api);
    const limit = this.opts.listPageSize;
    this.nodeInformer = new ManagedInformer<V1Node>(
      '/api/v1/nodes',
      this.kc,
      '/api/v1/nodes',
      undefined,
      () => pagedList((c) => this.core.listNode({ limit, _continue: c })),
      (node) => this.bump(this.entries.get(node.metadata?.name ?? '')),
      this.opts.restartBackoffMs,
      this.log,
    );
    this.pdbInformer = new ManagedInformer<V1PodDisruptionBudget>(
      '/apis/policy/v1/poddisruptionbudgets',
      this.kc,
      '/apis/policy/v1/poddisruptionbudgets',
      undefined,
      () => pagedList((c) => this.policy.listPodDisruptionBudgetForAllNamespaces({ limit, _continue: c })),
      (pdb, kind) => {
        const ns = pdb.metadata?.namespace ?? '';
        const key = `${ns}/${pdb.metadata?.name ?? ''}`;
        const generation = pdb.metadata?.generation;
        const statusOnly =
          kind === 'update' && this.pdbGenerations.has(key) && this.pdbGenerations.get(key) === generation;
        if (kind === 'delete') this.pdbGenerations.delete(key);
        else this.pdbGenerations.set(key, generation);
        for (const e of this.entries.values())
          if (e.pods.objects(ns).length > 0) this.bump(e, statusOnly ? key : undefined);
      },
      this.opts.restartBackoffMs,
      this.log,
    );
  }

  /**
   * Subscribes to one node: starts the cluster-wide informers and the node's Pod informer when they
   * are not running (or cancels their idle stop), and returns the handle to read and wait on them.
   * Does not wait for anything; use {@link NodeWatch.waitSynced}.
   *
   * @param node a node name (it need not exist).
   * @throws Error when the cache is closed.
   */
  acquire(node: string): NodeWatch {
    if (this.closed) throw new Error('WatchCache is closed');
    clearTimeout(this.clusterIdleTimer);
    this.clusterIdleTimer = undefined;
    this.nodeInformer.start();
    this.pdbInformer.start();
    let entry = this.entries.get(node);
    if (!entry) {
      const fieldSelector = `spec.nodeName=${node}`;
      const limit = this.opts.listPageSize;
      let created: NodeEntry | undefined = undefined;
      const pods = new ManagedInformer<V1Pod>(
        `/api/v1/pods?fieldSelector=${fieldSelector}`,
        this.kc,
        '/api/v1/pods',
        fieldSelector,
        () => pagedList((c) => this.core.listPodForAllNamespaces({ fieldSelector, limit, _continue: c })),
        () => this.bump(created),
        this.opts.restartBackoffMs,
        this.log,
      );
      created = {
        node,
        pods,
        users: 0,
        changes: 0,
        recent: [],
        changeWaiters: new Set(),
        idleTimer: undefined,
      };
      this.entries.set(node, created);
      entry = created;
    }
    const e = entry;
    clearTimeout(e.idleTimer);
    e.idleTimer = undefined;
    e.users++;
    e.pods.start();
    const informers = [this.nodeInformer, this.pdbInformer, e.pods] as const;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.releaseEntry(e);
    };
    return {
      node,
      get changes() {
        return e.changes;
      },
      isSynced: () => informers.every((i) => i.isSynced()),
      waitSynced: async (signal, giveUp) => {
        const synced = (): boolean => informers.every((i) => i.isSynced());
        const failed = (): boolean =>
          giveUp !== undefined &&
          informers.some((i) => {
            const err = i.pendingError();
            return err !== undefined && giveUp(err);
          });
        await waitUntil(
          () => synced() || failed(),
          (wake) => {
            const offs = informers.map((i) => i.onSyncChange(wake));
            return () => offs.forEach((off) => off());
          },
          signal,
        );
        return synced();
      },
      lastError: () => {
        for (const i of informers) {
          const err = i.pendingError();
          if (err !== undefined) return err;
        }
        return undefined;
      },
      waitForChange: (after, signal, ignorePdbStatus) =>
        waitUntil(
          () => e.changes > after && (!ignorePdbStatus || countsSince(e, after, ignorePdbStatus)),
          (wake) => {
            e.changeWaiters.add(wake);
            return () => e.changeWaiters.delete(wake);
          },
          signal,
        ),
      getNode: () => this.nodeInformer.get(node),
      listPods: () => e.pods.objects(),
      listPdbs: (namespace) => this.pdbInformer.objects(namespace),
      release,
    };
  }

  /** The state of every informer of the cache (cluster-wide first, then per node, by node name). */
  informers(): InformerState[] {
    return [
      this.nodeInformer.state(),
      this.pdbInformer.state(),
      ...[...this.entries.values()]
        .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
        .map((e) => e.pods.state()),
    ];
  }

  /** Stops every informer and timer; later {@link acquire}s throw. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.clusterIdleTimer);
    for (const e of this.entries.values()) {
      clearTimeout(e.idleTimer);
      e.pods.stop();
      for (const w of [...e.changeWaiters]) w();
    }
    this.entries.clear();
    this.nodeInformer.stop();
    this.pdbInformer.stop();
    this.pdbGenerations.clear();
  }

  private bump(entry: NodeEntry | undefined, pdbStatus?: string): void {
    if (!entry) return;
    entry.changes++;
    entry.recent.push(pdbStatus !== undefined ? { seq: entry.changes, pdbStatus } : { seq: entry.changes });
    if (entry.recent.length > RECENT_CHANGES) entry.recent.shift();
    for (const w of [...entry.changeWaiters]) w();
  }

  private releaseEntry(e: NodeEntry): void {
    e.users--;
    if (e.users > 0 || this.closed) return;
    e.idleTimer = setTimeout(() => {
      if (e.users > 0 || this.entries.get(e.node) !== e) return;
      e.pods.stop();
      this.entries.delete(e.node);
      this.log.debug({ node: e.node }, 'pod informer of idle node stopped');
      if (this.entries.size === 0) this.scheduleClusterIdle();
    }, this.opts.podIdleMs);
    e.idleTimer.unref();
  }

  private scheduleClusterIdle(): void {
    clearTimeout(this.clusterIdleTimer);
    this.clusterIdleTimer = setTimeout(() => {
      if (this.entries.size > 0) return;
      this.nodeInformer.stop();
      this.pdbInformer.stop();
      this.pdbGenerations.clear();
      this.log.debug('cluster-wide informers stopped (idle)');
    }, this.opts.clusterIdleMs);
    this.clusterIdleTimer.unref();
  }
}

/**
 * Resolves `true` once `ready()` holds (checked now and on every `subscribe` notification), `false`
 * when `signal` aborts first.
 */
/**
 * Whether a change of `e` newer than `after` counts for a waiter that ignores the status-only
 * updates of the PDBs `ignore` names: any other change does, and so does one too old to be told
 * apart (before the remembered ones).
 */
function countsSince(e: NodeEntry, after: number, ignore: (key: string) => boolean): boolean {
  const oldest = e.recent[0]?.seq;
  if (oldest === undefined || oldest > after + 1) return true;
  for (let i = e.recent.length - 1; i >= 0; i--) {
    const c = e.recent[i]!;
    if (c.seq <= after) return false;
    if (c.pdbStatus === undefined || !ignore(c.pdbStatus)) return true;
  }
  return false;
}

function waitUntil(
  ready: () => boolean,
  subscribe: (wake: Waiter) => () => void,
  signal?: AbortSignal,
): Promise<boolean> {
  if (ready()) return Promise.resolve(true);
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const finish = (value: boolean): void => {
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const onAbort = (): void => finish(false);
    const unsubscribe = subscribe(() => {
      if (ready()) finish(true);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
