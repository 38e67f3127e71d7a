/**
 * The string formats of the MaintenancePlan API: each pattern a field of the spec is checked against,
 * with its name and what it allows in words. zod applies them when the operator parses a spec
 * (src/api/plan.ts, src/api/windows.ts, src/api/hook-job.ts) and the CRD generator turns each into
 * a CEL rule for the API server (scripts/gen-crd.ts), so both say the same.
 *
 * No zod and no imports: workflow code (src/api/calendar.ts) takes a format from here without
 * evaluating the schemas (see src/api/bounds.ts for why that matters).
 */

/**
 * A string format checked both by zod (`parseSpec` of src/api/plan.ts) and by the API server (the generator turns a
 * zod `.regex()` with one of these patterns into a CEL rule whose message says what is allowed, instead
 * of the raw pattern).
 */
export interface StringFormat {
  /** What the value is, for messages: `a node name`. */
  name: string;
  /** What is allowed, in words. */
  allowed: string;
  /** The pattern; RE2-compatible, since CEL's `matches` uses RE2. */
  pattern: RegExp;
  /** Upper bound of the length. */
  maxLength: number;
}

/**
 * A Node name: a DNS subdomain (RFC 1123) of at most 253 characters, what the API server requires of
 * `metadata.name` for Nodes (apimachinery `IsDNS1123Subdomain`).
 */
export const NODE_NAME: StringFormat = {
  name: 'a node name',
  allowed:
    "a DNS subdomain of lowercase letters, digits, '-' and '.' that starts and ends with a letter or digit, at most 253 characters",
  pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  maxLength: 253,
};

/**
 * A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters
 * (apimachinery `IsQualifiedName`, which the API server applies to label keys and selector keys).
 * The prefix's own bound (253) is checked apart from the pattern.
 */
export const LABEL_KEY: StringFormat = {
  name: 'a label key',
  allowed:
    "an optional DNS subdomain prefix (at most 253 characters) and '/', then a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
  pattern:
    /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
  maxLength: 253 + 1 + 63,
};

/** A label value: empty, or at most 63 letters, digits, `-`, `_` and `.` (apimachinery `IsValidLabelValue`). */
export const LABEL_VALUE: StringFormat = {
  name: 'a label value',
  allowed:
    "empty, or at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
  pattern: /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/,
  maxLength: 63,
};

/**
 * The shape of an IANA time zone name (`Europe/Berlin`, `America/Argentina/Buenos_Aires`, `UTC`,
 * `Etc/GMT+1`). The API server can only check the shape; whether the zone exists is checked against
 * the ICU time zone data of the operator's Node.js (`isTimeZone` of src/api/calendar.ts), and a plan naming an
 * unknown zone is marked Failed/InvalidSpec with a Warning Event.
 */
export const TIME_ZONE: StringFormat = {
  name: 'an IANA time zone name',
  allowed:
    "a name such as Europe/Berlin, America/New_York or UTC (letters, digits, '_', '-' and '+' in parts separated by '/')",
  pattern: /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/,
  maxLength: 64,
};

/** A wall-clock time `HH:MM` on the 24-hour clock, 00:00 to 23:59, two digits each. */
export const TIME_OF_DAY: StringFormat = {
  name: 'a time of day',
  allowed: 'HH:MM on the 24-hour clock, two digits each, from 00:00 to 23:59',
  pattern: /^([01][0-9]|2[0-3]):[0-5][0-9]$/,
  maxLength: 5,
};

/**
 * A namespace name: a DNS label (RFC 1123) of at most 63 characters, what the API server requires of
 * a Namespace's `metadata.name` (apimachinery `IsDNS1123Label`).
 */
export const NAMESPACE_NAME: StringFormat = {
  name: 'a namespace name',
  allowed:
    "a DNS label of lowercase letters, digits and '-' that starts and ends with a letter or digit, at most 63 characters",
  pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
  maxLength: 63,
};

/** Every {@link StringFormat} the schemas use (the CRD generator refuses any other pattern). */
export const STRING_FORMATS: readonly StringFormat[] = [
  NODE_NAME,
  LABEL_KEY,
  LABEL_VALUE,
  TIME_OF_DAY,
  TIME_ZONE,
  NAMESPACE_NAME,
];

/** Whether a label key is valid ({@link LABEL_KEY}: the pattern and the prefix's 253 characters). */
export function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  return key.length <= LABEL_KEY.maxLength && LABEL_KEY.pattern.test(key) && slash <= 253;
}
