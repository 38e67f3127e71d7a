/**
 * Generates docs/reference/maintenanceplan.md, the MaintenancePlan field reference, from the
 * CustomResourceDefinition that scripts/gen-crd.ts builds out of the zod schemas of src/api/plan.ts:
 * every field of `spec` and `status` with its type, default, bounds and the CRD's own description,
 * the rules the API server checks (their messages), and the printer columns.
 *
 * `npm run gen:crd` writes it with the CRD; test/unit/reference.test.ts fails when the committed
 * file differs from {@link renderReference}'s output, so it cannot drift from the API.
 */
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import type { CustomResourceDefinition, JSONSchemaProps } from './gen-crd.js';

/** Where the reference is written. */
export const REFERENCE_PATH = fileURLToPath(new URL('../docs/reference/maintenanceplan.md', import.meta.url));

/** One row of a field table. */
interface FieldRow {
  path: string;
  type: string;
  required: boolean;
  default?: unknown;
  bounds: string[];
  description: string;
}

/** The type of a schema node in words: `integer`, `array of string`, `map of string to integer`, `int or string`. */
export function typeWords(s: JSONSchemaProps): string {
  if (s['x-kubernetes-int-or-string']) return 'int or string';
  if (s.type === 'array') return `array of ${s.items ? typeWords(s.items) : 'any'}`;
  if (s.type === 'object' && s.additionalProperties && !s.properties)
    return `map of string to ${typeWords(s.additionalProperties)}`;
  if (s['x-kubernetes-preserve-unknown-fields']) return 'object (any fields)';
  return `${s.type ?? 'any'}${s.format ? ` (${s.format})` : ''}`;
}

/** The bounds of a schema node: enum, numeric range, lengths, item and property counts, pattern. */
export function boundsWords(s: JSONSchemaProps): string[] {
  const out: string[] = [];
  if (s.enum) out.push(`one of ${s.enum.map((v) => `\`${String(v)}\``).join(', ')}`);
  if (s.minimum !== undefined) out.push(`${s.exclusiveMinimum ? '>' : '≥'} ${s.minimum}`);
  if (s.maximum !== undefined) out.push(`${s.exclusiveMaximum ? '<' : '≤'} ${s.maximum}`);
  if (s.minLength !== undefined) out.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) out.push(`length ≤ ${s.maxLength}`);
  if (s.minItems !== undefined) out.push(`items ≥ ${s.minItems}`);
  if (s.maxItems !== undefined) out.push(`items ≤ ${s.maxItems}`);
  if (s.minProperties !== undefined) out.push(`entries ≥ ${s.minProperties}`);
  if (s.maxProperties !== undefined) out.push(`entries ≤ ${s.maxProperties}`);
  if (s.pattern !== undefined) out.push(`pattern \`${s.pattern}\``);
  if (s['x-kubernetes-list-type'] === 'set') out.push('no duplicates');
  if (s['x-kubernetes-list-type'] === 'map')
    out.push(`unique by ${(s['x-kubernetes-list-map-keys'] ?? []).join(', ')}`);
  return out;
}

/** Every field under `s` (depth first, properties in the schema's order; array items as `name[]`). */
export function fieldRows(s: JSONSchemaProps, prefix: string): FieldRow[] {
  const rows: FieldRow[] = [];
  const walk = (node: JSONSchemaProps, path: string, required: boolean): void => {
    rows.push({
      path,
      type: typeWords(node),
      required,
      ...(node.default !== undefined ? { default: node.default } : {}),
      bounds: boundsWords(node),
      description: node.description ?? '',
    });
    children(node, path);
  };
  const children = (node: JSONSchemaProps, path: string): void => {
    const obj = node.type === 'array' ? node.items : node;
    const at = node.type === 'array' ? `${path}[]` : path;
    if (obj?.properties)
      for (const [name, child] of Object.entries(obj.properties))
        walk(child, `${at}.${name}`, (obj.required ?? []).includes(name));
    else if (obj?.additionalProperties?.properties) children(obj.additionalProperties, `${at}.<key>`);
  };
  children(s, prefix);
  return rows;
}

/** The API server's checks (x-kubernetes-validations) under `s`, with the path they sit on. */
export function ruleRows(s: JSONSchemaProps, path: string): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  for (const r of s['x-kubernetes-validations'] ?? [])
    out.push({ path, message: r.message ?? r.messageExpression ?? r.rule });
  const obj = s.type === 'array' ? s.items : s;
  const at = s.type === 'array' ? `${path}[]` : path;
  for (const [name, child] of Object.entries(obj?.properties ?? {}))
    out.push(...ruleRows(child, `${at}.${name}`));
  if (obj?.additionalProperties) out.push(...ruleRows(obj.additionalProperties, `${at}.<key>`));
  return out;
}

/** A Markdown table cell: pipes escaped, line breaks as spaces. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

function fieldTable(rows: FieldRow[]): string[] {
  const lines = ['| field | type | default | bounds | description |', '| --- | --- | --- | --- | --- |'];
  for (const r of rows)
    lines.push(
      `| \`${r.path}\`${r.required ? ' (required)' : ''} | ${cell(r.type)} | ${
        r.default !== undefined ? `\`${cell(JSON.stringify(r.default))}\`` : ''
      } | ${cell(r.bounds.join('; '))} | ${cell(r.description)} |`,
    );
  return lines;
}

/**
 * The reference as Markdown (formatted with the repository's prettier config, so `npm run format`
 * leaves it unchanged).
 */
export async function renderReference(crd: CustomResourceDefinition): Promise<string> {
  const version = crd.spec.versions[0]!;
  const root = version.schema.openAPIV3Schema;
  const spec = root.properties?.spec ?? {};
  const status = root.properties?.status ?? {};
  const { kind, plural, shortNames } = crd.spec.names;
  const lines = [
    `# ${kind} reference`,
    '',
    '<!-- Generated by `npm run gen:crd` from src/api/plan.ts; test/unit/reference.test.ts fails when it is stale. Do not edit. -->',
    '',
    `\`${crd.spec.group}/${version.name}\`, kind \`${kind}\`, ${crd.spec.scope.toLowerCase()}-scoped (no namespace); ` +
      `\`kubectl get ${plural}\` or \`${shortNames.join('`, `')}\`. The API server applies the defaults and refuses a ` +
      'plan outside the bounds or the rules below, with the message shown. What the phases, conditions and reasons ' +
      'in the status mean: [reasons](../reasons.md).',
    '',
    '## spec',
    '',
    ...fieldTable(fieldRows(spec, 'spec')),
    '',
    '## Rules the API server checks',
    '',
    '| on | message when refused |',
    '| --- | --- |',
    ...ruleRows(spec, 'spec').map((r) => `| \`${r.path}\` | ${cell(r.message)} |`),
    '',
    '## status',
    '',
    'Written by drainflow only (the status subresource).',
    '',
    ...fieldTable(fieldRows(status, 'status')),
    '',
    '## Columns of `kubectl get`',
    '',
    '| column | from | shown |',
    '| --- | --- | --- |',
    ...version.additionalPrinterColumns.map(
      (c) =>
        `| ${c.name} | \`${c.jsonPath}\` | ${c.priority ? '`-o wide`' : 'always'}${
          c.description ? `: ${cell(c.description)}` : ''
        } |`,
    ),
    '',
  ];
  const options = (await prettier.resolveConfig(REFERENCE_PATH)) ?? {};
  return prettier.format(lines.join('\n'), { ...options, filepath: REFERENCE_PATH });
}
