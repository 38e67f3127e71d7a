/**
 * A plan whose workflow a test starts itself (no operator): the MaintenancePlan object created
 * through the API, so that the workflow's status writes have an object to land on, and the
 * workflow's input built from it.
 */
import assert from 'node:assert/strict';
import {
  API_VERSION,
  GROUP,
  KIND,
  PLURAL,
  VERSION,
  parseSpec,
  type MaintenancePlan,
  type MaintenancePlanSpecInput,
  type MaintenancePlanStatus,
} from '../../src/api/plan.js';
import type { DrainPlanInput } from '../../src/workflows/messages.js';
import { planWorkflowId } from '../../src/contract/names.js';
import { ignoreNotFound, uniqueName, waitFor, type Clients } from './k8s.js';

/**
 * Creates the MaintenancePlan object `name` with `spec` (given as is: the API server defaults and
 * validates it) and `labels`. @returns the object as created.
 * @throws the client's ApiException when the API server refuses it (e.g. 422 from the CRD schema).
 */
export async function createPlanObject(
  c: Clients,
  name: string,
  spec: MaintenancePlanSpecInput | Record<string, unknown>,
  labels?: Record<string, string>,
): Promise<MaintenancePlan> {
  return (await c.custom.createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    body: { apiVersion: API_VERSION, kind: KIND, metadata: { name, ...(labels ? { labels } : {}) }, spec },
  })) as MaintenancePlan;
}

/**
 * A plan that stands behind a node claim a test writes itself: a paused, unlabelled MaintenancePlan
 * (no operator selects it) named `<prefix>-<unique>`. An operator's orphan sweep hands back every
 * claim whose plan does not exist with that UID (src/operator/orphans.ts, whatever its
 * --plan-selector), and e2e files run side by side with operators of other files, so a claim on a
 * made-up plan would be taken away mid-test. The caller deletes it ({@link deletePlanObject}).
 * @returns the plan's name and UID, as claims and activities name a plan.
 */
export async function claimingPlan(c: Clients, prefix: string): Promise<{ name: string; uid: string }> {
  const p = await createPlanObject(c, uniqueName(prefix), {
    nodeNames: ['df-e2e-no-such-node'],
    paused: true,
  });
  return { name: p.metadata.name, uid: p.metadata.uid! };
}

/** Deletes the MaintenancePlan `name` (no finalizer: it goes at once); ignores a missing one. */
export async function deletePlanObject(c: Clients, name: string): Promise<void> {
  await ignoreNotFound(() =>
    c.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }),
  );
}

/** The fields of the API server's Status answer to a refused create that the CRD tests read. */
export interface RefusalStatus {
  /** HTTP status (422 when the CRD schema or a CEL rule refuses the object). */
  code?: number;
  /** The readable message naming the field, e.g. `spec.mode: Forbidden: must be ...`. */
  message?: string;
}

/**
 * Creates the MaintenancePlan `name` with a `spec` the CRD should refuse, and returns the API
 * server's Status of the refusal.
 * @throws an AssertionError when the API server accepts the plan (the accepted object is deleted first).
 */
export async function refusedPlanStatus(
  c: Clients,
  name: string,
  spec: MaintenancePlanSpecInput | Record<string, unknown>,
): Promise<RefusalStatus> {
  let refused: unknown;
  try {
    await createPlanObject(c, name, spec);
  } catch (err) {
    refused = err;
  }
  if (refused === undefined) {
    await c.custom
      .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
      .catch(() => undefined);
    assert.fail(`the API server accepted plan ${name}: ${JSON.stringify(spec)}`);
  }
  const body = (refused as { body?: unknown }).body;
  return (typeof body === 'string' ? JSON.parse(body) : (body ?? {})) as RefusalStatus;
}

/** Creates the plan `name` with `spec` (unlabelled: no operator acts on it). @returns the workflow's input and ID. */
export async function createDirectPlan(
  c: Clients,
  name: string,
  spec: MaintenancePlanSpecInput,
): Promise<{ input: DrainPlanInput; workflowId: string }> {
  const created = await createPlanObject(c, name, spec);
  const input: DrainPlanInput = {
    plan: { name, uid: created.metadata.uid, generation: created.metadata.generation ?? 1 },
    spec: parseSpec(spec),
  };
  return { input, workflowId: planWorkflowId(input.plan) };
}

/** The plan's status as the API server has it. */
export async function readPlanStatus(c: Clients, name: string): Promise<MaintenancePlanStatus | undefined> {
  return (
    (await c.custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name,
    })) as MaintenancePlan
  ).status;
}

/** A plan status for assertion messages (indented JSON). */
export function showStatus(st: MaintenancePlanStatus | undefined): string {
  return `status: ${JSON.stringify(st, null, 1)}`;
}

/**
 * Waits until plan `name` has left its active phases (default Pending and Running); polls its
 * status every 250 ms for at most `timeoutMs` (ms). @returns the status then. @throws when it does not.
 */
export function planFinished(
  c: Clients,
  name: string,
  { timeoutMs = 90_000, active = ['Pending', 'Running'] }: { timeoutMs?: number; active?: string[] } = {},
): Promise<MaintenancePlanStatus> {
  return waitFor(
    async () => {
      const st = await readPlanStatus(c, name);
      return st?.phase && !active.includes(st.phase) ? st : undefined;
    },
    timeoutMs,
    { what: `plan ${name} finished`, intervalMs: 250 },
  );
}
