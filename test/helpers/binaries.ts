/**
 * Locates the stack's pinned binaries (built or installed by scripts/stack/build.sh) without
 * downloading anything: ${DRAINFLOW_CACHE:-~/.cache/drainflow}/<component>-<version>/bin.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const versionsFile = fileURLToPath(new URL('../../scripts/stack/versions.env', import.meta.url));

/** The pinned versions of scripts/stack/versions.env as a map (K8S_VERSION → "1.34.4", ...). */
export function stackVersions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(versionsFile, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/** The cache directory holding the stack's binaries. */
export function cacheDir(): string {
  return process.env.DRAINFLOW_CACHE ?? join(homedir(), '.cache', 'drainflow');
}

function must(path: string, what: string): string {
  if (!existsSync(path)) {
    throw new Error(
      `${what} not found at ${path}: run \`npm run stack -- build\` (or \`npm run stack -- up\`) first`,
    );
  }
  return path;
}

/** Path of the time-skipping test server `temporal-test-server`. @throws Error when not installed. */
export function temporalTestServerPath(): string {
  if (process.env.DRAINFLOW_TEMPORAL_TEST_SERVER)
    return must(process.env.DRAINFLOW_TEMPORAL_TEST_SERVER, 'temporal-test-server');
  const v = stackVersions();
  return must(
    join(
      cacheDir(),
      `temporal-${v.TEMPORAL_CLI_VERSION}-ts${v.TEMPORAL_TEST_SERVER_VERSION}`,
      'bin',
      'temporal-test-server',
    ),
    'temporal-test-server',
  );
}

/** Path of the project's kubectl. @throws Error when not built. */
export function kubectlPath(): string {
  if (process.env.DRAINFLOW_KUBECTL) return must(process.env.DRAINFLOW_KUBECTL, 'kubectl');
  const v = stackVersions();
  return must(join(cacheDir(), `k8s-${v.K8S_VERSION}`, 'bin', 'kubectl'), 'kubectl');
}

/** Path of the project's helm (HELM_VERSION, built from its Go module). @throws Error when not built. */
export function helmPath(): string {
  if (process.env.DRAINFLOW_HELM) return must(process.env.DRAINFLOW_HELM, 'helm');
  const v = stackVersions();
  return must(join(cacheDir(), `helm-${v.HELM_VERSION}`, 'bin', 'helm'), 'helm');
}
