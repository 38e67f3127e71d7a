/**
 * The drainflow operator: watches MaintenancePlans, adds the finalizer, starts each
 * plan's workflow once, relays spec.paused / spec.abort / spec.release as signals, and on deletion
 * aborts the workflow and waits for it to hand the nodes back before removing the finalizer. It
 * never acts on status-only changes.
 *
 * With leader election (the default) only the replica holding the Lease `drainflow-operator` in
 * `config.leaseNamespace` watches and acts; the others wait, and take over within seconds when the
 * leader stops (it releases the Lease) or within the lease duration when it dies. One exception:
 * as it starts, every replica relays the pauses and aborts its plans' workflows have not seen
 * (`stop-relay.ts`), so a stop written while no operator led holds before a Lease expires.
 *
 * Modules: `src/k8s/lease.ts` (leader election), `controller.ts` (informer and reconcile),
 * `queue.ts` (per-plan serial queue), `src/k8s/plans.ts` (MaintenancePlan calls), `stop-relay.ts`
 * (stops relayed before leading).
 */
import { createHash } from 'node:crypto';
import { PlanController, type ControllerDeps } from './controller.js';
import { relayPendingStops } from './stop-relay.js';
import { LeaderElector } from '../k8s/lease.js';

/** Name of the leader-election Lease. */
export const LEASE_NAME = 'drainflow-operator';

/**
 * The Lease of an installation: {@link LEASE_NAME}, suffixed with a hash of `--plan-selector` when
 * one is set, so installations for different plans elect their leaders independently.
 */
export function leaseName(planSelector: string | undefined): string {
  return planSelector
    ? `${LEASE_NAME}-${createHash('sha256').update(planSelector).digest('hex').slice(0, 10)}`
    : LEASE_NAME;
}

/** What the operator needs: what its controller needs. */
export type OperatorDeps = ControllerDeps;

/** A running operator. */
export interface OperatorHandle {
  /**
   * Readiness: the leader once its plan cache is synced; a standby replica while it can reach
   * the Lease API (a healthy standby is ready to take over).
   */
  ready(): boolean;
  /** Stops watching, lets the current reconciles finish, releases the Lease. Idempotent. */
  stop(): Promise<void>;
  /** Resolves when stopped; rejects on a fatal error. */
  done: Promise<void>;
}

/** Starts the operator. Resolves once it runs (before it is the leader or synced: see `ready()`). */
export async function startOperator(deps: OperatorDeps): Promise<OperatorHandle> {
  const { config, logger } = deps;
  const log = logger.child({ identity: config.identity });
  let resolveDone!: () => void;
  let rejectDone!: (err: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  // Callers may only await stop(); keep an unobserved rejection from crashing the process.
  done.catch(() => undefined);

  if (!config.leaderElection) {
    log.info('leader election disabled: acting as the only replica');
    const controller = new PlanController({ ...deps, logger: log });
    await controller.start();
    let stopping: Promise<void> | undefined;
    return {
      ready: () => controller.ready(),
      stop: () =>
        (stopping ??= controller.stop().then(
          () => resolveDone(),
          (err: unknown) => {
            rejectDone(err);
            throw err;
          },
        )),
      done,
    };
  }

  const elector = new LeaderElector({
    kubeConfig: deps.kubeConfig,
    namespace: config.leaseNamespace,
    name: leaseName(config.planSelector),
    identity: config.identity,
    logger: log,
  });
  let controller: PlanController | undefined;
  const stopSignal = new AbortController();
  const loop = elector.run(
    {
      onStartedLeading: async () => {
        const c = new PlanController({ ...deps, logger: log });
        controller = c;
        await c.start();
      },
      onStoppedLeading: async () => {
        const c = controller;
        controller = undefined;
        await c?.stop();
      },
    },
    stopSignal.signal,
  );
  loop.then(
    () => resolveDone(),
    (err: unknown) => {
      log.error({ err }, 'operator failed');
      rejectDone(err);
    },
  );
  // Best effort, beside the campaign: never throws (see relayPendingStops).
  void relayPendingStops({
    kubeConfig: deps.kubeConfig,
    client: deps.client,
    ...(config.planSelector ? { planSelector: config.planSelector } : {}),
    logger: log,
  });
  log.info(
    { lease: `${config.leaseNamespace}/${leaseName(config.planSelector)}` },
    'campaigning for the Lease',
  );
  let stopping: Promise<void> | undefined;
  return {
    ready: () => (elector.isLeader() ? Boolean(controller?.ready()) : elector.healthy()),
    stop: () => {
      stopping ??= (async () => {
        stopSignal.abort();
        await done;
      })();
      return stopping;
    },
    done,
  };
}
