/**
 * The per-file test report (scripts/test-report.ts): run on a scratch test file that prints to
 * stdout, it writes one row for that file with its counts (the runner names the file absolute in
 * some events and relative in others).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REPORTER = new URL('../../scripts/test-report.ts', import.meta.url).pathname;

it('one row per file, with its counts, when its tests print to stdout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drainflow-report-'));
  writeFileSync(
    join(dir, 'prints.test.mjs'),
    "import { it } from 'node:test';\nit('a', () => console.log('out'));\nit('b', { skip: true }, () => {});\n",
  );
  const out = join(dir, 'report.json');
  execFileSync(
    process.execPath,
    ['--test', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', 'prints.test.mjs'],
    { cwd: dir, env: { ...process.env, DRAINFLOW_TEST_REPORT: out }, stdio: 'ignore' },
  );
  const rows = JSON.parse(readFileSync(out, 'utf8')) as { file: string; passed: number; skipped: number }[];
  assert.deepEqual(
    rows.map((r) => [r.file, r.passed, r.skipped]),
    [['prints.test.mjs', 1, 1]],
  );
});
