/**
 * Leader election on a `coordination.k8s.io/v1` Lease, written by hand (client-node 2.0.1 ships no
 * leader-election helper), with client-go's semantics:
 *
 * - a candidate reads the Lease every {@link LeaderElectionOptions.retryPeriodMs}; it takes the Lease
 *   when nobody holds it (`holderIdentity` empty: the previous leader released it) or when the
 *   record has not changed for `leaseDurationSeconds` as observed on this process's own clock (no
 *   trust in other machines' clocks);
 * - the leader renews every {@link LeaderElectionOptions.renewPeriodMs}; when it cannot renew for
 *   {@link LeaderElectionOptions.renewDeadlineMs} (shorter than the lease duration), or finds another
 *   holder, it stops leading before anybody else may start;
 * - every write is a PUT with the resourceVersion read, so two candidates never both win;
 * - on stop the leader releases the Lease (clears `holderIdentity`, duration 1 s) so a standby
 *   replica takes over within one retry period instead of a whole lease duration.
 */
import { CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from './client.js';
import type { Logger } from 'pino';
import { apiCode } from './errors.js';

/** Options of {@link LeaderElector}. Durations in ms unless named `Seconds`. */
export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** holderIdentity written into the Lease (unique per process). */
  identity: string;
  logger: Logger;
  /** Default 15. */
  leaseDurationSeconds?: number;
  /** Default 5000. */
  renewPeriodMs?: number;
  /** Default 10000: leadership is given up when no renewal succeeded for this long. */
  renewDeadlineMs?: number;
  /** How often a candidate tries to take the Lease; default 2000. */
  retryPeriodMs?: number;
}

/** What {@link LeaderElector.run} calls when leadership starts and ends. */
export interface LeaderCallbacks {
  /** Called when this process became the leader. A rejection ends leadership (and is logged). */
  onStartedLeading(): Promise<void>;
  /** Called when leadership ended (lost, or stopping); must stop every action before it resolves. */
  onStoppedLeading(): Promise<void>;
}

type Attempt = 'leader' | 'held';

/** A promise resolved after `ms` or when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Leader election on one Lease. See the module comment. */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly opts: Required<Omit<LeaderElectionOptions, 'kubeConfig' | 'logger'>>;
  private readonly log: Logger;
  private leading = false;
  /** Last time a call to the Lease API succeeded (ms since epoch), for readiness of a standby. */
  private lastContactMs = 0;
  /** client-go's observedRecord/observedTime: the record as last seen and when it last changed. */
  private observedKey: string | undefined;
  private observedAtMs = 0;

  constructor(options: LeaderElectionOptions) {
    this.api = options.kubeConfig.makeApiClient(CoordinationV1Api);
    this.log = options.logger.child({ lease: `${options.namespace}/${options.name}` });
    this.opts = {
      namespace: options.namespace,
      name: options.name,
      identity: options.identity,
      leaseDurationSeconds: options.leaseDurationSeconds ?? 15,
      renewPeriodMs: options.renewPeriodMs ?? 5000,
      renewDeadlineMs: options.renewDeadlineMs ?? 10_000,
      retryPeriodMs: options.retryPeriodMs ?? 2000,
    };
  }

  /** Whether this process currently holds the Lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Whether the Lease API answered within the last lease duration (a healthy standby). */
  healthy(): boolean {
    return Date.now() - this.lastContactMs < this.opts.leaseDurationSeconds * 1000;
  }

  /**
   * Campaigns, leads, and campaigns again after losing the Lease, until `signal` aborts; then
   * stops leading (callback), releases the Lease if held, and resolves.
   */
  async run(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      // ---- candidate ----
      let acquired = false;
      while (!signal.aborted && !acquired) {
        try {
          acquired = (await this.tryAcquireOrRenew()) === 'leader';
        } catch (err) {
          this.log.warn({ err }, 'reading or writing the Lease failed; trying again');
        }
        if (!acquired) await sleep(this.opts.retryPeriodMs, signal);
      }
      if (!acquired) break;
      this.leading = true;
      this.log.info('became leader');
      let lastRenewMs = Date.now();
      let startFailed = false;
      try {
        await callbacks.onStartedLeading();
      } catch (err) {
        this.log.error({ err }, 'starting to lead failed; giving up leadership');
        startFailed = true;
      }
      // ---- leader: renew ----
      while (!signal.aborted && !startFailed) {
        await sleep(this.opts.renewPeriodMs, signal);
        if (signal.aborted) break;
        let result: Attempt | undefined;
        try {
          result = await this.tryAcquireOrRenew();
        } catch (err) {
          this.log.warn({ err }, 'renewing the Lease failed');
        }
        if (result === 'leader') {
          lastRenewMs = Date.now();
          continue;
        }
        if (result === 'held') {
          this.log.error('the Lease is held by another replica: stopping');
          break;
        }
        if (Date.now() - lastRenewMs >= this.opts.renewDeadlineMs) {
          this.log.error(
            { sinceLastRenewMs: Date.now() - lastRenewMs },
            'could not renew the Lease in time: stopping',
          );
          break;
        }
      }
      this.leading = false;
      try {
        await callbacks.onStoppedLeading();
      } catch (err) {
        this.log.error({ err }, 'stopping to lead failed');
      }
      if (startFailed) await sleep(this.opts.retryPeriodMs, signal);
    }
    await this.release();
  }

  /** One read and, when allowed, one write of the Lease. @throws on API errors other than conflicts. */
  private async tryAcquireOrRenew(): Promise<Attempt> {
    const { namespace, name, identity, leaseDurationSeconds } = this.opts;
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (apiCode(err) !== 404) throw err;
      const now = new V1MicroTime();
      try {
        await this.api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            },
          },
        });
      } catch (createErr) {
        if (apiCode(createErr) === 409) return 'held'; // another candidate created it first
        throw createErr;
      }
      this.lastContactMs = Date.now();
      return 'leader';
    }
    this.lastContactMs = Date.now();
    const spec = lease.spec ?? {};
    const key = JSON.stringify([
      spec.holderIdentity,
      String(spec.renewTime),
      spec.leaseTransitions,
      spec.leaseDurationSeconds,
    ]);
    if (key !== this.observedKey) {
      this.observedKey = key;
      this.observedAtMs = Date.now();
    }
    const holder = spec.holderIdentity;
    const durationMs = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (holder && holder !== identity && this.observedAtMs + durationMs > Date.now()) return 'held';
    const taking = holder !== identity;
    const now = new V1MicroTime();
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds,
      renewTime: now,
      acquireTime: taking ? now : (spec.acquireTime ?? now),
      leaseTransitions: taking && holder ? (spec.leaseTransitions ?? 0) + 1 : (spec.leaseTransitions ?? 0),
    };
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
    } catch (err) {
      if (apiCode(err) === 409) return 'held'; // somebody wrote it since we read it
      throw err;
    }
    if (taking) this.log.info({ previousHolder: holder || undefined }, 'took the Lease');
    return 'leader';
  }

  /** Clears holderIdentity when this process holds the Lease (best effort, a few attempts). */
  private async release(): Promise<void> {
    const { namespace, name, identity } = this.opts;
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        const lease = await this.api.readNamespacedLease({ name, namespace });
        if (lease.spec?.holderIdentity !== identity) return;
        const now = new V1MicroTime();
        lease.spec = {
          ...lease.spec,
          holderIdentity: undefined,
          leaseDurationSeconds: 1,
          renewTime: now,
          acquireTime: now,
        };
        await this.api.replaceNamespacedLease({ name, namespace, body: lease });
        this.log.info('released the Lease');
        return;
      } catch (err) {
        if (apiCode(err) === 404) return;
        if (apiCode(err) !== 409) {
          this.log.warn({ err }, 'releasing the Lease failed');
          return;
        }
      }
    }
  }
}
