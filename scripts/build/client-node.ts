/**
 * Build step after `tsc` (`npm run build`): replaces dist/k8s/client.js, which re-exports the
 * classes drainflow uses from `@kubernetes/client-node`, with a bundle of only those classes and
 * what they need (tree-shaken by esbuild, comments and whitespace removed). The library's own
 * dependencies (undici, js-yaml, ws, ...) stay imports resolved from node_modules at run time.
 *
 * Why (src/k8s/client.ts says it in full): the library's entry point loads the generated client of
 * every Kubernetes API group, about 18 MB of source that V8 keeps on every process's heap; the
 * bundle is about 2 MB.
 *
 *   tsx scripts/build/client-node.ts [DIST_DIR]   (default: dist/ of this checkout)
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Bundles `<distDir>/k8s/client.js` in place (ESM for node 24).
 * @throws when that file is missing (run `tsc -p tsconfig.build.json` first) or esbuild fails.
 */
export async function bundleClient(distDir: string): Promise<void> {
  const file = join(resolve(distDir), 'k8s', 'client.js');
  if (!existsSync(file))
    throw new Error(`client-node bundle: ${file} not found (run tsc -p tsconfig.build.json first)`);
  const require = createRequire(join(repoRoot, 'package.json'));
  // The package's main is dist/index.js: its package.json is one folder up.
  const pkgFile = join(dirname(dirname(require.resolve('@kubernetes/client-node'))), 'package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { dependencies?: Record<string, string> };
  await build({
    entryPoints: [file],
    outfile: file,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Only the library itself goes in; its dependencies load from node_modules as before.
    external: Object.keys(pkg.dependencies ?? {}),
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'eof',
    logLevel: 'warning',
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleClient(process.argv[2] ?? join(repoRoot, 'dist'));
}
