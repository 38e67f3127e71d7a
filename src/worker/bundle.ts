/**
 * The workflow bundle for the worker, built out of process and cached, so the long-running worker
 * never holds webpack in memory (webpack + swc add ~200 MB of peak RSS to the process that bundles).
 *
 * - In the image, `dist/workflow-bundle.js` (built by the Dockerfile) is used as is.
 * - Otherwise the bundle is built by a short-lived child process running this very module
 *   (`node bundle.{ts,js} <workflows entry> <out file>`) into
 *   `${DRAINFLOW_CACHE:-~/.cache/drainflow}/workflow-bundles/`, keyed by a hash of every source
 *   file the workflows import and the SDK version; later starts reuse it.
 *
 * Either way the bundle is slimmed ({@link slimBundle}) before it is written: the workflow thread
 * holds the bundle's source (and its inline source map) for as long as the worker runs.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const thisFile = fileURLToPath(import.meta.url);
const srcDir = join(dirname(thisFile), '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** The loader flags of this process (tsx's `--import`/`--require`), without test-runner or inspector flags. */
function loaderArgs(): string[] {
  const out: string[] = [];
  const argv = process.execArgv;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === '--import' || a === '--require' || a === '--loader') && argv[i + 1]) out.push(a, argv[++i]!);
    else if (/^--(import|require|loader)=/.test(a)) out.push(a);
  }
  return out;
}

/** The inline source map comment the SDK's bundler appends and its worker requires. */
const SOURCE_MAP_PREFIX = '//# sourceMappingURL=data:';

/**
 * Characters escaped by {@link slimBundle}: everything above Latin-1 in the Basic Multilingual
 * Plane except the surrogates (half of an astral character; an escaped half is not valid in an
 * identifier) and U+2028/U+2029 (line terminators: escaped inside a `//` comment they would stop
 * ending it).
 */
const NON_LATIN1 = /[\u0100-\u2027\u202a-\ud7ff\ue000-\uffff]/g;

/**
 * Makes a workflow bundle (the output of `bundleWorkflowCode`: webpack code plus an inline base64
 * source map) cheaper to hold, without changing what it does:
 *
 * - drops `sourcesContent` from the inline source map: the original sources, about 70% of the map.
 *   The SDK maps workflow stack traces with the map's `mappings` (file, line and column stay
 *   right); it reads `sourcesContent` only for `showStackTraceSources`, which drainflow does not
 *   set;
 * - writes every character above Latin-1 in the code (comments and messages: `—`, `→`, `✖`) as a
 *   `\uXXXX` escape. V8 stores a source string with any such character at two bytes per
 *   character, so one dash doubled the bundle's resident copy in the workflow thread. An escape
 *   means the same character in a string, template, regular expression or identifier; only a
 *   template's raw text (`String.raw`, a tag's `strings.raw`) shows the escape instead.
 *
 * Measured on an idle worker (SDK worker and bundle only, after a full GC): the bundle 3.87 → 2.07
 * MB; the workflow thread's live heap 30.8 → 21.4 MiB and the main thread's 34.3 → 26.8 MiB (the
 * SDK keeps the bundle and its parsed map there too); the process's RSS 176 → 154 MiB.
 *
 * @param code the bundle as `bundleWorkflowCode` returns it.
 * @returns the slimmed bundle; `code` unchanged when it has no inline base64 source map.
 */
export function slimBundle(code: string): string {
  const at = code.lastIndexOf(SOURCE_MAP_PREFIX);
  const base64At = at < 0 ? -1 : code.indexOf('base64,', at);
  if (base64At < 0) return code.replace(NON_LATIN1, escapeChar);
  const head = code.slice(0, base64At + 'base64,'.length);
  const map = JSON.parse(Buffer.from(code.slice(head.length).trim(), 'base64').toString('utf8')) as Record<
    string,
    unknown
  >;
  delete map.sourcesContent;
  return head.replace(NON_LATIN1, escapeChar) + Buffer.from(JSON.stringify(map)).toString('base64') + '\n';
}

function escapeChar(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `NODE_OPTIONS` without V8 heap-size flags: the worker may run with small heaps
 * (deploy/base/worker.yaml), which the one-off webpack build does not fit in.
 */
export function withoutHeapLimits(nodeOptions: string | undefined): string {
  const words = (nodeOptions ?? '').split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^--max-(old|semi)-space-size=/.test(w)) continue;
    if (/^--max-(old|semi)-space-size$/.test(w)) {
      i++; // its value is the next word
      continue;
    }
    out.push(w);
  }
  return out.join(' ');
}

/**
 * Returns the path of a workflow bundle for the workflows at `workflowsPath`, building it in a
 * child process when the cache has none for the current sources.
 * @throws Error when the bundler process fails (its stderr is in the message).
 */
export function workflowBundlePath(workflowsPath: string): string {
  const hash = createHash('sha256');
  for (const dir of ['workflows', 'drain', 'contract', 'api']) {
    for (const f of sourceFiles(join(srcDir, dir)))
      hash.update(f.slice(srcDir.length)).update(readFileSync(f));
  }
  // The activity contract: types.ts from a checkout, types.js in dist/.
  const contract = ['types.ts', 'types.js']
    .map((f) => join(srcDir, 'activities', f))
    .find((f) => existsSync(f));
  if (contract) hash.update(readFileSync(contract));
  // How the bundle is made and slimmed (this module) is part of what it is.
  hash.update(readFileSync(thisFile));
  const sdkPackage = createRequire(import.meta.url).resolve('@temporalio/worker/package.json');
  hash.update((JSON.parse(readFileSync(sdkPackage, 'utf8')) as { version: string }).version);
  const dir = join(process.env.DRAINFLOW_CACHE ?? join(homedir(), '.cache', 'drainflow'), 'workflow-bundles');
  const out = join(dir, `${hash.digest('hex').slice(0, 16)}.js`);
  if (existsSync(out)) return out;
  mkdirSync(dir, { recursive: true });
  const tmp = `${out}.${process.pid}.tmp`;
  execFileSync(process.execPath, [...loaderArgs(), thisFile, workflowsPath, tmp], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: withoutHeapLimits(process.env.NODE_OPTIONS) },
  });
  renameSync(tmp, out);
  return out;
}

// Child-process entry: bundle <workflows entry> into <out file>.
if (process.argv[1] === thisFile) {
  const [entry, out] = process.argv.slice(2);
  if (!entry || !out) {
    console.error('usage: node bundle.js <workflows entry> <out file>');
    process.exit(2);
  }
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const quiet = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: entry,
    logger: {
      log: quiet,
      trace: quiet,
      debug: quiet,
      info: quiet,
      warn: console.error,
      error: console.error,
    },
  });
  writeFileSync(out, slimBundle(code));
}
