/**
 * Writes guarded by `metadata.resourceVersion`: the JSON merge patch request option and the
 * read-modify-write loop that retries a 409 Conflict on a fresh read.
 *
 * A `resourceVersion` in a merge-patch body (or in a PUT) is an optimistic-concurrency
 * precondition: the API server answers 409 Conflict when the object changed since it was read, and
 * the writer reads again and re-decides. A run of {@link CONFLICT_ATTEMPTS} conflicts is reported as
 * a {@link TransientKubernetesError} (code 409): somebody keeps writing the object, and trying
 * again later may succeed.
 */
import { PatchStrategy, setHeaderOptions } from './client.js';
import { TransientKubernetesError } from './errors.js';

/** Request options making a PATCH a JSON merge patch (RFC 7386; client-node 2.x defaults to JSON patch). */
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * Request options making a PATCH a strategic merge patch: lists of built-in types merge by their
 * key (`status.conditions` of a Node by `type`), so a patch of one condition keeps the others.
 */
export const STRATEGIC_MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** Attempts of one read-modify-write before a run of 409 Conflicts is given up as transient. */
export const CONFLICT_ATTEMPTS = 5;

/** What one attempt of {@link retryOnConflict} answers when its guarded write met a 409 Conflict. */
export const CONFLICT = Symbol('conflict');

/**
 * Runs `attempt` (read, decide, guarded write) until it answers something other than
 * {@link CONFLICT}, at most {@link CONFLICT_ATTEMPTS} times.
 *
 * @param what the write, for the error message, e.g. `cordon node n1`.
 * @param attempt one read-modify-write; gets the 1-based attempt number.
 * @returns the first answer that is not {@link CONFLICT}.
 * @throws TransientKubernetesError (code 409) `<what>: 5 conflicting updates in a row` when every
 *   attempt met a conflict; whatever `attempt` throws.
 */
export async function retryOnConflict<T>(
  what: string,
  attempt: (n: number) => Promise<T | typeof CONFLICT>,
): Promise<T> {
  for (let n = 1; n <= CONFLICT_ATTEMPTS; n++) {
    const result = await attempt(n);
    if (result !== CONFLICT) return result;
  }
  throw new TransientKubernetesError(`${what}: ${CONFLICT_ATTEMPTS} conflicting updates in a row`, 409);
}
