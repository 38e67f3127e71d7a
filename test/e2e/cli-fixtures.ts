/**
 * Shared pieces of the CLI end-to-end tests (test/e2e/cli-*.test.ts): running `drainflow` like a
 * user, and a plan that stays Running because a PodDisruptionBudget allows no eviction.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GROUP, PLURAL, VERSION, type MaintenancePlan } from '../../src/api/plan.js';
import {
  createNamespace,
  createNode,
  deleteNamespace,
  deleteNode,
  makeDeployment,
  makePdb,
  uniqueName,
  waitFor,
  waitPodsReady,
  type Clients,
} from '../helpers/k8s.js';
import { createPlanObject } from '../helpers/direct-plan.js';
import { nodePath } from '../helpers/processes.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** What a finished command printed, and how long it took. */
export interface CommandResult {
  code: number;
  out: string;
  err: string;
  ms: number;
}

/**
 * Runs `command args` (default: `node bin/drainflow.js`) like a user would, asynchronously so the
 * test process keeps serving (a TLS proxy, say); never throws. Killed after `timeoutMs`.
 */
export function runCommand(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; command?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const command = opts.command ?? nodePath();
  const argv = opts.command ? args : [join(root, 'bin', 'drainflow.js'), ...args];
  const t0 = Date.now();
  return new Promise((resolve) => {
    const p = spawn(command, argv, { env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, out, err, ms: Date.now() - t0 });
    });
  });
}

/** A plan held Running by a PodDisruptionBudget that allows no eviction. */
export interface BlockedPlan {
  name: string;
  node: string;
  namespace: string;
  read(): Promise<MaintenancePlan>;
  /** Deletes the plan (a worker must run: the workflow hands the node back), its pods and node. */
  cleanup(): Promise<void>;
}

/**
 * Creates a node of its own pool, a Deployment of 2 pods on it, a PDB with maxUnavailable 0, and a
 * plan for the node labelled `labels` (the operator's --plan-selector); waits until the plan
 * reports the PDB as the blocker.
 */
export async function blockedPlan(
  c: Clients,
  prefix: string,
  labels: Record<string, string>,
): Promise<BlockedPlan> {
  const name = uniqueName(`${prefix}-plan`);
  const namespace = await createNamespace(c, `df-${prefix}`);
  const pool = { 'drainflow.dev/pool': name };
  const node = await createNode(c, `df-${prefix}-node`, { labels: pool });
  const web = makeDeployment(namespace, 'web', 2);
  web.spec!.template.spec!.nodeSelector = pool;
  await c.apps.createNamespacedDeployment({ namespace, body: web });
  await waitPodsReady(c, namespace, { app: 'web' }, 2);
  await c.policy.createNamespacedPodDisruptionBudget({
    namespace,
    body: makePdb(namespace, 'web', { app: 'web' }, { maxUnavailable: 0 }),
  });
  await createPlanObject(c, name, { nodeNames: [node] }, labels);
  const read = async () =>
    (await c.custom.getClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: PLURAL,
      name,
    })) as MaintenancePlan;
  await waitFor(async () => (await read()).status?.nodes?.[0]?.blockedBy?.length, 60_000, {
    what: `plan ${name} Running, waiting on the PDB`,
  });
  return {
    name,
    node,
    namespace,
    read,
    async cleanup() {
      await c.custom
        .deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })
        .catch(() => undefined);
      await waitFor(async () => !(await read().catch(() => undefined)), 60_000, {
        what: `plan ${name} deleted`,
      }).catch(() => undefined);
      await deleteNamespace(c, namespace);
      await deleteNode(c, node).catch(() => undefined);
    },
  };
}

/** Asserts that `text` is JSON lines only (blank lines aside); @returns the parsed objects. */
export function jsonLines(text: string, what: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      assert.fail(`${what}, line ${i + 1} is not JSON: ${line}`);
    }
    assert.ok(
      v && typeof v === 'object' && !Array.isArray(v),
      `${what}, line ${i + 1} is not an object: ${line}`,
    );
    out.push(v as Record<string, unknown>);
  }
  return out;
}
