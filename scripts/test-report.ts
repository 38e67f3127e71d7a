/**
 * A reporter for node's test runner (`--test-reporter=./scripts/test-report.ts`) that keeps, per
 * test file, its duration and its counts, and writes them as JSON to the path in
 * `DRAINFLOW_TEST_REPORT` (one object per file: `{ file, seconds, passed, failed, skipped }`).
 * It prints nothing itself; scripts/test.sh merges the lanes' files and prints the slowest ones and
 * the totals. Used beside the spec reporter, which prints the tests as they run.
 *
 * A file's seconds: with `--test-isolation=process` (the default, a child process per file) the
 * duration node measured for the file's own process, so files run side by side
 * (`--test-concurrency` > 1) each report their own time; with `--test-isolation=none` (every file
 * in one process, no per-file event) the sum of its top-level tests' durations, hooks included.
 *
 * Node's runner emits `test:complete` with `nesting` 0 and the file's path as `name` when a file's
 * process ends (`details.duration_ms`: its run time), and `test:pass` / `test:fail` for every test;
 * `nesting` 0 marks top-level tests, and only leaf tests (`details.type` !== 'suite') are counted.
 * A file whose process fails outside any test (a crash, a failing `after` hook) gets a `test:fail`
 * under the file's name: counted as one failure.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { TestEvent } from 'node:test/reporters';

/** What the reporter keeps of one test file. */
interface FileTimes {
  /** Run time of the file's process (process isolation), ms; undefined until it ended. */
  fileMs?: number;
  /** Sum of its top-level tests' durations, ms. */
  testMs: number;
  passed: number;
  failed: number;
  skipped: number;
}

/** One row of the JSON report. */
export interface FileReport {
  file: string;
  seconds: number;
  passed: number;
  failed: number;
  skipped: number;
}

/** The reporter: reads the runner's events, writes the JSON report at the end, prints nothing. */
export default async function* report(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files = new Map<string, FileTimes>();
  const entry = (file: string): FileTimes => {
    let e = files.get(file);
    if (!e) {
      e = { testMs: 0, passed: 0, failed: 0, skipped: 0 };
      files.set(file, e);
    }
    return e;
  };
  for await (const event of source) {
    const file = event.data && 'file' in event.data ? event.data.file : undefined;
    if (!file) continue;
    // Events of one file name it absolute or relative (a test's stdout comes relative): one key.
    const e = entry(resolve(file));
    if (event.type === 'test:complete') {
      // The file's own entry: its process ended (process isolation only).
      if (event.data.nesting === 0 && resolve(event.data.name) === resolve(file))
        e.fileMs = event.data.details.duration_ms;
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.nesting === 0) e.testMs += event.data.details.duration_ms;
    if (event.data.details.type === 'suite') continue;
    if (event.data.skip || event.data.todo) e.skipped++;
    else if (event.type === 'test:pass') e.passed++;
    else e.failed++;
  }
  const out = process.env.DRAINFLOW_TEST_REPORT;
  if (out) {
    const rows: FileReport[] = [...files].map(([file, e]) => ({
      file: file.startsWith(process.cwd() + '/') ? file.slice(process.cwd().length + 1) : file,
      seconds: Math.round((e.fileMs ?? e.testMs) / 100) / 10,
      passed: e.passed,
      failed: e.failed,
      skipped: e.skipped,
    }));
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(rows, null, 2) + '\n');
  }
  yield '';
}
