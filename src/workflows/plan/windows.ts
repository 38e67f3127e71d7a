/**
 * Maintenance windows (spec.windows) as the plan workflow sees them: while no window is open no
 * node is cordoned or started and the running nodes are paused (a pause of its own, apart from the
 * user's: `s.outsideWindow` next to `s.paused`); the loop wakes at the next window boundary with a
 * durable timer (src/drain/windows.ts computes it, deterministically, from the workflow clock).
 *
 * Deterministic: only pure modules and the workflow clock.
 */
import { FINAL_PLAN_PHASES, PlanPhase, PlanReason, WindowReason } from '../../api/reasons.js';
import { runningNodes } from '../../drain/plan-drain.js';
import { windowState } from '../../drain/windows.js';
import { setPhase, wake, type PlanRun } from './run.js';

/** The plan's message while outside the windows: when the next one opens. */
export function outsideMessage(run: PlanRun): string {
  const next = run.local.window?.nextStartMs;
  return next !== undefined
    ? `outside the maintenance windows: no new evictions until the next one opens at ${new Date(next).toISOString()}`
    : 'outside the maintenance windows: none opens within a week';
}

/**
 * Reads the windows at the workflow's time into the state; when one opened or closed, forwards
 * resume/pause to the running nodes (unless the user paused the plan or it was aborted).
 * @returns when to look again (ms since epoch), or undefined without windows or once settled.
 */
export function observeWindow(run: PlanRun): number | undefined {
  const { s, windows, local } = run;
  if (!windows || s.stage === 'Settled') return undefined;
  // Nothing changes before the next boundary: ask again only then (one answer costs about 3 ms).
  if (local.window && Date.now() < local.window.nextChangeMs) return local.window.nextChangeMs;
  const w = windowState(windows, Date.now());
  local.window = w;
  const view = {
    open: w.open,
    ...(w.currentEndMs !== undefined ? { currentEndMs: w.currentEndMs } : {}),
    ...(w.nextStartMs !== undefined ? { nextStartMs: w.nextStartMs } : {}),
  };
  const before = s.plan.window;
  if (
    !before ||
    before.open !== view.open ||
    before.currentEndMs !== view.currentEndMs ||
    before.nextStartMs !== view.nextStartMs
  ) {
    s.plan.window = view;
    wake(run);
  }
  if (!w.open !== (s.outsideWindow ?? false)) {
    s.outsideWindow = !w.open;
    if (w.open && !s.paused) s.resumedAtMs = Date.now();
    if (!s.paused && !s.aborted)
      for (const node of runningNodes(s))
        local.outbox.forwards.push({ node, action: w.open ? 'resume' : 'pause' });
    wake(run);
  }
  return w.nextChangeMs;
}

/** Plan phase Paused/OutsideMaintenanceWindow while outside the windows (a user's pause shows first). */
export function windowPhase(run: PlanRun): void {
  const { s } = run;
  if (!run.windows || s.paused || s.aborted || FINAL_PLAN_PHASES.has(s.plan.phase)) return;
  const out = WindowReason.OutsideMaintenanceWindow;
  if (s.outsideWindow) {
    const msg = outsideMessage(run);
    if (s.plan.phase !== PlanPhase.Paused || s.plan.reason !== out || s.plan.message !== msg)
      setPhase(run, PlanPhase.Paused, out, msg);
  } else if (s.plan.phase === PlanPhase.Paused && s.plan.reason === out)
    setPhase(
      run,
      PlanPhase.Running,
      s.stage === 'Cordon' ? PlanReason.Cordoning : PlanReason.Draining,
      `a maintenance window is open: draining ${s.plan.nodes.length} node(s)`,
    );
}
