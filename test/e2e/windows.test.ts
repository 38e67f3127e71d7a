// test-lane: parallel
/**
 * Maintenance windows (spec.windows) on the real stack, through `drainflow run --operator` and
 * `--worker` processes: a plan created outside its window cordons and evicts nothing until the
 * window opens (a UTC window starting at the first minute at least 30 s later), `drainflow status`
 * shows the next start, and the drain runs once it opens; a time zone the CRD lets through by its
 * shape but that does not exist ends the plan Failed/InvalidSpec with a Warning Event naming the
 * field; the windows cannot be added, removed or changed after creation.
 *
 * Setup: `bash scripts/stack/stack.sh up` and `eval "$(bash scripts/stack/stack.sh env)"`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { WEEKDAYS } from '../../src/api/calendar.js';
import { createNamespace, deleteNamespace, deleteNode, sleep, uniqueName, waitFor } from '../helpers/k8s.js';
import { OperatorHarness, createTaintedNode, kubectl } from '../helpers/operator-harness.js';
import { kubectlPath } from '../helpers/binaries.js';
import { nodePath } from '../helpers/processes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TAINT_KEY = 'drainflow.dev/e2e-windows';
const MIN = 60_000;
/** Least real time from the plan's creation to its window's start, ms (see the first test). */
const LEAD_MS = 30_000;

/** Runs the `drainflow` CLI of this checkout; never throws. */
function drainflow(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(nodePath(), [join(root, 'bin', 'drainflow.js'), ...args], {
    encoding: 'utf8',
    env: process.env,
    timeout: 60_000,
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

const hhmm = (ms: number): string => new Date(ms).toISOString().slice(11, 16);

describe('maintenance windows on the real stack', () => {
  const run = uniqueName('windows');
  const h = new OperatorHarness({
    taskQueue: uniqueName('windows-e2e'),
    run,
    lease: { create: 'df-win-lease' },
  });
  let ns: string;
  let node: string;

  before(async () => {
    await h.connect();
    await h.startProcesses();
    ns = await createNamespace(h.c, 'df-win');
    node = await createTaintedNode(h.c, 'df-win-node', { taint: { key: TAINT_KEY, value: run } });
    const pod: V1Pod = {
      metadata: { name: 'bare', namespace: ns },
      spec: {
        nodeName: node,
        tolerations: [{ key: TAINT_KEY, operator: 'Equal', value: run, effect: 'NoSchedule' }],
        containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
      },
    };
    await h.c.core.createNamespacedPod({ namespace: ns, body: pod });
  });
  afterEach(() => h.removePlans(60_000));
  after(async () => {
    await h.removePlans(60_000).catch(() => undefined);
    await h.stop();
    if (node) await deleteNode(h.c, node);
    if (ns) await deleteNamespace(h.c, ns);
  });

  it('a plan created outside its window cordons and evicts nothing until the window opens', async () => {
    // A daily UTC window for 10 minutes from the first start of a minute at least LEAD_MS away
    // (windows start on a minute): time for the operator to start the plan and for the test to see
    // it wait, and no more (30-90 s; it was the next minute but one, 60-120 s).
    const opens = Math.ceil((Date.now() + LEAD_MS) / MIN) * MIN;
    const name = uniqueName('win-later');
    h.applyPlan(name, {
      nodeNames: [node],
      podSelection: { force: true }, // the bare pod may go
      uncordon: 'OnDelete',
      windows: [{ days: [...WEEKDAYS], start: hhmm(opens), end: hhmm(opens + 10 * MIN), timeZone: 'UTC' }],
    });
    const waiting = await h.waitPlan(
      name,
      (p) => p.status?.reason === 'OutsideMaintenanceWindow',
      60_000,
      'waiting for the window',
    );
    assert.equal(waiting.status?.phase, 'Paused');
    assert.deepEqual(waiting.status?.window, { open: false, nextStart: new Date(opens).toISOString() });
    assert.equal(waiting.status?.conditions?.find((c) => c.type === 'InMaintenanceWindow')?.status, 'False');
    const st = drainflow('status', name);
    assert.equal(st.code, 0, st.err);
    assert.match(st.out, /Paused \(OutsideMaintenanceWindow\)/);
    assert.match(
      st.out,
      new RegExp(`outside the maintenance windows: next opens ${new Date(opens).toISOString()}`),
    );

    // Until a few seconds before the window: the node stays schedulable and the pod stays.
    while (Date.now() < opens - 3000) {
      const n = await h.c.core.readNode({ name: node });
      assert.notEqual(
        n.spec?.unschedulable,
        true,
        `cordoned at ${new Date().toISOString()}, before the window`,
      );
      const pod = await h.c.core.readNamespacedPod({ namespace: ns, name: 'bare' });
      assert.equal(pod.metadata?.deletionTimestamp, undefined, 'evicted before the window');
      await sleep(1000);
    }
    const drained = await h.waitPlan(
      name,
      (p) => p.status?.phase === 'Drained',
      90_000,
      'drained in the window',
    );
    assert.ok(Date.now() >= opens);
    const n = await h.c.core.readNode({ name: node });
    assert.equal(n.spec?.unschedulable, true, 'cordoned once the window opened');
    assert.equal(drained.status?.window, undefined, 'no window status in a final phase');
    // The pod was evicted inside the window: gone, or terminating since after the window opened.
    const pod = await h.c.core.readNamespacedPod({ namespace: ns, name: 'bare' }).catch(() => undefined);
    if (pod) assert.ok(Date.parse(String(pod.metadata?.deletionTimestamp)) >= opens, 'evicted in the window');
  });

  it('a time zone that does not exist ends the plan Failed/InvalidSpec, naming the field', async () => {
    const name = uniqueName('win-badtz');
    h.applyPlan(name, {
      nodeNames: [node],
      windows: [{ days: ['Mon'], start: '09:00', end: '10:00', timeZone: 'Mars/Olympus_Mons' }],
    });
    const failed = await h.waitPlan(name, (p) => p.status?.reason === 'InvalidSpec', 60_000, 'InvalidSpec');
    assert.equal(failed.status?.phase, 'Failed');
    assert.match(
      failed.status?.message ?? '',
      /spec\.windows\[0\]\.timeZone: must be a known IANA time zone name/,
    );
    await waitFor(
      async () =>
        (await h.planEvents(name, failed.metadata.uid)).some(
          (e) => e.type === 'Warning' && e.reason === 'InvalidSpec' && /timeZone/.test(e.message ?? ''),
        ),
      30_000,
      { what: 'InvalidSpec Warning Event' },
    );
    const n = await h.c.core.readNode({ name: node });
    assert.notEqual(n.spec?.unschedulable, true);
    // `kubectl get mp` reads DRAINED 0 and NODES 1, not a blank beside the count.
    const counted = await h.waitPlan(name, (p) => p.status?.nodesTotal === 1, 30_000, 'nodesTotal 1');
    assert.equal(counted.status?.nodesDrained, 0);
  });

  it('the windows cannot be added, removed or changed after creation', async () => {
    const without = uniqueName('win-none');
    h.applyPlan(without, { nodeNames: ['no-such-node-win'], paused: true });
    const w = [{ days: ['Sat' as const], start: '22:00', end: '06:00', timeZone: 'Europe/Berlin' }];
    const patch = (name: string, spec: unknown) =>
      spawnSync(kubectlPath(), ['patch', 'mp', name, '--type', 'merge', '-p', JSON.stringify({ spec })], {
        encoding: 'utf8',
        env: process.env,
      });
    const added = patch(without, { windows: w });
    assert.notEqual(added.status, 0);
    assert.match(
      added.stderr,
      /spec: Forbidden: spec\.windows cannot be added or removed after the plan is created/,
    );

    const withW = uniqueName('win-some');
    h.applyPlan(withW, { nodeNames: ['no-such-node-win'], paused: true, windows: w });
    const changed = patch(withW, { windows: [{ ...w[0], end: '07:00' }] });
    assert.notEqual(changed.status, 0);
    assert.match(changed.stderr, /spec\.windows: Forbidden: cannot change after the plan is created/);
    const removed = patch(withW, { windows: null });
    assert.notEqual(removed.status, 0);
    assert.match(removed.stderr, /spec\.windows cannot be added or removed/);
    // The defaulted zone is stored (UTC when absent), as zod defaults it.
    const utc = uniqueName('win-utc');
    h.applyPlan(utc, {
      nodeNames: ['no-such-node-win'],
      paused: true,
      windows: [{ days: ['Sun'], start: '01:00', end: '02:00' }],
    });
    const live = JSON.parse(kubectl(['get', 'mp', utc, '-o', 'json'])) as {
      spec: { windows: { timeZone: string }[]; deadlineCountsOutsideWindows: boolean };
    };
    assert.equal(live.spec.windows[0]!.timeZone, 'UTC');
    assert.equal(live.spec.deadlineCountsOutsideWindows, true);
  });
});
