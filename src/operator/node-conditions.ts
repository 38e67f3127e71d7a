/**
 * The operator's projection of each plan's `status.nodes[]` onto the Nodes' lifecycle conditions
 * (`MaintenancePlanned`, `DrainInProgress`, `Drained`: src/drain/node-conditions.ts), so that
 * storage operators, alerting and dashboards see a node's maintenance on the Node itself.
 *
 * Level-triggered on the plan: every plan the informer reports (status writes included) is queued
 * (per plan, coalesced: src/operator/queue.ts); a run computes what each node of `status.nodes[]`
 * should carry and, for the nodes whose wanted conditions differ from what this process last wrote
 * or confirmed, reads the Node and writes only what differs (src/k8s/node-conditions.ts: only on a
 * Node carrying the plan's claim, guarded by its resourceVersion). A status write that changes no
 * node's phase makes no API call.
 *
 * This is an operator action on a status-only change, which the operator otherwise never takes
 * (docs/design-decisions.md): it writes Nodes, never the plan, and the worker's node observation
 * does not count a Node's conditions as a change (src/activities/observe.ts fingerprints existence,
 * uid, `spec.unschedulable` and the release annotation), so no write leads back to a status write.
 *
 * The removal at the hand-back is not here: `releaseNode` removes the conditions in the same
 * activity as the claim (the workflow's hand-back, the operator's hand-back on deletion and the
 * orphan sweep all use it), so they go even while the operator is down.
 */
import type { Logger } from 'pino';
import type { MaintenancePlan } from '../api/plan.js';
import { wantedNodeConditions } from '../drain/node-conditions.js';
import { syncNodeConditions } from '../k8s/node-conditions.js';
import type { KubernetesPort } from '../k8s/port.js';
import { KeyedQueue } from './queue.js';

/** Projects plans' node phases onto Node conditions. Feed it with {@link observe}; {@link close} at stop. */
export class NodeConditionProjector {
  private readonly queue: KeyedQueue;
  /** The latest object of each plan name; `undefined` once deleted. */
  private readonly latest = new Map<string, MaintenancePlan | undefined>();
  /** Per plan UID, per node: the wanted conditions (JSON) last written or found in place. */
  private readonly done = new Map<string, Map<string, string>>();

  constructor(
    private readonly port: Pick<KubernetesPort, 'readNode' | 'patchNodeStatus'>,
    private readonly log: Logger,
  ) {
    this.queue = new KeyedQueue((name) => this.project(name), log);
  }

  /** The informer saw `plan` (added, updated, or `deleted`). */
  observe(plan: MaintenancePlan, deleted: boolean): void {
    const name = plan.metadata?.name;
    if (!name) return;
    this.latest.set(name, deleted ? undefined : plan);
    if (deleted) this.done.delete(plan.metadata.uid);
    this.queue.add(name);
  }

  /** Stops taking work and waits for the runs under way. */
  async close(): Promise<void> {
    await this.queue.close();
  }

  /**
   * One run for a plan: each node whose wanted conditions changed since the last run is synced. A
   * node that wants none and was never written by this process is skipped (its hand-back removed
   * them). A plan being deleted is left to the deletion's hand-back.
   *
   * @throws the first API error (the queue retries the plan with backoff; nodes done stay done).
   */
  private async project(name: string): Promise<void> {
    const plan = this.latest.get(name);
    if (!plan) {
      this.latest.delete(name);
      return;
    }
    if (plan.metadata.deletionTimestamp) return;
    const ref = { name, uid: plan.metadata.uid };
    let done = this.done.get(ref.uid);
    if (!done) this.done.set(ref.uid, (done = new Map()));
    for (const n of plan.status?.nodes ?? []) {
      const wanted = wantedNodeConditions(name, plan.status?.phase, n);
      const key = JSON.stringify(wanted);
      if (done.get(n.name) === key) continue;
      if (wanted.length === 0 && !done.has(n.name)) {
        done.set(n.name, key);
        continue;
      }
      const write = await syncNodeConditions(this.port, n.name, ref, wanted);
      if (write === 'written') {
        this.log.info(
          {
            plan: name,
            node: n.name,
            phase: n.phase,
            conditions: wanted.map((w) => `${w.type}=${w.status}`),
          },
          wanted.length ? 'node lifecycle conditions written' : 'node lifecycle conditions removed',
        );
      }
      done.set(n.name, key);
    }
  }
}
