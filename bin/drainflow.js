#!/usr/bin/env node
// Entry point of the `drainflow` executable: runs the TypeScript sources through tsx (a
// dependency), so `npx drainflow` works from a checkout without a build step.
//
// First it checks the Node.js running it against package.json "engines": an older Node (a
// machine's Node 20, reached through `#!/usr/bin/env node` when kubectl runs the plugin) fails
// later inside undici with a bare stack trace. Nothing is imported before the check.
import { existsSync, readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const wanted = String(pkg.engines?.node ?? '').replace(/^>=\s*/, '');
const [wantMajor = 0, wantMinor = 0] = wanted.split('.').map(Number);
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < wantMajor || (major === wantMajor && minor < wantMinor)) {
  const root = new URL('..', import.meta.url).pathname;
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

const { register } = await import('tsx/esm/api');
register();
await import('../src/cli/main.ts');
