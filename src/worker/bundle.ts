/**
 * The workflow bundle for the worker, built out of process and cached, so the long-running worker
 * never holds webpack in memory (webpack + swc add ~200 MB of peak RSS to the process that bundles).
 *
 * - In the image, `dist/workflow-bundle.js` (built by the Dockerfile) is used as is.
 * - From a checkout, the bundle is built by a short-lived child process
 *   (`scripts/bundle-workflows.ts`) into `${DRAINFLOW_CACHE:-~/.cache/drainflow}/workflow-bundles/`,
 *   keyed by a hash of every source file the workflows import and the SDK version; later starts
 *   reuse it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const srcDir = fileURLToPath(new URL('..', import.meta.url));
const rootDir = join(srcDir, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * Returns the path of a workflow bundle for the workflows at `workflowsPath`, building it in a
 * child process when the cache has none for the current sources.
 * @throws Error when the bundler process fails (its output is in the message).
 */
export function workflowBundlePath(workflowsPath: string): string {
  const hash = createHash('sha256');
  for (const dir of ['workflows', 'drain', 'api']) {
    for (const f of sourceFiles(join(srcDir, dir))) hash.update(f.slice(srcDir.length)).update(readFileSync(f));
  }
  // The activity contract: types.ts from a checkout, types.js in dist/.
  const contract = ['types.ts', 'types.js'].map((f) => join(srcDir, 'activities', f)).find((f) => existsSync(f));
  if (contract) hash.update(readFileSync(contract));
  const sdk = JSON.parse(readFileSync(join(rootDir, 'node_modules', '@temporalio', 'worker', 'package.json'), 'utf8')) as { version: string };
  hash.update(sdk.version);
  const dir = join(process.env.DRAINFLOW_CACHE ?? join(homedir(), '.cache', 'drainflow'), 'workflow-bundles');
  const out = join(dir, `${hash.digest('hex').slice(0, 16)}.js`);
  if (existsSync(out)) return out;
  mkdirSync(dir, { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  execFileSync(process.execPath, ['--import', 'tsx', join(rootDir, 'scripts', 'bundle-workflows.ts'), workflowsPath, tmp], {
    cwd: rootDir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  renameSync(tmp, out);
  return out;
}
