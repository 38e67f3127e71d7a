/**
 * Stops set while no operator led, relayed by every replica as it starts, leading or not.
 *
 * Why: after a crash of the leader (`kill -9`, OOM) its Lease stays held until it expires (15 s
 * without renewal), so a restarted operator relays spec changes only then; the worker, though,
 * resumes the drains at once. A `spec.paused: true` or `spec.abort: true` written, or a plan
 * deleted, while drainflow was down would let evictions go on for those seconds. A stop is safe to
 * relay from any replica and more than once: the workflows treat a repeated pause or abort as a
 * no-op, and the plan workflow ignores a pause or resume older than the newest generation it has
 * seen (`control` in src/workflows/plan/controls.ts), so a standby's pause cannot undo
 * the leader's newer resume. Each stop goes to the plan's running node workflows as well
 * (src/operator/node-stops.ts: after a worker restart a node's task may otherwise evict once more
 * before its plan forwards the stop); the nodes apply the same generation check
 * (`isStaleControl` in src/drain/node/controls.ts). Resume and release wait for the leader, as every
 * other change does.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { MaintenancePlan } from '../api/plan.js';
import { EventReason, FINAL_PLAN_PHASES, type PlanPhase } from '../api/reasons.js';
import { EventRecorder } from '../k8s/events.js';
import { PlanApi, asPlan } from '../k8s/plans.js';
import { abortSignal, pauseSignal } from '../contract/plan-messages.js';
import { planWorkflowId } from '../contract/names.js';
import { nodeStopWords, stopNodeWorkflows, type NodeStop } from './node-stops.js';

/** A stop a plan's spec asks for. */
export type Stop = NodeStop;

/**
 * The stops to relay for `plan` before this replica leads, for a plan whose workflow runs
 * (status.workflow set, phase not final):
 * - `abort` when the plan is being deleted (metadata.deletionTimestamp set; the operator's
 *   finalizer holds it): deleting a plan aborts its drain, and a deletion made while drainflow was
 *   down would otherwise let evictions go on until the new leader's deletion handling;
 * - otherwise, when the workflow has not reported the spec's generation yet
 *   (status.observedGeneration below metadata.generation: it may not have been told), `pause` when
 *   spec.paused and `abort` when spec.abort is true.
 * Empty otherwise.
 */
export function pendingStops(plan: MaintenancePlan): Stop[] {
  const generation = plan.metadata.generation ?? 0;
  const status = plan.status;
  if (!status?.workflow?.workflowId) return [];
  if (status.phase !== undefined && FINAL_PLAN_PHASES.has(status.phase as PlanPhase)) return [];
  if (plan.metadata.deletionTimestamp) return ['abort'];
  if ((status.observedGeneration ?? 0) >= generation) return [];
  const spec = (plan.spec ?? {}) as { paused?: unknown; abort?: unknown };
  const stops: Stop[] = [];
  if (spec.paused === true) stops.push('pause');
  if (spec.abort === true) stops.push('abort');
  return stops;
}

/** What {@link relayPendingStops} needs. */
export interface StopRelayDeps {
  kubeConfig: KubeConfig;
  /** Temporal client, namespace set. */
  client: Client;
  /** `--plan-selector`: the plans of this installation. */
  planSelector?: string;
  logger: Logger;
}

/**
 * Lists the plans once and sends each its {@link pendingStops} as signals carrying the plan's
 * generation, to the plan workflow and to its running node workflows ({@link stopNodeWorkflows}),
 * with one Normal `SignalSent` Event per stop. Best effort: a plan whose workflow has closed is
 * skipped; any other error is logged at `warn` and ends the pass (the leader relays every change
 * once it leads).
 * @returns how many signals were sent to plan workflows.
 */
export async function relayPendingStops(deps: StopRelayDeps): Promise<number> {
  const log = deps.logger;
  const events = new EventRecorder(deps.kubeConfig, log);
  let sent = 0;
  try {
    const list = await new PlanApi(deps.kubeConfig).list(deps.planSelector);
    for (const item of list.items) {
      const plan = asPlan(item);
      const { name, uid } = plan.metadata;
      const generation = plan.metadata.generation ?? 0;
      const workflowId = planWorkflowId({ name, uid });
      for (const stop of pendingStops(plan)) {
        try {
          await deps.client.workflow
            .getHandle(workflowId)
            .signal(stop === 'pause' ? pauseSignal : abortSignal, { generation });
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) break;
          throw err;
        }
        sent++;
        // Best effort: the plan forwards the stop to its nodes in any case.
        const nodes = await stopNodeWorkflows(deps.client, workflowId, stop, generation).catch(
          (err: unknown) => {
            log.warn({ err, plan: name, signal: stop }, 'sending the stop to the node workflows failed');
            return [];
          },
        );
        log.info(
          { plan: name, signal: stop, generation, nodeWorkflows: nodes.length },
          'stop relayed before leading',
        );
        await events.record({
          plan: { name, uid },
          type: 'Normal',
          reason: EventReason.SignalSent,
          message: `sent ${stop} (generation ${generation}) to workflow ${workflowId}${nodeStopWords(nodes)}: ${plan.metadata.deletionTimestamp ? 'the plan is being deleted' : 'set while no operator led'}, relayed at start-up before this replica leads`,
        });
      }
    }
  } catch (err) {
    log.warn({ err }, 'relaying stops before leading failed; the leader relays them');
  }
  return sent;
}
