/**
 * Status helpers: `metav1.Condition` updates, the capped blocker list, and deep status comparison
 * (a status write that would change nothing is skipped).
 *
 * PURE and DETERMINISTIC: imported by Temporal workflow code. No I/O, no clocks: the current time is a
 * parameter.
 */
import type { Blocker, Condition } from '../api/plan.js';

/** The fields of a condition the caller decides; `lastTransitionTime` is managed by {@link setCondition}. */
export interface ConditionUpdate {
  type: string;
  status: Condition['status'];
  reason: string;
  message: string;
  observedGeneration?: number | undefined;
}

/** Orders strings by UTF-16 code units (locale-independent, hence deterministic). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Returns the condition of `type`, or `undefined` (k8s.io/apimachinery/pkg/api/meta/conditions.go
 * `FindStatusCondition`).
 */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * Sets a condition with `metav1.Condition` semantics (k8s.io/apimachinery/pkg/api/meta/conditions.go
 * `SetStatusCondition`): a new type is added with `lastTransitionTime = nowIso`; for an existing type,
 * `reason`, `message` and `observedGeneration` are updated, and `lastTransitionTime` changes to `nowIso`
 * only when `status` changes. Does not mutate its input; other conditions are kept as they are.
 *
 * @param conditions the current conditions (`status.conditions`), `undefined` meaning none.
 * @param next the condition to set.
 * @param nowIso the current time, RFC 3339 (e.g. `2024-05-01T12:00:00Z`).
 * @returns a new array sorted by `type` (code-unit order), so that equal states serialise identically.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: ConditionUpdate,
  nowIso: string,
): Condition[] {
  const existing = findCondition(conditions, next.type);
  const lastTransitionTime =
    existing !== undefined && existing.status === next.status ? existing.lastTransitionTime : nowIso;
  const updated: Condition = {
    type: next.type,
    status: next.status,
    lastTransitionTime,
    reason: next.reason,
    message: next.message,
  };
  if (next.observedGeneration !== undefined) updated.observedGeneration = next.observedGeneration;
  const others = (conditions ?? []).filter((c) => c.type !== next.type);
  return [...others, updated].sort((a, b) => compareStrings(a.type, b.type));
}

/** Default number of blockers kept per node in status (sorted and capped, so the status does not churn). */
export const DEFAULT_BLOCKER_CAP = 20;

/**
 * Sorts blockers by `pod`, then `pdb` (absent first), then `reason`, then `message` (code-unit order,
 * so the order never depends on discovery order), and keeps the first `cap`.
 *
 * @param blockers the blockers of one node.
 * @param cap how many to keep (default {@link DEFAULT_BLOCKER_CAP}); negative counts as 0.
 * @returns `{ blockers, omitted }`: the kept blockers and how many were dropped.
 */
export function sortAndCapBlockers(
  blockers: readonly Blocker[],
  cap: number = DEFAULT_BLOCKER_CAP,
): { blockers: Blocker[]; omitted: number } {
  const sorted = [...blockers].sort(
    (a, b) =>
      compareStrings(a.pod, b.pod) ||
      compareStrings(a.pdb ?? '', b.pdb ?? '') ||
      compareStrings(a.reason, b.reason) ||
      compareStrings(a.message, b.message),
  );
  const keep = Math.max(0, Math.floor(cap));
  return { blockers: sorted.slice(0, keep), omitted: Math.max(0, sorted.length - keep) };
}

/** Whether `v` is an object whose JSON form is a JSON object (not an array, not null). */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value as `JSON.stringify` would see it: `toJSON()` applied (e.g. a `Date` becomes its ISO string). */
function jsonValue(v: unknown): unknown {
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    return (v as { toJSON: () => unknown }).toJSON();
  }
  return v;
}

/**
 * Deep equality of two JSON values, as their JSON serialisations would compare: object key order is
 * ignored, properties whose value is `undefined` count as absent, `undefined` inside an array counts as
 * `null`, `toJSON()` is honoured (a `Date` compares by its ISO string); array order matters. Used to skip
 * status writes that change nothing.
 *
 * @returns `true` when writing `b` over `a` would change nothing.
 */
export function statusEquals(a: unknown, b: unknown): boolean {
  const x = jsonValue(a);
  const y = jsonValue(b);
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    return x.every((item, i) => statusEquals(item ?? null, y[i] ?? null));
  }
  if (isObject(x) || isObject(y)) {
    if (!isObject(x) || !isObject(y)) return false;
    const keysX = Object.keys(x).filter((k) => x[k] !== undefined);
    const keysY = Object.keys(y).filter((k) => y[k] !== undefined);
    if (keysX.length !== keysY.length) return false;
    return keysX.every((k) => Object.prototype.hasOwnProperty.call(y, k) && statusEquals(x[k], y[k]));
  }
  return x === y;
}
