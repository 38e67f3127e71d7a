/**
 * The MaintenancePlan API: every read and write of a plan, for the activities (read, status PUT),
 * the operator (list for its informer, finalizer, InvalidSpec status) and the CLI (read, spec
 * flags).
 *
 * Writes never PUT the whole object: the finalizer is a merge patch of metadata.finalizers guarded
 * by resourceVersion; the spec flags and the InvalidSpec status are merge patches; the workflow's
 * status is a PUT of the status subresource with the resourceVersion read.
 *
 * Errors are the client's as thrown (`ApiException` with the HTTP code, or a transport error),
 * except where a method says otherwise; callers classify them (src/k8s/errors.ts).
 */
import {
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from './client.js';
import {
  API_VERSION,
  FINALIZER,
  GROUP,
  KIND,
  PLURAL,
  VERSION,
  type MaintenancePlan,
  type MaintenancePlanSpec,
  type MaintenancePlanSpecInput,
  type MaintenancePlanStatus,
} from '../api/plan.js';
import { apiCode } from './errors.js';
import { CONFLICT, MERGE_PATCH, retryOnConflict } from './patch.js';

/** API path of the MaintenancePlans (cluster-scoped), for the informer's watch. */
export const PLANS_PATH = `/apis/${GROUP}/${VERSION}/${PLURAL}`;

/**
 * A plan as the informer delivers it: the JSON the API server sent (timestamps are strings), typed
 * by client-node as a generic KubernetesObject.
 */
export function asPlan(obj: KubernetesObject): MaintenancePlan {
  return obj as unknown as MaintenancePlan;
}

/** The MaintenancePlan calls of drainflow (cluster-scoped custom objects of {@link GROUP}). */
export class PlanApi {
  private readonly custom: CustomObjectsApi;

  /** @param kubeConfig where and as whom to reach the API server. */
  constructor(kubeConfig: KubeConfig) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /** Lists every plan (the informer's list function; items are plain JSON, see {@link asPlan}). */
  async list(labelSelector?: string): Promise<KubernetesListObject<KubernetesObject>> {
    return (await this.custom.listClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      ...(labelSelector ? { labelSelector } : {}),
    })) as KubernetesListObject<KubernetesObject>;
  }

  /** Reads one plan as raw JSON (timestamps are strings); `undefined` when absent (404). */
  async get(name: string): Promise<MaintenancePlan | undefined> {
    try {
      return (await this.custom.getClusterCustomObject({
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name,
      })) as MaintenancePlan;
    } catch (err) {
      if (apiCode(err) === 404) return undefined;
      throw err;
    }
  }

  /** Creates a plan from its metadata and spec. @throws ApiException (409 when it exists, 422 when invalid). */
  async create(
    metadata: { name: string; labels?: Record<string, string> },
    spec: MaintenancePlanSpecInput,
  ): Promise<MaintenancePlan> {
    return (await this.custom.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      body: { apiVersion: API_VERSION, kind: KIND, metadata, spec },
    })) as MaintenancePlan;
  }

  /**
   * Deletes the plan (its finalizer holds it until the operator has handed the nodes back).
   * @returns false when there was no such plan (404).
   */
  async delete(name: string): Promise<boolean> {
    try {
      await this.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name });
      return true;
    } catch (err) {
      if (apiCode(err) === 404) return false;
      throw err;
    }
  }

  /**
   * Adds {@link FINALIZER} to the plan with this uid unless present or the plan is being deleted.
   * @returns whether the finalizer is (now) on the plan.
   */
  async ensureFinalizer(name: string, uid: string): Promise<boolean> {
    return this.editFinalizers(name, uid, (plan, list) => {
      if (plan.metadata.deletionTimestamp || list.includes(FINALIZER)) return undefined;
      return [...list, FINALIZER];
    }).then((plan) => Boolean(plan?.metadata.finalizers?.includes(FINALIZER)));
  }

  /** Removes {@link FINALIZER} from the plan with this uid (no-op when absent or already removed). */
  async removeFinalizer(name: string, uid: string): Promise<void> {
    await this.editFinalizers(name, uid, (_plan, list) =>
      list.includes(FINALIZER) ? list.filter((f) => f !== FINALIZER) : undefined,
    );
  }

  /** Merge-patches the plan's status subresource. */
  async patchStatus(name: string, status: MaintenancePlanStatus): Promise<void> {
    await this.custom.patchClusterCustomObjectStatus(
      { group: GROUP, version: VERSION, plural: PLURAL, name, body: { status } },
      MERGE_PATCH,
    );
  }

  /**
   * Replaces the status of `plan` (as read) through the status subresource: a PUT of the object with
   * its resourceVersion, so a concurrent writer makes it fail with 409 Conflict.
   */
  async replaceStatus(plan: MaintenancePlan, status: MaintenancePlanStatus): Promise<void> {
    await this.custom.replaceClusterCustomObjectStatus({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name: plan.metadata.name,
      body: { ...plan, apiVersion: API_VERSION, kind: KIND, status },
    });
  }

  /**
   * Replaces the status of `plan` (as read) with a merge patch of the status subresource guarded by
   * the plan's resourceVersion (a concurrent writer makes it fail with 409 Conflict, as the PUT of
   * {@link replaceStatus} does); keys of the old status absent from `status` are set to null, so
   * the result is `status`. Needs only `patch` on maintenanceplans/status (the operator's RBAC).
   */
  async patchStatusGuarded(plan: MaintenancePlan, status: MaintenancePlanStatus): Promise<void> {
    const cleared = Object.fromEntries(
      Object.keys(plan.status ?? {})
        .filter((k) => !(k in status))
        .map((k) => [k, null]),
    );
    await this.custom.patchClusterCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        name: plan.metadata.name,
        body: {
          metadata: { resourceVersion: plan.metadata.resourceVersion },
          status: { ...cleared, ...status },
        },
      },
      MERGE_PATCH,
    );
  }

  /**
   * Merge-patches fields of the plan's spec (e.g. `{ paused: true }`), unguarded.
   * @returns the plan's metadata.generation after the patch (the API server raises it when the
   *   spec changed), or undefined when the answer has none.
   */
  async patchSpec(name: string, spec: Partial<MaintenancePlanSpec>): Promise<number | undefined> {
    const res = (await this.custom.patchClusterCustomObject(
      { group: GROUP, version: VERSION, plural: PLURAL, name, body: { spec } },
      MERGE_PATCH,
    )) as { metadata?: { generation?: number } } | undefined;
    return res?.metadata?.generation;
  }

  /**
   * Reads the plan fresh and merge-patches metadata.finalizers to `edit`'s answer (undefined: no
   * change), with the resourceVersion read so a concurrent writer causes a 409 and a retry.
   * @returns the plan after the edit, or `undefined` when the plan (with this uid) is gone.
   * @throws TransientKubernetesError after a run of conflicts (src/k8s/patch.ts).
   */
  private async editFinalizers(
    name: string,
    uid: string,
    edit: (plan: MaintenancePlan, finalizers: string[]) => string[] | undefined,
  ): Promise<MaintenancePlan | undefined> {
    return retryOnConflict(`${PLURAL}/${name} metadata.finalizers`, async () => {
      const plan = await this.get(name);
      if (!plan || plan.metadata.uid !== uid) return undefined;
      const next = edit(plan, plan.metadata.finalizers ?? []);
      if (next === undefined) return plan;
      try {
        return (await this.custom.patchClusterCustomObject(
          {
            group: GROUP,
            version: VERSION,
            plural: PLURAL,
            name,
            body: { metadata: { finalizers: next, resourceVersion: plan.metadata.resourceVersion } },
          },
          MERGE_PATCH,
        )) as MaintenancePlan;
      } catch (err) {
        const code = apiCode(err);
        if (code === 409) return CONFLICT;
        if (code === 404) return undefined;
        throw err;
      }
    });
  }
}
