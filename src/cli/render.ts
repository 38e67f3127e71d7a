/**
 * Plain-text rendering of a plan for the terminal (`drainflow watch`, `status`, the demo): per node
 * pods evicted/total with a progress bar, what blocks and why, and the cooldown countdown.
 * Pure: the caller passes the time (ms since epoch).
 */
import type { MaintenancePlan, MaintenancePlanStatus } from '../api/plan.js';
import { renderPreflight } from './render-preflight.js';

/** A text progress bar `[#####-----]` of `width` cells. */
export function bar(done: number, total: number, width = 20): string {
  const filled = total > 0 ? Math.round((Math.min(done, total) / total) * width) : 0;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** Seconds from `nowMs` until an RFC 3339 time, rounded up, at least 0. */
export function secondsUntil(iso: string, nowMs: number): number {
  return Math.max(0, Math.ceil((Date.parse(iso) - nowMs) / 1000));
}

/**
 * The maintenance-window line of a plan with spec.windows (status.window), e.g.
 * `maintenance window open until 2026-12-01T22:00:00.000Z (in 600 s)` or `outside the maintenance
 * windows: next opens 2026-12-02T22:00:00.000Z (in 86400 s)`; undefined without windows.
 */
export function windowLine(s: MaintenancePlanStatus, nowMs: number): string | undefined {
  const w = s.window;
  if (!w) return undefined;
  const at = (iso: string) => `${iso} (in ${secondsUntil(iso, nowMs)} s)`;
  if (w.open)
    return `maintenance window open${w.currentEnd ? ` until ${at(w.currentEnd)}` : ''}${w.nextStart ? `; next opens ${w.nextStart}` : ''}`;
  return `outside the maintenance windows: ${w.nextStart ? `next opens ${at(w.nextStart)}` : 'none opens within a week'}`;
}

/** Renders the plan's status as lines of text. */
export function renderPlan(plan: Pick<MaintenancePlan, 'metadata' | 'status'>, nowMs: number): string {
  const s: MaintenancePlanStatus = plan.status ?? {};
  const p = s.evictionProgress;
  const lines: string[] = [];
  lines.push(
    `MaintenancePlan ${plan.metadata.name}: ${s.phase ?? 'Pending'}${s.reason ? ` (${s.reason})` : ''}`,
  );
  if (s.message) lines.push(`  ${s.message}`);
  const active =
    s.phase === undefined || s.phase === 'Pending' || s.phase === 'Running' || s.phase === 'Paused';
  // While the plan still runs, the Blocked condition says what holds it up (e.g. NodeHeldByOtherPlan).
  const blocked = s.conditions?.find((c) => c.type === 'Blocked' && c.status === 'True');
  if (blocked && active) lines.push(`  waiting: ${blocked.reason} — ${blocked.message}`);
  if (p) {
    const stuck = p.failed > 0 ? `, ${p.failed} cannot be evicted` : '';
    lines.push(
      `  pods ${bar(p.evicted, p.total)} ${p.evicted}/${p.total} evicted${stuck}; ` +
        `${p.attempts} eviction call(s), ${p.tooManyRequests} answered 429`,
    );
    if (p.nextActionAt && s.phase === 'Running') {
      lines.push(`  cooling down: next eviction in ${secondsUntil(p.nextActionAt, nowMs)} s`);
    }
  }
  const w = windowLine(s, nowMs);
  if (w && active) lines.push(`  ${w}`);
  if (s.deadline && active) {
    lines.push(`  deadline in ${secondsUntil(s.deadline, nowMs)} s (${s.deadline})`);
  }
  for (const n of s.nodes ?? []) {
    lines.push(
      `  node ${n.name.padEnd(20)} ${n.phase.padEnd(9)} ${bar(n.podsEvicted, n.podsTotal, 12)} ${n.podsEvicted}/${n.podsTotal}`,
    );
    for (const b of n.blockedBy ?? []) {
      const tries = b.attempts ? `, ${b.attempts} call(s)` : '';
      lines.push(
        `      blocked by ${b.pod}${b.pdb ? ` (PodDisruptionBudget ${b.pdb})` : ''}: ${b.reason}${tries} — ${b.message}`,
      );
    }
  }
  if (s.preflight)
    lines.push(
      ...renderPreflight(s.preflight)
        .split('\n')
        .map((l) => `  ${l}`),
    );
  if (s.workflow?.url) lines.push(`  Temporal UI: ${s.workflow.url}`);
  return lines.join('\n');
}
