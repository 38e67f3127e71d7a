/**
 * Label selectors with `metav1.LabelSelector` semantics (k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go
 * `LabelSelectorAsSelector`, k8s.io/apimachinery/pkg/labels/selector.go `Requirement.Matches`).
 *
 * PURE and DETERMINISTIC: imported by Temporal workflow code. No I/O, no clocks, no randomness.
 */
import type { LabelSelector } from '../api/plan.js';

/** One `metav1.LabelSelectorRequirement` (`{ key, operator: In|NotIn|Exists|DoesNotExist, values? }`). */
export type LabelSelectorRequirement = NonNullable<LabelSelector['matchExpressions']>[number];

/**
 * Whether one requirement matches a label set (`labels.Requirement.Matches`):
 * - `In`: the key is present and its value is one of `values`;
 * - `NotIn`: the key is absent, or its value is none of `values`;
 * - `Exists`: the key is present (any value); `DoesNotExist`: the key is absent.
 *
 * An invalid requirement (`In`/`NotIn` without values, `Exists`/`DoesNotExist` with some) matches nothing, so a bad selector can never
 * select more than intended (Kubernetes rejects it with an error instead; a workflow must not throw).
 *
 * @param labels the object's labels (`metadata.labels`), `undefined` meaning none.
 */
export function matchesRequirement(
  labels: Readonly<Record<string, string>> | undefined,
  req: LabelSelectorRequirement,
): boolean {
  const values = req.values ?? [];
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, req.key);
  const value = has ? labels[req.key] : undefined;
  switch (req.operator) {
    case 'In':
      return values.length > 0 && has && values.includes(value as string);
    case 'NotIn':
      return values.length > 0 && (!has || !values.includes(value as string));
    case 'Exists':
      return values.length === 0 && has;
    case 'DoesNotExist':
      return values.length === 0 && !has;
    default:
      return false;
  }
}

/**
 * Whether `labels` match `selector` with `metav1.LabelSelector` semantics: every `matchLabels` pair AND
 * every `matchExpressions` requirement must match (k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go
 * `LabelSelectorAsSelector`).
 *
 * An empty selector (`{}`, or no pairs and no requirements) matches everything, as in Kubernetes.
 * `undefined` also matches everything here: it stands for an optional selector field that is not set
 * (for example `spec.podSelection.podSelector`), i.e. "no filter". (Kubernetes' nil `*LabelSelector`
 * means "nothing" in `LabelSelectorAsSelector`; callers that want that must check for `undefined`.)
 *
 * @param labels the object's labels (`metadata.labels`), `undefined` meaning none.
 * @param selector the selector, `undefined` meaning "no filter".
 */
export function matchesLabelSelector(
  labels: Readonly<Record<string, string>> | undefined,
  selector: LabelSelector | undefined,
): boolean {
  if (selector === undefined) return true;
  for (const [key, want] of Object.entries(selector.matchLabels ?? {})) {
    if (labels === undefined || !Object.prototype.hasOwnProperty.call(labels, key) || labels[key] !== want) {
      return false;
    }
  }
  return (selector.matchExpressions ?? []).every((req) => matchesRequirement(labels, req));
}
