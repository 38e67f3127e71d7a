/**
 * A zod error of a plan spec in words, one `spec.<path>: <message> (got "<value>")` per issue, `; `
 * between them: the value as written is named when it is a string, number or boolean, so a bad
 * entry of a list (`spec.nodeNames[1]`) says which one it was, as the CRD's CEL messages do. Paths
 * are written as the API server writes field paths (`spec.windows[0].timeZone`), so the operator's
 * words and the CRD's match.
 */
import type { ZodError } from 'zod';

/** The value at `path` inside `input`, or undefined. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = input;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** A zod issue path as a Kubernetes field path: list indexes in brackets (`windows[0].timeZone`). */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else out += `${out === '' ? '' : '.'}${String(k)}`;
  }
  return out;
}

/**
 * The issues of `err` (from parsing `input`) in words, each path prefixed with `prefix`.
 * A value is shown JSON-quoted and cut at 100 characters.
 */
export function issueWords(err: ZodError, input: unknown, prefix = 'spec.'): string {
  return err.issues
    .map((i) => {
      const v = valueAt(input, i.path);
      const shown =
        typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'
          ? ` (got ${JSON.stringify(typeof v === 'string' && v.length > 100 ? `${v.slice(0, 100)}…` : v)})`
          : '';
      return `${prefix}${fieldPath(i.path)}: ${i.message}${i.message.includes('(got ') ? '' : shown}`;
    })
    .join('; ');
}
