/**
 * The plan's messages: signals, Updates and the query of src/contract/plan-messages.ts, the nodes'
 * progress reports and budget requests, and Temporal's cancellation request. Each handler is one
 * line that records the message into the run's state ({@link control}, {@link releaseOne}, `approveRemedy`,
 * `extendDeadline` and `extendBySpec` (./deadline.ts), `mergeNodeProgress`, {@link onBudgetRequest}); the main loop acts on what they recorded. An
 * Update returns once a status write covers its change.
 *
 * Deterministic: only `@temporalio/workflow` and pure modules.
 */
import { condition, setHandler } from '@temporalio/workflow';
import { FINAL_PLAN_PHASES, PlanPhase, PlanReason, WindowReason } from '../../api/reasons.js';
import type { MaintenancePlanStatus } from '../../api/plan.js';
import { nodeProgressSignal, pdbBudgetSignal } from '../../contract/node-messages.js';
import {
  abortSignal,
  approveRemedyUpdate,
  controlUpdate,
  drainTimeoutSignal,
  extendDeadlineUpdate,
  pauseSignal,
  progressQuery,
  releaseNodeUpdate,
  releaseSignal,
  resumeSignal,
  type ControlAction,
  type ControlArgs,
} from '../../contract/plan-messages.js';
import type { NodeProgress } from '../../contract/progress.js';
import { mergeNodeProgress, runningNodes } from '../../drain/plan-drain.js';
import { disruptionWarnings } from '../../drain/pdb-blocks.js';
import { approvalRefusal } from '../../drain/remedy.js';
import { onBudgetRequest } from './budget-grants.js';
import { extendBySpec, extendDeadline, extendRefusal } from './deadline.js';
import { approveRemedy } from './remedies.js';
import { setPhase, wake, type PlanRun } from './run.js';
import { project } from './status-writer.js';
import { outsideMessage } from './windows.js';

/** Installs every handler of the plan workflow; `cancelRequested` rejects on Temporal's cancellation request. */
export function installHandlers(run: PlanRun, cancelRequested: Promise<never>): void {
  setHandler(pauseSignal, (a) => control(run, 'pause', a));
  setHandler(resumeSignal, (a) => control(run, 'resume', a));
  setHandler(abortSignal, (a) => control(run, 'abort', a));
  setHandler(releaseSignal, (a) => control(run, 'release', a));
  // A cancellation request from Temporal is an abort that says where it came from.
  cancelRequested.catch(() => control(run, 'abort', undefined, true));
  setHandler(progressQuery, () => project(run));
  setHandler(controlUpdate, (u) => written(run, () => control(run, u.action, generationOf(u))), {
    validator: ({ action }) => {
      if (!['pause', 'resume', 'abort', 'release'].includes(action))
        throw new Error(`unknown action ${String(action)}`);
    },
  });
  if (run.afterEachNode)
    setHandler(releaseNodeUpdate, ({ node }) => written(run, () => releaseOne(run, node)), {
      validator: ({ node }) => {
        if (!run.s.plan.nodes.some((n) => n.name === node))
          throw new Error(`node ${String(node)} is not a node of plan ${run.plan.name}`);
      },
    });
  setHandler(approveRemedyUpdate, (a) => written(run, () => approveRemedy(run, a)), {
    validator: (a) => {
      const why = approvalRefusal(run.s.remedies ?? [], a?.workload, a?.by, run.plan.name);
      if (why) throw new Error(why);
    },
  });
  setHandler(extendDeadlineUpdate, (a) => written(run, () => extendDeadline(run, a)), {
    validator: (a) => {
      const why = extendRefusal(run, a);
      if (why) throw new Error(why);
    },
  });
  setHandler(drainTimeoutSignal, (a) => extendBySpec(run, a));
  setHandler(nodeProgressSignal, (p: NodeProgress) => onProgress(run, p));
  // Budget requests change no status; the grant pump answers them (./budget-grants.ts).
  setHandler(pdbBudgetSignal, (req) => onBudgetRequest(run, req));
}

function generationOf(u: { generation?: number }): ControlArgs | undefined {
  return u.generation !== undefined ? { generation: u.generation } : undefined;
}

/** An Update: records it, then returns the status once a write covers the change (or the plan is gone). */
async function written(run: PlanRun, record: () => void): Promise<MaintenancePlanStatus> {
  record();
  const w = run.local.writer;
  const mine = w.changeSeq;
  w.urgent = true;
  await condition(() => w.publishedSeq >= mine || w.planGone);
  return project(run);
}

/** A node's progress report (a final one ends its drain). */
function onProgress(run: PlanRun, p: NodeProgress): void {
  run.local.outbox.events.push(...mergeNodeProgress(run.s, p));
  // One Warning per PDB and kind of block, with the first report that shows it (not at the deadline).
  run.local.outbox.events.push(
    ...disruptionWarnings({ name: p.node, blockedBy: p.blockedBy }, run.s.announced),
  );
  wake(run);
}

function forwardAll(run: PlanRun, action: ControlAction, generation?: number): void {
  for (const node of runningNodes(run.s))
    run.local.outbox.forwards.push({ node, action, ...(generation !== undefined ? { generation } : {}) });
}

/**
 * A user's control (pause, resume, abort, release), from a signal, an Update or the operator's
 * relay of the spec; `cancelled`: an abort from Temporal's cancellation request. Running nodes get
 * it forwarded; the phase follows.
 */
export function control(run: PlanRun, action: ControlAction, args?: ControlArgs, cancelled = false): void {
  const { s } = run;
  if (cancelled) s.cancelled = true;
  // A pause or resume relayed for an older generation than one already seen is stale (a standby
  // operator's start-up relay crossing the leader's newer one): the newer spec wins.
  if (
    (action === 'pause' || action === 'resume') &&
    args?.generation !== undefined &&
    args.generation < s.plan.observedGeneration
  )
    return;
  if (args?.generation !== undefined && args.generation > s.plan.observedGeneration)
    s.plan.observedGeneration = args.generation;
  if (action === 'pause' && !s.paused && !FINAL_PLAN_PHASES.has(s.plan.phase)) {
    s.paused = true;
    forwardAll(run, 'pause', args?.generation);
    if (
      s.plan.phase === PlanPhase.Running ||
      s.plan.phase === PlanPhase.Pending ||
      (s.plan.phase === PlanPhase.Paused && s.plan.reason === WindowReason.OutsideMaintenanceWindow)
    )
      setPhase(
        run,
        PlanPhase.Paused,
        PlanReason.PausedByUser,
        // A pause without a generation came as a raw signal (Temporal UI or CLI), not from the
        // spec: spec.paused stays false, so `kubectl patch … paused: false` changes nothing.
        // Only the message differs, and the phase changes with it, so the status write this
        // pause makes happens either way.
        args?.generation === undefined
          ? `paused by a pause signal, not by spec.paused: no new evictions until resumed with the resume signal or drainflow resume ${run.plan.name}`
          : 'no new evictions until resumed',
      );
  } else if (action === 'resume' && s.paused) {
    s.paused = false;
    if (s.outsideWindow) {
      // Still outside the windows: the nodes stay paused until the next one opens.
      if (s.plan.phase === PlanPhase.Paused)
        setPhase(run, PlanPhase.Paused, WindowReason.OutsideMaintenanceWindow, outsideMessage(run));
    } else {
      s.resumedAtMs = Date.now();
      forwardAll(run, 'resume', args?.generation);
      if (s.plan.phase === PlanPhase.Paused)
        setPhase(run, PlanPhase.Running, PlanReason.Draining, 'draining nodes');
    }
  } else if (action === 'abort' && !s.aborted) {
    s.aborted = true;
    forwardAll(run, 'abort', args?.generation);
  } else if (action === 'release') {
    // uncordon AfterEachNode: the whole-plan release hands back every node as it is drained.
    if (run.afterEachNode && !s.released) forwardAll(run, 'release', args?.generation);
    s.released = true;
  }
  wake(run);
}

/** uncordon AfterEachNode: a per-node release (a node not started yet hands itself back once drained). */
export function releaseOne(run: PlanRun, node: string): void {
  const { s } = run;
  if (runningNodes(s).includes(node)) run.local.outbox.forwards.push({ node, action: 'release' });
  else if (!s.started.includes(node) && !(s.releasedNodes ??= []).includes(node)) s.releasedNodes.push(node);
  wake(run);
}
