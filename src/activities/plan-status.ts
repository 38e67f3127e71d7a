/**
 * The plan activities: {@link DrainActivities.writePlanStatus} (the workflow's state rendered into
 * the MaintenancePlan's status and written), {@link DrainActivities.publishStatus} (a status
 * written as given) and {@link DrainActivities.recordEvent} (Events on the plan, src/k8s/events.ts).
 */
import { PLURAL, type MaintenancePlan, type MaintenancePlanStatus } from '../api/plan.js';
import type { PlanRef } from '../contract/names.js';
import { statusEquals } from '../drain/conditions.js';
import { renderPlanStatus } from '../drain/plan-status.js';
import { CONFLICT, retryOnConflict } from '../k8s/patch.js';
import type { KubernetesPort } from '../k8s/port.js';
import type { DrainActivities } from './types.js';

/** The plan activities. */
export type PlanStatusActivities = Pick<DrainActivities, 'writePlanStatus' | 'publishStatus' | 'recordEvent'>;

/**
 * Builds the plan activities over `port`.
 *
 * @param port the Kubernetes calls (src/k8s/port.ts).
 */
export function createPlanStatusActivities(port: KubernetesPort): PlanStatusActivities {
  /**
   * Writes the status `render` makes of the stored plan to its status subresource, replacing it whole
   * (PUT of the object read, with its resourceVersion, so a concurrent writer causes a 409 that is
   * retried on a fresh read, see src/k8s/patch.ts). Skips the write when the stored status already
   * equals it ({@link statusEquals}: key order and `undefined` ignored). A plan that is absent or has
   * another uid is not an error.
   */
  const write = (plan: PlanRef, render: (current: MaintenancePlan) => MaintenancePlanStatus) =>
    retryOnConflict(`update ${PLURAL}/${plan.name}/status`, async () => {
      const current = await port.readPlan(plan.name);
      if (!current || current.metadata?.uid !== plan.uid) return { written: false, exists: false };
      const status = render(current);
      if (statusEquals(current.status ?? {}, status)) return { written: false, exists: true };
      const answer = await port.replacePlanStatus(current, status);
      if (answer === 'conflict') return CONFLICT;
      if (answer === 'gone') return { written: false, exists: false };
      return { written: true, exists: true };
    });
  return {
    /**
     * Renders the plan's status from the workflow's state (src/drain/plan-status.ts) and writes it
     * (see `write`). The previous conditions are the stored status's: a condition whose status
     * holds keeps its lastTransitionTime.
     *
     * Note: the API server prunes fields the CRD schema does not declare, so a status with undeclared
     * fields would never compare equal and would be rewritten on every call.
     *
     * @returns `{ written, exists }`.
     * @throws TransientKubernetesError on transport errors / 5xx / persistent conflicts;
     *   PermanentKubernetesError on other 4xx (e.g. 422 when the status violates the CRD schema).
     */
    async writePlanStatus({ plan, state }) {
      return write(plan, (current) =>
        renderPlanStatus({
          ...state,
          state: { ...state.state, conditions: current.status?.conditions ?? [] },
        }),
      );
    },

    /**
     * Writes `status` as given (see `write`).
     * @returns `{ written, exists }`.
     * @throws as {@link writePlanStatus}.
     */
    async publishStatus({ plan, status }) {
      return write(plan, () => status);
    },

    /**
     * Records a core/v1 Event on the plan, aggregating repeats (see `EventRecorder.record` in
     * src/k8s/events.ts). Best effort: every error is logged and swallowed.
     */
    async recordEvent(input) {
      await port.recordEvent(input);
    },
  };
}
