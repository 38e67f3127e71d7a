/**
 * The plan's node drains: one child workflow (`drainNodeWorkflow`) per node, started with
 * ParentClosePolicy ABANDON so it survives the plan's continue-as-new; it reports its end by a final
 * `nodeProgress` signal (within one run the child's result is followed as well).
 *
 * Deterministic: only `@temporalio/workflow` and pure modules.
 */
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import { nodeWorkflowId } from '../../contract/names.js';
import {
  markFinished,
  mergeNodeProgress,
  nodeDeadlineMs,
  nodeWorkflowFailed,
} from '../../drain/plan-drain.js';
import { windowedDeadline } from '../../drain/windows.js';
import { nodeDrainSpec } from '../messages.js';
import { drainNodeWorkflow } from '../node.js';
import { errorMessage, held, wake, type PlanRun } from './run.js';

/**
 * The deadline of a node's drain started now: the plan's, or spec.nodeDrainTimeoutSeconds from now
 * when earlier (counted inside the maintenance windows only with deadlineCountsOutsideWindows false).
 */
function nodeDeadline(run: PlanRun, planDeadlineMs: number): number {
  const { spec } = run;
  return run.windowedDeadlines && spec.nodeDrainTimeoutSeconds !== undefined
    ? Math.min(
        planDeadlineMs,
        windowedDeadline(run.windows!, Date.now(), spec.nodeDrainTimeoutSeconds * 1000),
      )
    : nodeDeadlineMs(planDeadlineMs, Date.now(), spec.nodeDrainTimeoutSeconds);
}

/**
 * Starts the drain of `node`. An abort or a pause/resume that arrived while the child was starting
 * goes to it once started; its result (or a failure to start) ends the node's drain.
 */
export function startNode(run: PlanRun, node: string): void {
  const { s, spec, local } = run;
  s.started.push(node);
  local.pendingStarts++;
  const startedPaused = held(run);
  const planDeadlineMs = s.plan.deadlineMs!;
  const deadlineMs = nodeDeadline(run, planDeadlineMs);
  const entry = s.plan.nodes.find((n) => n.name === node);
  if (entry && deadlineMs < planDeadlineMs) entry.deadlineMs = deadlineMs;
  startChild(drainNodeWorkflow, {
    workflowId: nodeWorkflowId(run.workflowId, node),
    args: [
      {
        plan: run.plan,
        node,
        drain: {
          ...nodeDrainSpec(spec),
          ...(s.plan.nodes.length > 1 ? { coordinatePdbs: true, pdbReporters: true } : {}),
          onDeadline: spec.onDeadline ?? 'Stop',
          deadlineWarningSeconds: spec.deadlineWarningSeconds ?? 300,
          planDeadlineMs,
        },
        deadlineMs,
        parentWorkflowId: run.workflowId,
        paused: startedPaused,
        ...(run.afterEachNode && (s.released || s.releasedNodes?.includes(node)) ? { released: true } : {}),
        // spec.cordon AllAtStart: the Node the plan claimed (a Node created again under its name
        // before the child starts is not claimed by it).
        ...(s.claimed[node]?.nodeUid !== undefined ? { nodeUid: s.claimed[node].nodeUid } : {}),
        // The generation of the user's controls the plan has seen, when it has seen one (a node
        // started after a resume then ignores an older pause sent to it directly).
        ...(s.plan.observedGeneration > run.input.plan.generation
          ? { controlGeneration: s.plan.observedGeneration }
          : {}),
      },
    ],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: `drain node ${node}`,
  }).then(
    (handle) => {
      local.pendingStarts--;
      if (s.aborted) local.outbox.forwards.push({ node, action: 'abort' });
      else if (held(run) !== startedPaused)
        local.outbox.forwards.push({ node, action: held(run) ? 'pause' : 'resume' });
      wake(run);
      handle.result().then(
        (r) => {
          local.outbox.events.push(...mergeNodeProgress(s, { ...r, final: true }));
          markFinished(s, node);
          wake(run);
        },
        (err: unknown) => {
          if (!s.finished.includes(node)) nodeWorkflowFailed(s, node, errorMessage(err));
          wake(run);
        },
      );
    },
    (err: unknown) => {
      local.pendingStarts--;
      nodeWorkflowFailed(s, node, `could not start the node's drain: ${errorMessage(err)}`);
      wake(run);
    },
  );
}
