/**
 * The CLI's start-up discipline (src/cli/main.ts): a command loads only the modules it needs. Each
 * case runs `drainflow <args>` in a child process (the sources through tsx, as bin/drainflow.js
 * does in a checkout) with a module hook that records every module resolved, against endpoints
 * that refuse at once (the command fails after loading what it needs), and checks the list:
 *
 * - `--version` and `--help` load no client library, no zod schema, nothing of drainflow but main;
 * - `status` and the controls load the Kubernetes and Temporal clients they call, and never the
 *   worker's SDK (@temporalio/worker, its native core), the worker, operator, activities,
 *   preflight or demo modules.
 *
 * No timing is asserted: what a command loads is what its start-up costs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'drainflow-startup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Records the URL of every module resolved, written to $RECORD_FILE at exit. */
const RECORDER = `
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
process.on('exit', () => writeFileSync(process.env.RECORD_FILE, [...seen].join('\\n')));
`;
writeFileSync(join(dir, 'record.mjs'), RECORDER);
// A cluster and a Temporal that refuse connections (port 1): a command fails fast after loading.
writeFileSync(
  join(dir, 'kubeconfig'),
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
    'contexts: [{name: c, context: {cluster: c, user: u}}]',
    'users: [{name: u, user: {token: x}}]',
    'current-context: c',
  ].join('\n'),
);

/** The modules `drainflow <args>` loads: drainflow's own as `src/...`, packages by name. */
function loaded(args: string[]): { drainflow: string[]; packages: Set<string> } {
  const file = join(dir, `${args.join('-').replace(/\W/g, '_')}.txt`);
  const r = spawnSync(
    process.execPath,
    ['--import', join(dir, 'record.mjs'), '--import', 'tsx', join(repo, 'src/cli/main.ts'), ...args],
    {
      cwd: repo,
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        RECORD_FILE: file,
        KUBECONFIG: join(dir, 'kubeconfig'),
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      },
    },
  );
  assert.ok(r.status !== null, `drainflow ${args.join(' ')} ran to its end: ${r.stderr}`);
  const urls = readFileSync(file, 'utf8').split('\n');
  const drainflow = urls
    .filter((u) => u.startsWith(`file://${repo}src/`))
    .map((u) => u.slice(`file://${repo}`.length))
    .sort();
  const packages = new Set(
    urls
      .map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1])
      .filter((p): p is string => p !== undefined && p !== 'tsx' && p !== 'esbuild'),
  );
  return { drainflow, packages };
}

describe('drainflow loads only what a command needs', () => {
  for (const args of [['--version'], ['--help']])
    it(`${args.join(' ')}: main and commander, no client library`, () => {
      const { drainflow, packages } = loaded(args);
      assert.deepEqual(drainflow, ['src/cli/main.ts']);
      assert.deepEqual([...packages].sort(), ['commander']);
    });

  const NEVER = [
    /^src\/cli\/(run|preflight|demo|demo-options)\.ts$/,
    /^src\/(worker|operator|activities|workflows)\//,
    /^src\/drain\//,
  ];
  // The controls (pause, resume, abort, release) share one action and its imports.
  for (const args of [
    ['status', 'p'],
    ['pause', 'p'],
  ])
    it(`${args.join(' ')}: the Kubernetes and Temporal clients, not the worker's SDK nor other commands' modules`, () => {
      const { drainflow, packages } = loaded(args);
      assert.ok(drainflow.includes('src/cli/plans.ts'), drainflow.join(' '));
      assert.ok(
        packages.has('@kubernetes/client-node') && packages.has('@temporalio/client'),
        [...packages].join(' '),
      );
      for (const p of ['@temporalio/worker', '@temporalio/core-bridge', 'yaml', 'pino', 'prom-client'])
        assert.ok(!packages.has(p), `${args[0]} loads ${p}`);
      const wrong = drainflow.filter((f) => NEVER.some((re) => re.test(f)));
      assert.deepEqual(wrong, [], `${args[0]} loads modules it never uses`);
    });
});
