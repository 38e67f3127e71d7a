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

it('files run one after another or side by side each report their own duration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drainflow-report-'));
  const file = (name: string, ms: number) =>
    writeFileSync(
      join(dir, name),
      `import { it } from 'node:test';\nit('waits', () => new Promise((r) => setTimeout(r, ${ms})));\n`,
    );
  file('slow-a.test.mjs', 1_000);
  file('slow-b.test.mjs', 1_000);
  file('quick.test.mjs', 50);
  const seconds = (concurrency: number) => {
    const out = join(dir, `report-${concurrency}.json`);
    execFileSync(
      process.execPath,
      [
        '--test',
        `--test-concurrency=${concurrency}`,
        `--test-reporter=${REPORTER}`,
        '--test-reporter-destination=stdout',
        'slow-a.test.mjs',
        'slow-b.test.mjs',
        'quick.test.mjs',
      ],
      { cwd: dir, env: { ...process.env, DRAINFLOW_TEST_REPORT: out }, stdio: 'ignore' },
    );
    const rows = JSON.parse(readFileSync(out, 'utf8')) as { file: string; seconds: number }[];
    return Object.fromEntries(rows.map((r) => [r.file, r.seconds]));
  };
  for (const concurrency of [1, 3]) {
    const s = seconds(concurrency);
    // The quick file ran last (one at a time) or beside the slow ones: either way its own ~0.1 s
    // plus its process's start, never the slow files' seconds.
    assert.ok(s['quick.test.mjs']! < 0.9, `concurrency ${concurrency}: ${JSON.stringify(s)}`);
    assert.ok(s['slow-a.test.mjs']! >= 1 && s['slow-b.test.mjs']! >= 1, JSON.stringify(s));
    assert.ok(s['slow-b.test.mjs']! < 1.9, `concurrency ${concurrency}: ${JSON.stringify(s)}`);
  }
});
