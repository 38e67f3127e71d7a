/**
 * spec.mode Preflight: examines the resolved nodes (at most {@link NODE_CALL_CONCURRENCY} at once),
 * one `preflightNode` activity each (reads and dry-run evictions only: nothing is cordoned, claimed
 * or evicted), then writes the report to status.preflight and ends Previewed. A node whose activity
 * fails for good is reported with its error. An abort (or the plan's deletion) ends it Aborted.
 *
 * Deterministic: only pure modules and activity types.
 */
import { NodePhase, PlanPhase, PlanReason, PreflightReason } from '../../api/reasons.js';
import {
  failedPreflightNode,
  nodeBlocked,
  preflightOutcome,
  summarizePreflight,
  type NodePreflight,
} from '../../drain/preflight.js';
import type { DrainPlanResult } from '../messages.js';
import { activitySummary } from '../../drain/summaries.js';
import { preflight } from './activities.js';
import { close } from './continue-as-new.js';
import { NODE_CALL_CONCURRENCY } from './node-calls.js';
import { flushOutbox } from './outbox.js';
import { errorMessage, setPhase, wake, type PlanRun } from './run.js';
import { publish } from './status-writer.js';

/** Records one node's preflight result in its status entry. */
function recordNode(run: PlanRun, r: NodePreflight): void {
  const n = run.s.plan.nodes.find((x) => x.name === r.report.name);
  if (!n) return;
  n.phase = NodePhase.Previewed;
  n.podsTotal = r.report.podsToEvict;
  n.reason = r.report.error
    ? PreflightReason.PreflightFailed
    : nodeBlocked(r.report)
      ? PreflightReason.BlockersFound
      : PreflightReason.NoBlockers;
  n.message =
    r.report.error ??
    `${r.report.podsToEvict} pod(s) to evict, ${r.report.podsSkipped} skipped, ${r.report.blockerCount} blocker(s), ${r.report.dryRunRefused} dry-run refusal(s)`;
}

/** Runs the preview of a Preflight plan to its end. See the module comment. */
export async function previewPlan(run: PlanRun): Promise<DrainPlanResult> {
  const { s, spec, plan } = run;
  const names = s.plan.nodes.map((n) => n.name);
  setPhase(
    run,
    PlanPhase.Running,
    PreflightReason.Previewing,
    `examining ${names.length} node(s): no cordon, no eviction, dry-run evictions only`,
  );
  const results: NodePreflight[] = [];
  for (let i = 0; i < names.length && !s.aborted; i += NODE_CALL_CONCURRENCY) {
    flushOutbox(run);
    await publish(run, false);
    const batch = await Promise.all(
      names
        .slice(i, i + NODE_CALL_CONCURRENCY)
        .map((node) =>
          preflight.preflightNode
            .executeWithOptions({ summary: activitySummary.preflight(node) }, [
              { node, selection: spec.podSelection, planName: plan.name },
            ])
            .catch((err: unknown) => failedPreflightNode(node, errorMessage(err))),
        ),
    );
    for (const r of batch) recordNode(run, r);
    results.push(...batch);
    wake(run);
  }
  if (s.aborted) {
    const reason = s.cancelled ? PlanReason.WorkflowCanceled : PlanReason.Aborted;
    setPhase(
      run,
      PlanPhase.Aborted,
      reason,
      `${s.cancelled ? 'cancelled from Temporal' : 'aborted'} during the preflight; nothing was cordoned or evicted`,
    );
    return close(run, { phase: PlanPhase.Aborted, reason, message: s.plan.message });
  }
  const report = summarizePreflight(results, Date.now());
  s.plan.preflight = report;
  const reason = preflightOutcome(report);
  setPhase(run, PlanPhase.Previewed, reason, report.summary);
  return close(run, { phase: PlanPhase.Previewed, reason, message: report.summary });
}
