/**
 * The Event recorder of MaintenancePlans: core/v1 Events, aggregated like client-go's
 * `record.EventRecorder` (and the kubelet's) does for repeats. Used by the `recordEvent` activity
 * and by the operator.
 *
 * RBAC: events get/create/patch in {@link EVENT_NAMESPACE}.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { CoreV1Api, type CoreV1Event, type KubeConfig } from './client.js';
import type { Logger } from 'pino';
import { API_VERSION, KIND } from '../api/plan.js';
import type { PlanRef } from '../contract/names.js';
import { apiCode, classifyError } from './errors.js';
import { MERGE_PATCH } from './patch.js';

/** Namespace of the Events recorded on (cluster-scoped) MaintenancePlans, as Kubernetes does for Nodes. */
export const EVENT_NAMESPACE = 'default';

/** `source.component` / `reportingComponent` of the Events this operator records. */
export const EVENT_COMPONENT = 'drainflow';

/** Attempts of the read → patch-or-create loop before the Event is given up (logged). */
const EVENT_ATTEMPTS = 3;

/** One Event to record on a plan. */
export interface PlanEvent {
  plan: PlanRef;
  type: 'Normal' | 'Warning';
  /** CamelCase reason, e.g. `NodeDrained`. */
  reason: string;
  /** Free text; cut to 1024 characters. */
  message: string;
}

/** Records Events on MaintenancePlans. See the module comment. */
export class EventRecorder {
  private readonly core: CoreV1Api;

  /**
   * @param kubeConfig where and as whom to reach the API server.
   * @param log where a failed recording is logged (at `warn`).
   */
  constructor(
    kubeConfig: KubeConfig,
    private readonly log: Logger,
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  /**
   * Records a core/v1 Event on the plan in namespace {@link EVENT_NAMESPACE} (involvedObject
   * MaintenancePlan name/uid, source component {@link EVENT_COMPONENT}). Repeated events are
   * aggregated: the Event name is `<plan>.<hash>` where the hash covers plan uid, type, reason and
   * message, and an existing Event gets `count + 1` and a new `lastTimestamp` (merge patch guarded by
   * resourceVersion; 409/404 re-read) instead of a new object; a create that meets 409 (created
   * concurrently) aggregates into it. Best effort: every error is logged and swallowed.
   */
  async record({ plan, type, reason, message }: PlanEvent): Promise<void> {
    await this.write(plan, { apiVersion: API_VERSION, kind: KIND }, type, reason, message);
  }

  /**
   * Records a core/v1 Event on a Node (involvedObject v1 Node name/uid) in namespace {@link
   * EVENT_NAMESPACE}, where Kubernetes records the Events of Nodes (`kubectl describe node` shows
   * them), aggregated and best effort as {@link record}.
   */
  async recordOnNode(
    node: { name: string; uid: string },
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    await this.write(node, { apiVersion: 'v1', kind: 'Node' }, type, reason, message);
  }

  private async write(
    plan: PlanRef,
    kind: { apiVersion: string; kind: string },
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const core = this.core;
    const msg = message.length > 1024 ? `${message.slice(0, 1021)}...` : message;
    const hash = createHash('sha256')
      .update(`${plan.uid}\n${type}\n${reason}\n${msg}`)
      .digest('hex')
      .slice(0, 16);
    const name = `${plan.name.slice(0, 236)}.${hash}`;
    const namespace = EVENT_NAMESPACE;
    const now = new Date();
    try {
      for (let attempt = 1; attempt <= EVENT_ATTEMPTS; attempt++) {
        let existing: CoreV1Event | undefined;
        try {
          existing = await core.readNamespacedEvent({ name, namespace });
        } catch (err) {
          if (apiCode(err) !== 404) throw err;
        }
        if (existing) {
          try {
            await core.patchNamespacedEvent(
              {
                name,
                namespace,
                body: {
                  metadata: { resourceVersion: existing.metadata?.resourceVersion },
                  count: (existing.count ?? 1) + 1,
                  lastTimestamp: now.toISOString(),
                },
              },
              MERGE_PATCH,
            );
            return;
          } catch (err) {
            if (apiCode(err) === 409 || apiCode(err) === 404) continue;
            throw err;
          }
        }
        try {
          await core.createNamespacedEvent({
            namespace,
            body: {
              metadata: { name, namespace },
              involvedObject: { ...kind, name: plan.name, uid: plan.uid },
              reason,
              message: msg,
              type,
              source: { component: EVENT_COMPONENT },
              reportingComponent: EVENT_COMPONENT,
              reportingInstance: hostname(),
              firstTimestamp: now,
              lastTimestamp: now,
              count: 1,
            },
          });
          return;
        } catch (err) {
          if (apiCode(err) === 409) continue; // created concurrently: aggregate into it
          throw err;
        }
      }
    } catch (err) {
      this.log.warn(
        { plan: plan.name, reason, err: classifyError(err, `record event ${name}`).message },
        'recordEvent failed',
      );
    }
  }
}
