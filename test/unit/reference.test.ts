/**
 * docs/reference/maintenanceplan.md is generated from the CRD (scripts/gen-reference.ts): the
 * committed file must be what `npm run gen:crd` writes now, and it must show every field of the
 * zod schemas with its bounds.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { buildCrd } from '../../scripts/gen-crd.js';
import {
  REFERENCE_PATH,
  boundsWords,
  fieldRows,
  renderReference,
  typeWords,
} from '../../scripts/gen-reference.js';

describe('docs/reference/maintenanceplan.md', () => {
  it('is what npm run gen:crd writes from src/api now', async () => {
    const committed = readFileSync(REFERENCE_PATH, 'utf8');
    assert.equal(
      committed,
      await renderReference(buildCrd()),
      `${REFERENCE_PATH} is stale: run \`npm run gen:crd\``,
    );
  });

  it('lists every spec and status field of the CRD, each once', () => {
    const root = buildCrd().spec.versions[0]!.schema.openAPIV3Schema;
    const doc = readFileSync(REFERENCE_PATH, 'utf8');
    for (const part of ['spec', 'status'] as const) {
      const rows = fieldRows(root.properties![part]!, part);
      assert.ok(rows.length > 10, `${part}: ${rows.length} fields`);
      assert.equal(new Set(rows.map((r) => r.path)).size, rows.length, `${part}: a path twice`);
      for (const r of rows) assert.ok(doc.includes(`\`${r.path}\``), `${r.path} is in the reference`);
    }
  });
});

describe('the reference words of a schema node', () => {
  const rows: { name: string; node: Parameters<typeof typeWords>[0]; type: string; bounds: string[] }[] = [
    {
      name: 'an integer range',
      node: { type: 'integer', minimum: 1, maximum: 10 },
      type: 'integer',
      bounds: ['≥ 1', '≤ 10'],
    },
    {
      name: 'an enum',
      node: { type: 'string', enum: ['A', 'B'] },
      type: 'string',
      bounds: ['one of `A`, `B`'],
    },
    {
      name: 'a set of strings',
      node: { type: 'array', items: { type: 'string' }, maxItems: 3, 'x-kubernetes-list-type': 'set' },
      type: 'array of string',
      bounds: ['items ≤ 3', 'no duplicates'],
    },
    {
      name: 'a map',
      node: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 2 },
      type: 'map of string to string',
      bounds: ['entries ≤ 2'],
    },
    {
      name: 'an int or string',
      node: { 'x-kubernetes-int-or-string': true },
      type: 'int or string',
      bounds: [],
    },
  ];
  for (const r of rows)
    it(r.name, () => {
      assert.equal(typeWords(r.node), r.type);
      assert.deepEqual(boundsWords(r.node), r.bounds);
    });
});
