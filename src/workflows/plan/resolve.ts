/**
 * The plan's first step (once, in its first run): resolve spec.nodeNames / spec.nodeSelector into
 * the plan's nodes, fail the plan when that cannot be done, set its deadline and its first stage
 * (Cordon for spec.cordon AllAtStart, else Drain).
 *
 * Deterministic: only `@temporalio/workflow`, pure modules and activity types.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { MAX_PLAN_NODES } from '../../api/bounds.js';
import { PlanPhase, PlanReason, WindowReason } from '../../api/reasons.js';
import { SA_NODES } from '../../contract/names.js';
import { pendingNode } from '../../drain/plan-drain.js';
import { windowedDeadline } from '../../drain/windows.js';
import type { DrainPlanResult } from '../messages.js';
import { activitySummary } from '../../drain/summaries.js';
import { k8s } from './activities.js';
import { errorMessage, setPhase, type PlanRun } from './run.js';
import { outsideMessage } from './windows.js';

/**
 * Temporal limits one search attribute value to 2 KiB by default
 * (`limit.searchAttributeValueSize`; a larger value fails every workflow task with
 * BadSearchAttributes). The node list is cut to fit; status.nodes always has all of them.
 */
const SEARCH_ATTRIBUTE_VALUE_BYTES = 1900;

/** The longest prefix of `nodes` whose JSON encoding fits {@link SEARCH_ATTRIBUTE_VALUE_BYTES}. */
export function searchableNodes(nodes: readonly string[]): string[] {
  const out: string[] = [];
  let size = 2; // []
  for (const n of nodes) {
    size += n.length + 3; // quotes and comma
    if (size > SEARCH_ATTRIBUTE_VALUE_BYTES) break;
    out.push(n);
  }
  return out;
}

/** Why the resolved nodes cannot be drained (missing, none, too many), or undefined. */
function resolveFailure(resolved: {
  nodes: string[];
  missing: string[];
}): { reason: string; message: string } | undefined {
  if (resolved.missing.length > 0)
    return { reason: PlanReason.NodeNotFound, message: `node(s) not found: ${resolved.missing.join(', ')}` };
  if (resolved.nodes.length === 0)
    return { reason: PlanReason.NoNodesMatched, message: 'spec.nodeSelector matches no node' };
  if (resolved.nodes.length > MAX_PLAN_NODES)
    return {
      reason: PlanReason.TooManyNodes,
      message: `${resolved.nodes.length} nodes match; one plan drains at most ${MAX_PLAN_NODES}`,
    };
  return undefined;
}

/**
 * Resolves the nodes and enters the first stage.
 * @returns the plan's end when it failed (phase Failed already set), else undefined.
 */
export async function resolvePlan(run: PlanRun): Promise<DrainPlanResult | undefined> {
  const { s, spec } = run;
  let resolved;
  try {
    resolved = await k8s.resolveNodes.executeWithOptions({ summary: activitySummary.resolveNodes() }, [
      {
        ...(spec.nodeNames ? { nodeNames: spec.nodeNames } : {}),
        ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
      },
    ]);
  } catch (err) {
    const message = `resolving the nodes failed: ${errorMessage(err)}`;
    setPhase(run, PlanPhase.Failed, PlanReason.ResolveFailed, message);
    return { phase: PlanPhase.Failed, reason: PlanReason.ResolveFailed, message };
  }
  const failure = resolveFailure(resolved);
  if (failure) {
    setPhase(run, PlanPhase.Failed, failure.reason, failure.message);
    return { phase: PlanPhase.Failed, ...failure };
  }
  upsertSearchAttributes([{ key: SA_NODES, value: searchableNodes(resolved.nodes) }]);
  s.plan.nodes = resolved.nodes.map(pendingNode);
  s.plan.startedAtMs = Date.now();
  if (spec.mode === 'Preflight') return undefined;
  s.plan.deadlineMs = run.windowedDeadlines
    ? windowedDeadline(run.windows!, s.plan.startedAtMs, spec.drainTimeoutSeconds * 1000)
    : s.plan.startedAtMs + spec.drainTimeoutSeconds * 1000;
  s.stage = spec.cordon === 'AllAtStart' ? 'Cordon' : 'Drain';
  const n = resolved.nodes.length;
  if (s.paused) setPhase(run, PlanPhase.Paused, PlanReason.PausedByUser, 'no new evictions until resumed');
  else if (s.outsideWindow)
    setPhase(run, PlanPhase.Paused, WindowReason.OutsideMaintenanceWindow, outsideMessage(run));
  else if (s.stage === 'Cordon')
    setPhase(
      run,
      PlanPhase.Running,
      PlanReason.Cordoning,
      `cordoning ${n} node(s) before the first eviction`,
    );
  else setPhase(run, PlanPhase.Running, PlanReason.Draining, `draining ${n} node(s)`);
  return undefined;
}
