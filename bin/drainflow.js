#!/usr/bin/env node
// Entry point of the `drainflow` executable: runs the TypeScript sources through tsx (a
// dependency), so `npx drainflow` works from a checkout without a build step.
//
// First it checks the Node.js running it against package.json "engines": an older Node (a
// machine's Node 20, reached through `#!/usr/bin/env node` when kubectl runs the plugin) fails
// later inside undici with a bare stack trace. Nothing is imported before the check.
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const wanted = String(pkg.engines?.node ?? '').replace(/^>=\s*/, '');
const [wantMajor = 0, wantMinor = 0] = wanted.split('.').map(Number);
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < wantMajor || (major === wantMajor && minor < wantMinor)) {
  const root = new URL('..', import.meta.url).pathname;
  process.stderr.write(
    `drainflow: needs Node.js ${wanted} or newer, but this is Node.js ${process.versions.node} ` +
      `(${process.execPath}).\n` +
      `The Node.js that \`npm ci\` installed is ${root}node_modules/.bin/node: put ` +
      `${root}node_modules/.bin first on PATH, or run ${root}node_modules/.bin/node ` +
      `${root}bin/drainflow.js ...\n`,
  );
  process.exit(1);
}

const { register } = await import('tsx/esm/api');
register();
await import('../src/cli/main.ts');
