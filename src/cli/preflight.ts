/**
 * `drainflow preflight`: the report of a Preflight plan without creating anything. It resolves the
 * nodes (`--nodes a,b`, `--selector k=v`, or the spec of a plan file `-f plan.yaml`), calls the
 * same `preflightNode` activity the plan workflow runs (src/activities/preflight.ts) directly,
 * node by node, and prints the report ({@link renderPreflight}) or its JSON/YAML. Nothing is
 * written to the cluster: the only POSTs are evictions with `dryRun=All`. The exit status says
 * what it found ({@link preflightExitCode}): 0 no blockers, 2 blockers, 3 a node not examined,
 * 1 an error before any report.
 *
 * RBAC of the caller: nodes list/get; pods list; poddisruptionbudgets list; pods/eviction create;
 * replicasets, statefulsets, jobs, replicationcontrollers get (without it, the report says which
 * controllers it could not read for a pod template that pins its pods to the node).
 */
import { issueWords } from '../api/issue-words.js';
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { parse as parseYaml, stringify } from 'yaml';
import { ZodError } from 'zod';
import { parseSpec, type LabelSelector, type MaintenancePlanSpec } from '../api/plan.js';
import type { PreflightReport } from '../api/preflight.js';
import { PreflightReason } from '../api/reasons.js';
import { createNodeActivities } from '../activities/nodes.js';
import { createPreflightActivities } from '../activities/preflight.js';
import {
  failedPreflightNode,
  preflightOutcome,
  summarizePreflight,
  type NodePreflight,
} from '../drain/preflight.js';
import { createKubernetesPort } from '../k8s/port.js';
import { parseLabelSelectorText } from '../shared/settings.js';
import { CliError, loadKubeConfig } from './plans.js';
import { renderPreflight } from './render-preflight.js';

/** Nodes examined at once (as the plan workflow does). */
const NODE_CONCURRENCY = 10;

/**
 * Parses a label selector in kubectl's syntax into a `metav1.LabelSelector`
 * ({@link parseLabelSelectorText}).
 * @throws CliError naming `what` and what is wrong with `text`.
 */
export function parseLabelSelector(text: string, what: string): LabelSelector {
  const parsed = parseLabelSelectorText(text);
  if ('problem' in parsed) throw new CliError(`${what}: ${parsed.problem} in "${text}"`);
  return parsed.selector;
}

/** The flags of `drainflow preflight` (commander's parsed options). */
export interface PreflightFlags {
  nodes?: string;
  selector?: string;
  filename?: string;
  ignoreDaemonsets?: boolean;
  deleteEmptydirData?: boolean;
  force?: boolean;
  podSelector?: string;
  dryRun?: boolean;
  kubeconfig?: string;
}

/** Reads a plan file: a MaintenancePlan manifest (its `spec`) or a bare spec, YAML or JSON. */
function readPlanFile(path: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CliError(`-f ${path}: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CliError(`-f ${path}: not a MaintenancePlan or a spec`);
  const obj = doc as Record<string, unknown>;
  const spec = obj.kind !== undefined ? obj.spec : obj;
  if (typeof spec !== 'object' || spec === null)
    throw new CliError(`-f ${path}: the MaintenancePlan has no spec`);
  return { ...(spec as Record<string, unknown>) };
}

/**
 * The plan spec the flags describe (validated and defaulted with the plan's own schema, so a bad
 * value is refused with the field's name). Flags override the file's fields.
 * @throws CliError when no nodes are named, or a value is invalid.
 */
export function specFromFlags(flags: PreflightFlags): MaintenancePlanSpec {
  const raw: Record<string, unknown> = flags.filename ? readPlanFile(flags.filename) : {};
  if (flags.nodes !== undefined) {
    const names = flags.nodes
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    if (names.length === 0) throw new CliError('--nodes: give at least one node name (a,b,c)');
    raw.nodeNames = names;
  }
  if (flags.selector !== undefined) raw.nodeSelector = parseLabelSelector(flags.selector, '--selector');
  const sel: Record<string, unknown> = {
    ...((raw.podSelection as Record<string, unknown> | undefined) ?? {}),
  };
  if (flags.ignoreDaemonsets !== undefined) sel.ignoreDaemonSets = flags.ignoreDaemonsets;
  if (flags.deleteEmptydirData !== undefined) sel.deleteEmptyDirData = flags.deleteEmptydirData;
  if (flags.force !== undefined) sel.force = flags.force;
  if (flags.podSelector !== undefined)
    sel.podSelector = parseLabelSelector(flags.podSelector, '--pod-selector');
  raw.podSelection = sel;
  if (raw.nodeNames === undefined && raw.nodeSelector === undefined)
    throw new CliError('name the nodes: --nodes a,b, --selector k=v, or -f plan.yaml');
  try {
    return parseSpec(raw);
  } catch (err) {
    if (err instanceof ZodError) throw new CliError(`invalid plan: ${issueWords(err, raw)}`);
    throw err;
  }
}

/**
 * Runs the preflight: resolves the nodes, examines each one (at most {@link NODE_CONCURRENCY} at
 * once) and summarizes.
 * @throws CliError for an unreadable kubeconfig, nodes that do not exist, or an unreachable cluster.
 */
export async function runPreflight(
  flags: PreflightFlags,
  nowMs: () => number = Date.now,
): Promise<PreflightReport> {
  const spec = specFromFlags(flags);
  const kc = loadKubeConfig(flags.kubeconfig);
  const log = pino({ name: 'drainflow.preflight', level: 'silent' });
  const port = createKubernetesPort(kc, log);
  let resolved;
  try {
    resolved = await createNodeActivities(port, log).resolveNodes({
      ...(spec.nodeNames ? { nodeNames: spec.nodeNames } : {}),
      ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
    });
  } catch (err) {
    throw new CliError(
      `cannot list the nodes (${kc.getCurrentCluster()?.server ?? 'no server'}): ${(err as Error).message}`,
    );
  }
  if (resolved.missing.length) throw new CliError(`node(s) not found: ${resolved.missing.join(', ')}`);
  if (resolved.nodes.length === 0) throw new CliError('the selector matches no node');
  const { preflightNode } = createPreflightActivities(port, log, new Map());
  const results: NodePreflight[] = [];
  for (let i = 0; i < resolved.nodes.length; i += NODE_CONCURRENCY)
    results.push(
      ...(await Promise.all(
        resolved.nodes
          .slice(i, i + NODE_CONCURRENCY)
          .map((node) =>
            preflightNode({ node, selection: spec.podSelection, dryRun: flags.dryRun !== false }).catch(
              (err: unknown) => failedPreflightNode(node, (err as Error).message),
            ),
          ),
      )),
    );
  return summarizePreflight(results, nowMs());
}

/**
 * The exit status of `drainflow preflight`, so that it can gate a script or a CI job: 0 when every
 * node can drain (`NoBlockers`), {@link PREFLIGHT_EXIT_BLOCKERS} when a node has a blocker or a
 * dry-run refusal (`BlockersFound`), {@link PREFLIGHT_EXIT_INCOMPLETE} when a node could not be
 * examined (`PreflightIncomplete`). 1 stays for bad flags, an unreadable kubeconfig and an
 * unreachable or refusing cluster (no report at all).
 */
export function preflightExitCode(r: PreflightReport): number {
  const outcome = preflightOutcome(r);
  if (outcome === PreflightReason.PreflightIncomplete) return PREFLIGHT_EXIT_INCOMPLETE;
  if (outcome === PreflightReason.BlockersFound) return PREFLIGHT_EXIT_BLOCKERS;
  return 0;
}

/** Exit status of `drainflow preflight` when the report found blockers. */
export const PREFLIGHT_EXIT_BLOCKERS = 2;
/** Exit status of `drainflow preflight` when a node could not be examined. */
export const PREFLIGHT_EXIT_INCOMPLETE = 3;

/** The report in the chosen output format: text, json or yaml. */
export function formatPreflight(r: PreflightReport, output: string): string {
  if (output === 'json') return JSON.stringify(r, null, 2);
  if (output === 'yaml') return stringify(r).trimEnd();
  return renderPreflight(r);
}
