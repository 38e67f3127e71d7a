/**
 * What the workflow bundle evaluates. The Temporal worker runs every workflow's modules anew for
 * each workflow it creates (a new node workflow, a continue-as-new run, a replay after the
 * workflow left the worker's cache), so the modules the workflows import at run time must be cheap
 * to evaluate and deterministic: no zod schemas (each cached workflow held its own copy: about
 * 38 MiB of the worker's peak RSS in the `scale` bench), no I/O libraries.
 *
 * The walk follows every import and re-export that stays in the compiled JavaScript: all but
 * `import type` / `export type` (with verbatimModuleSyntax, `import { type A }` stays as a bare
 * `import {}` and still evaluates its module).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The module specifiers `source` evaluates at run time (type-only imports and re-exports excluded). */
function runtimeImports(source: string): string[] {
  const out: string[] = [];
  const re = /^\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*'([^']+)'|^\s*import\s+'([^']+)'/gms;
  for (const m of source.matchAll(re)) {
    if (m[5]) out.push(m[5]);
    else if (!m[2]) out.push(m[4]!);
  }
  return out;
}

/** Every repository module reachable at run time from `entry`, and the packages they import. */
function walk(entry: string): { modules: Map<string, string[]>; packages: Set<string> } {
  const modules = new Map<string, string[]>();
  const packages = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const file = todo.pop()!;
    if (modules.has(file)) continue;
    const specs = runtimeImports(readFileSync(file, 'utf8'));
    modules.set(file, specs);
    for (const s of specs) {
      if (s.startsWith('.')) todo.push(resolve(dirname(file), s.replace(/\.js$/, '.ts')));
      else packages.add(s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!);
    }
  }
  return { modules, packages };
}

describe('runtimeImports', () => {
  it('keeps value imports, inline type specifiers and side-effect imports; drops import type and export type', () => {
    const src = [
      "import { a, type B } from './a.js';",
      "import type { C } from './c.js';",
      "import {\n  type D,\n} from './d.js';",
      "export { e } from './e.js';",
      "export type { F } from './f.js';",
      "import './g.js';",
      "import * as h from 'h';",
    ].join('\n');
    assert.deepEqual(runtimeImports(src), ['./a.js', './d.js', './e.js', './g.js', 'h']);
  });
});

describe('the workflow bundle', () => {
  const { modules, packages } = walk(join(repo, 'src', 'workflows', 'index.ts'));

  it('reaches only the workflow SDK and its common types among packages', () => {
    assert.deepEqual([...packages].sort(), ['@temporalio/common', '@temporalio/workflow']);
  });

  it('evaluates no zod schema module', () => {
    const withZod = [...modules].filter(([, specs]) => specs.includes('zod')).map(([f]) => relative(repo, f));
    assert.deepEqual(withZod, []);
    assert.ok(modules.size > 10, `walked ${modules.size} modules`);
  });
});
