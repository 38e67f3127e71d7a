/**
 * The few MaintenancePlan writes the operator makes: the finalizer (merge patch of
 * metadata.finalizers guarded by resourceVersion, never a PUT of the whole object) and the
 * InvalidSpec status (merge patch of the status subresource).
 */
import {
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  FINALIZER,
  GROUP,
  PLURAL,
  VERSION,
  type MaintenancePlan,
  type MaintenancePlanStatus,
} from '../api/plan.js';
import { apiCode } from './lease.js';

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Read-modify-write attempts before a run of 409 Conflicts is reported as an error. */
const CONFLICT_ATTEMPTS = 5;

/** API path of the MaintenancePlans (cluster-scoped), for the informer's watch. */
export const PLANS_PATH = `/apis/${GROUP}/${VERSION}/${PLURAL}`;

/**
 * A plan as the informer delivers it: the JSON the API server sent (timestamps are strings), typed
 * by client-node as a generic KubernetesObject.
 */
export function asPlan(obj: KubernetesObject): MaintenancePlan {
  return obj as unknown as MaintenancePlan;
}

/** The MaintenancePlan calls of the operator. */
export class PlanApi {
  private readonly custom: CustomObjectsApi;

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

  /** Reads one plan; `undefined` when absent. */
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
   * Reads the plan fresh and merge-patches metadata.finalizers to `edit`'s answer (undefined: no
   * change), with the resourceVersion read so a concurrent writer causes a 409 and a retry.
   * @returns the plan after the edit, or `undefined` when the plan (with this uid) is gone.
   */
  private async editFinalizers(
    name: string,
    uid: string,
    edit: (plan: MaintenancePlan, finalizers: string[]) => string[] | undefined,
  ): Promise<MaintenancePlan | undefined> {
    for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
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
        if (code === 409) continue;
        if (code === 404) return undefined;
        throw err;
      }
    }
    throw new Error(
      `${PLURAL}/${name}: ${CONFLICT_ATTEMPTS} conflicting updates of metadata.finalizers in a row`,
    );
  }
}
