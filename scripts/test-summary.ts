/**
 * Prints what the lanes of one `npm test` run reported (scripts/test-report.mjs wrote one JSON file
 * per lane into the directory given as the first argument): the slowest 15 test files with their
 * wall time, the summed file time of each lane, and, last, one line `N passed, N failed, N skipped` over every
 * lane (node's own summaries are per lane). Exits 0; the caller decides the exit code.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileReport } from './test-report.js';

const dir = process.argv[2] ?? 'test-results';
const rows: (FileReport & { lane: string })[] = [];
for (const name of readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  const lane = name.replace(/\.json$/, '');
  for (const r of JSON.parse(readFileSync(join(dir, name), 'utf8')) as FileReport[])
    rows.push({ lane, ...r });
}
const slowest = [...rows].sort((a, b) => b.seconds - a.seconds).slice(0, 15);
console.log('\n[test] slowest test files (wall time, s):');
for (const r of slowest) console.log(`  ${r.seconds.toFixed(1).padStart(7)}  ${r.file}`);
const total = (k: 'passed' | 'failed' | 'skipped') => rows.reduce((n, r) => n + r[k], 0);
const lanes = [...new Set(rows.map((r) => r.lane))];
for (const lane of lanes) {
  const mine = rows.filter((r) => r.lane === lane);
  const secs = mine.reduce((n, r) => n + r.seconds, 0);
  console.log(`[test] ${lane}: ${mine.length} files, ${secs.toFixed(0)} s of file time`);
}
console.log(`[test] report: ${dir}/*.json`);
console.log(`${total('passed')} passed, ${total('failed')} failed, ${total('skipped')} skipped`);
