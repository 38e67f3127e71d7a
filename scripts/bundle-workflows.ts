/**
 * Bundles the workflow code once: `tsx scripts/bundle-workflows.ts <workflows entry> <out file>`.
 * Run by the worker in a child process (src/worker/bundle.ts) and usable by hand.
 */
import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';

const [entry, out] = process.argv.slice(2);
if (!entry || !out) {
  console.error('usage: tsx scripts/bundle-workflows.ts <workflows entry> <out file>');
  process.exit(2);
}
const { code } = await bundleWorkflowCode({
  workflowsPath: entry,
  logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: console.error, error: console.error },
});
writeFileSync(out, code);
