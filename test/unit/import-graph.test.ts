/**
 * The import graph of src: no circle, and every arrow points down the layers. Type-only imports
 * count: they are erased from the JavaScript, yet a type that lives in the module of its user
 * ties the two modules together, and the circles src once had all began with one
 * (src/activities/types.ts and src/drain/preflight.ts, src/drain/plan-drain.ts and
 * src/workflows/messages.ts, src/api/plan.ts and the modules of its string formats).
 *
 * eslint's import-x/no-cycle (eslint.config.js) reports a circle of value imports at the import;
 * it skips type-only imports by design, so this test is what keeps type circles out. The
 * `no-restricted-imports` layering of eslint.config.js says the same as {@link LAYERS} for the
 * lowest floors, at the import.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The folders of src, lowest first: a module may import from its own folder and from folders of a
 * lower rank only. `src/api`: the API; `src/contract`: the payloads and messages every layer
 * shares; `src/drain`: pure decisions; `src/k8s`, `src/shared`: I/O; then the activities, the
 * workflows, and what runs them.
 */
const LAYERS: Record<string, number> = {
  api: 0,
  contract: 1,
  drain: 2,
  k8s: 3,
  shared: 4,
  activities: 5,
  workflows: 6,
  worker: 7,
  operator: 7,
  cli: 8,
};

/** A module graph: file (relative to the repository) → the files it imports. */
type Graph = Map<string, string[]>;

/** Every `.ts` file under `dir`, relative to the repository. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(repo, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(repo, join(e.parentPath, e.name)));
}

/**
 * The import graph of the files under `dir`: every static import and re-export, type-only or
 * not, and every `import('…')`, of a relative specifier (`./x.js` is the file `x.ts`).
 */
function importGraph(dir: string): Graph {
  const graph: Graph = new Map();
  for (const file of sourceFiles(dir)) {
    const imported = ts.preProcessFile(readFileSync(join(repo, file), 'utf8'), true, true).importedFiles;
    const targets = new Set<string>();
    for (const { fileName } of imported) {
      if (!fileName.startsWith('.')) continue;
      const base = resolve(repo, dirname(file), fileName);
      const target = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')].find(existsSync);
      assert.ok(target, `${file} imports ${fileName}, which is no file`);
      targets.add(relative(repo, target));
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * The circles of `graph`: each strongly connected component of more than one module, or a module
 * importing itself, as one circular path through it (`a -> b -> a`), sorted.
 */
function circles(graph: Graph): string[] {
  // Tarjan's algorithm, iterative over each module's imports.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((c) => pathThrough(graph, new Set(c))).sort();
}

/**
 * The shortest circular path from the first module (sorted) of one component back to it, followed
 * by the component's other modules, if any.
 */
function pathThrough(graph: Graph, component: Set<string>): string {
  const start = [...component].sort()[0]!;
  // Breadth-first from start back to start inside the component: the shortest circle through it.
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = from.get(u))
          path.splice(1, 0, u);
        const others = [...component].filter((m) => !path.includes(m)).sort();
        return [...path, start].join(' -> ') + (others.length ? ` (with ${others.join(', ')})` : '');
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return start;
}

/** The arrows of `graph` between folders of src that do not point to a lower layer. */
function arrowsUp(graph: Graph, layers: Record<string, number>): string[] {
  const folder = (f: string) => f.split('/')[1]!;
  const out: string[] = [];
  for (const [file, targets] of graph)
    for (const target of targets) {
      const [a, b] = [folder(file), folder(target)];
      if (a === b) continue;
      if (!(a in layers) || !(b in layers) || layers[b]! >= layers[a]!) out.push(`${file} -> ${target}`);
    }
  return out.sort();
}

describe('circles', () => {
  const g = (edges: Record<string, string[]>): Graph => new Map(Object.entries(edges));
  const table: Array<[string, Record<string, string[]>, string[]]> = [
    ['none in a chain', { a: ['b'], b: ['c'], c: [] }, []],
    ['none in a diamond', { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, []],
    ['two modules', { a: ['b'], b: ['a'] }, ['a -> b -> a']],
    ['three modules, the shortest way round', { a: ['b'], b: ['c'], c: ['a', 'b'] }, ['a -> b -> c -> a']],
    ['one component of two circles', { a: ['b', 'c'], b: ['a'], c: ['a'] }, ['a -> b -> a (with c)']],
    ['a module importing itself', { a: ['a'] }, ['a -> a']],
    ['two apart', { a: ['b'], b: ['a'], c: ['d'], d: ['c'] }, ['a -> b -> a', 'c -> d -> c']],
    ['imports of files outside the graph are ignored', { a: ['x'] }, []],
  ];
  for (const [name, edges, expected] of table)
    it(name, () => {
      assert.deepEqual(circles(g(edges)), expected);
    });
});

describe('arrowsUp', () => {
  it('reports an import of a higher or equal folder and of a folder with no layer', () => {
    const graph: Graph = new Map([
      ['src/drain/a.ts', ['src/api/x.ts', 'src/drain/b.ts', 'src/activities/t.ts']],
      ['src/worker/w.ts', ['src/operator/o.ts']],
      ['src/new/n.ts', ['src/api/x.ts']],
    ]);
    assert.deepEqual(arrowsUp(graph, LAYERS), [
      'src/drain/a.ts -> src/activities/t.ts',
      'src/new/n.ts -> src/api/x.ts',
      'src/worker/w.ts -> src/operator/o.ts',
    ]);
  });
});

describe('the import graph of src', () => {
  const graph = importGraph('src');

  it('reads every module of src', () => {
    assert.ok(graph.size > 50, `only ${graph.size} modules`);
    // Type-only imports are read: src/drain imports nothing but types from src/contract.
    const drainToContract = [...graph].some(
      ([f, targets]) => f.startsWith('src/drain/') && targets.some((t) => t.startsWith('src/contract/')),
    );
    assert.ok(drainToContract, 'no import of src/contract from src/drain read');
  });

  it('has no circle, type-only imports included', () => {
    assert.deepEqual(circles(graph), []);
  });

  it('imports only down the layers (every folder of src has a layer)', () => {
    assert.deepEqual(arrowsUp(graph, LAYERS), []);
  });
});
