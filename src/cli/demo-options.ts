/**
 * The demo's input checks (`npm run demo`, src/cli/demo.ts), kept apart so they are table-tested
 * without a stack: the numeric flags, each refused with the flag named, and the ports drainflow's
 * operator and worker will listen on, refused when another process holds them (otherwise the
 * demo would take that process's `/readyz` for drainflow's).
 */
import { createServer } from 'node:net';

/** The flags of `drainflow demo` as commander hands them over (strings, as typed or the defaults). */
export interface DemoFlags {
  nodes: string;
  drain: string;
  podsPerNode: string;
  timeout: string;
}

/** The numbers of {@link DemoFlags}, checked. */
export interface DemoNumbers {
  nodes: number;
  drain: number;
  podsPerNode: number;
  timeoutSeconds: number;
}

/** Bounds of each numeric demo flag: [flag, key of DemoFlags, smallest, largest, what it sizes]. */
const NUMERIC: readonly [string, keyof DemoFlags, number, number, string][] = [
  // 100 nodes: kwok and a 2-core machine stay responsive; the demo is a show, not a load test.
  ['--nodes', 'nodes', 2, 100, 'kwok nodes in the demo pool'],
  ['--drain', 'drain', 1, 99, 'nodes to drain'],
  ['--pods-per-node', 'podsPerNode', 1, 100, 'pods per node'],
  // The plan's drainTimeoutSeconds (the CRD takes 1 and more).
  ['--timeout', 'timeout', 1, 86400, 'the plan deadline in seconds'],
];

/**
 * The demo's numeric flags as numbers: each a whole number (digits only) within its bounds
 * (`--nodes` 2-100, `--drain` 1 to `--nodes` minus 1, `--pods-per-node` 1-100, `--timeout`
 * 1-86400 seconds).
 * @throws Error naming every bad flag and the value given, e.g.
 *   `demo: --pods-per-node must be a whole number from 1 to 100 (pods per node), got "-1"`.
 */
export function parseDemoNumbers(flags: DemoFlags): DemoNumbers {
  const problems: string[] = [];
  const out: Record<string, number> = {};
  for (const [flag, key, min, max, what] of NUMERIC) {
    const raw = String(flags[key]).trim();
    const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!(n >= min && n <= max))
      problems.push(`${flag} must be a whole number from ${min} to ${max} (${what}), got "${flags[key]}"`);
    else out[key] = n;
  }
  if (out.nodes !== undefined && out.drain !== undefined && out.drain >= out.nodes)
    problems.push(
      `--drain must be less than --nodes (the drained pods need somewhere to go), got --drain ${out.drain} with --nodes ${out.nodes}`,
    );
  if (problems.length) throw new Error(`demo: ${problems.join('; ')}`);
  return {
    nodes: out.nodes!,
    drain: out.drain!,
    podsPerNode: out.podsPerNode!,
    timeoutSeconds: out.timeout!,
  };
}

/**
 * Whether nothing listens on `port` of `host`: binds it for a moment, as drainflow's HTTP server
 * would (src/shared/http.ts), and lets it go. @returns false on EADDRINUSE.
 * @throws the bind error of any other cause (EACCES, EADDRNOTAVAIL).
 */
export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  const server = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host, exclusive: true }, () => resolve());
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return false;
    throw err;
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return true;
}

/**
 * Refuses to start the demo's drainflow on ports another process holds: the demo checks readiness
 * by `GET /readyz` on them, so it would take the other process for its own drainflow (and the
 * drainflow it started would exit at once, `port … is already in use`).
 * @param ports the operator and worker ports, each with the variable that sets it.
 * @throws Error naming each port in use and the variable to change.
 */
export async function assertDemoPortsFree(
  ports: readonly { port: number; variable: string; what: string }[],
  host = '127.0.0.1',
): Promise<void> {
  const taken: string[] = [];
  for (const p of ports)
    if (!(await portIsFree(p.port, host)))
      taken.push(`port ${p.port} (the ${p.what}, ${p.variable}) is already in use on ${host}`);
  if (taken.length)
    throw new Error(
      `demo: ${taken.join('; ')}: another process listens there (an earlier demo kept with --keep, or another drainflow); stop it, or set ${ports
        .filter((p) => taken.some((t) => t.includes(p.variable)))
        .map((p) => p.variable)
        .join(' and ')} to a free port`,
    );
}
