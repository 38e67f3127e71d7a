/**
 * Plain-text rendering of a plan for the terminal (`drainflow watch`, `status`, the demo): per node
 * pods evicted/total with a progress bar, what blocks and why, and the cooldown countdown.
 * Pure: the caller passes the time (ms since epoch).
 */
import type { Blocker, MaintenancePlan, MaintenancePlanStatus } from '../api/plan.js';
import {
  BlockerReason,
  ConditionType,
  FINAL_NODE_PHASES,
  NodePhase,
  PlanPhase,
  WindowReason,
} from '../api/reasons.js';
import { renderPreflight } from './render-preflight.js';
import { hookLine, releaseHint } from './render-roll.js';

/** Node phases in which every pod of the node is gone (its bar is full even with no pod). */
const DRAINED_NODE_PHASES: ReadonlySet<string> = new Set([NodePhase.Drained, NodePhase.Released]);

/**
 * A text progress bar `[#####-----]` of `width` cells. With `total` 0 it is empty, or full when
 * `emptyDone` (a node drained that had no pod to evict).
 */
export function bar(done: number, total: number, width = 20, emptyDone = false): string {
  const filled = total > 0 ? Math.round((Math.min(done, total) / total) * width) : emptyDone ? width : 0;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** Seconds from `nowMs` until an RFC 3339 time, rounded up, at least 0. */
export function secondsUntil(iso: string, nowMs: number): number {
  return Math.max(0, Math.ceil((Date.parse(iso) - nowMs) / 1000));
}

/** A duration in ms as `1h 5m`, `3m 20s` or `45s` (rounded to the second; two units at most). */
export function durationWords(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return m > 0 ? `${h}h ${m}m` : `${h}h`;
  if (m > 0) return sec > 0 ? `${m}m ${sec}s` : `${m}m`;
  return `${sec}s`;
}

/**
 * The estimate line of a running plan (status.estimatedCompletion), e.g. `estimated completion:
 * about 3m 20s left, at 10:42:10 UTC`; `about now` once the time has come (the estimate moves with
 * the next status write); undefined without an estimate.
 */
export function etaLine(
  s: Pick<MaintenancePlanStatus, 'estimatedCompletion'>,
  nowMs: number,
): string | undefined {
  if (!s.estimatedCompletion) return undefined;
  const atMs = Date.parse(s.estimatedCompletion);
  if (Number.isNaN(atMs)) return undefined;
  const at = `${new Date(atMs).toISOString().slice(11, 19)} UTC`;
  const left = atMs - nowMs;
  return left >= 1000
    ? `estimated completion: about ${durationWords(left)} left, at ${at}`
    : `estimated completion: about now (the estimate said ${at})`;
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

/**
 * Node phases whose message the per-node lines already say (progress bar, blockers, hook line):
 * a node's message is printed in the other phases (Waiting, Blocked, Paused, Skipped, Released, …).
 */
const QUIET_NODE_PHASES: ReadonlySet<string> = new Set(['Pending', 'Cordoned', 'Draining']);

/**
 * What to look at for a blocker, when the reason alone does not say: a pod stuck terminating has
 * had its deletion accepted (it has a deletionTimestamp) and waits for its grace period to end,
 * for its finalizers to be removed, or for its node's kubelet to confirm that it stopped.
 */
export function blockerHint(b: Pick<Blocker, 'pod' | 'reason'>): string {
  if (b.reason !== BlockerReason.Terminating) return '';
  const [ns, name] = b.pod.includes('/') ? b.pod.split('/', 2) : ['default', b.pod];
  return ` (its deletion was accepted; it waits for its grace period, its finalizers or its node's kubelet: kubectl get pod -n ${ns} ${name} -o jsonpath='{.metadata.finalizers}')`;
}

/**
 * Renders the plan's status as lines of text. With the plan's spec, a node waiting to be handed
 * back (uncordon AfterEachNode) also says how to release it.
 */
export function renderPlan(
  plan: Pick<MaintenancePlan, 'metadata' | 'status'> & { spec?: Pick<MaintenancePlan['spec'], 'uncordon'> },
  nowMs: number,
): string {
  const s: MaintenancePlanStatus = plan.status ?? {};
  const p = s.evictionProgress;
  const lines: string[] = [];
  lines.push(
    `MaintenancePlan ${plan.metadata.name}: ${s.phase ?? PlanPhase.Pending}${s.reason ? ` (${s.reason})` : ''}`,
  );
  if (s.message) lines.push(`  ${s.message}`);
  const active =
    s.phase === undefined ||
    s.phase === PlanPhase.Pending ||
    s.phase === PlanPhase.Running ||
    s.phase === PlanPhase.Paused;
  // While the plan still runs, the Blocked condition says what holds it up (e.g. NodeHeldByOtherPlan).
  const blocked = s.conditions?.find((c) => c.type === ConditionType.Blocked && c.status === 'True');
  if (blocked && active) lines.push(`  waiting: ${blocked.reason} — ${blocked.message}`);
  const unstarted = (s.nodes ?? []).every((n) => n.phase === 'Pending' || n.phase === 'Waiting');
  if (p && p.total === 0 && unstarted && active && (s.nodes ?? []).length > 0) {
    // Running with 0/0 pods: no node is claimed yet (its drain may have started and be claiming
    // it: the plan's message then says "draining 1 of 2"), and a node's pods are counted once it is.
    lines.push(
      "  pods: none counted yet: no node is claimed yet (a node's pods are counted once the plan has claimed and cordoned it)",
    );
  } else if (p) {
    const stuck = p.failed > 0 ? `, ${p.failed} cannot be evicted` : '';
    const deleted =
      (p.deleted ? `, ${p.deleted} deleted at the deadline (not evicted)` : '') +
      (p.goneWithoutEviction ? `, ${p.goneWithoutEviction} gone without eviction` : '');
    lines.push(
      `  pods ${bar(p.evicted + (p.deleted ?? 0) + (p.goneWithoutEviction ?? 0), p.total)} ${p.evicted}/${p.total} evicted${deleted}${stuck}; ` +
        `${p.attempts} eviction call(s), ${p.tooManyRequests} answered 429`,
    );
    if (p.nextActionAt && s.phase === PlanPhase.Running) {
      lines.push(`  cooling down: next eviction in ${secondsUntil(p.nextActionAt, nowMs)} s`);
    }
  }
  const eta = etaLine(s, nowMs);
  if (eta && active) lines.push(`  ${eta}`);
  const w = windowLine(s, nowMs);
  if (w && active) lines.push(`  ${w}`);
  if (s.deadline && active) {
    lines.push(`  deadline in ${secondsUntil(s.deadline, nowMs)} s (${s.deadline})`);
  }
  const a = s.deadlineAction;
  if (a && active) {
    const when = a.at ? `, the first in ${secondsUntil(a.at, nowMs)} s` : '';
    const warn =
      a.warningAt && Date.parse(a.warningAt) > nowMs
        ? `; PodsWillBeDeleted Warning in ${secondsUntil(a.warningAt, nowMs)} s`
        : '';
    lines.push(`  at the deadline (onDeadline ${a.policy}${when}${warn}): ${a.message}`);
  }
  for (const n of s.nodes ?? []) {
    lines.push(
      `  node ${n.name.padEnd(20)} ${n.phase.padEnd(9)} ${bar(n.podsEvicted + (n.podsDeleted ?? 0) + (n.podsGoneWithoutEviction ?? 0), n.podsTotal, 12, DRAINED_NODE_PHASES.has(n.phase))} ${n.podsEvicted}/${n.podsTotal}` +
        (n.podsDeleted ? `, ${n.podsDeleted} deleted` : '') +
        (n.podsGoneWithoutEviction ? `, ${n.podsGoneWithoutEviction} gone without eviction` : '') +
        (n.currentOrder !== undefined && !FINAL_NODE_PHASES.has(n.phase)
          ? `  order group ${n.currentOrder}`
          : '') +
        (n.deadline && !FINAL_NODE_PHASES.has(n.phase)
          ? `  deadline in ${secondsUntil(n.deadline, nowMs)} s (${n.deadline})`
          : ''),
    );
    if (n.phase === 'Pending' && active) lines.push(`      ${pendingWords(s)}`);
    const release = active ? releaseHint(plan.metadata.name, n, plan.spec?.uncordon) : undefined;
    if (n.message && !release && !QUIET_NODE_PHASES.has(n.phase) && n.reason !== 'Drained')
      lines.push(`      ${n.reason ? `${n.reason}: ` : ''}${n.message}`);
    const hook = hookLine(n, nowMs);
    if (hook) lines.push(`      ${hook}`);
    if (release) lines.push(`      ${release}`);
    for (const k of n.skipped ?? []) lines.push(`      skipped ${k.pod}: ${k.reason} — ${k.message}`);
    for (const b of n.blockedBy ?? []) {
      const tries = b.attempts ? `, ${b.attempts} call(s)` : '';
      lines.push(
        `      blocked by ${b.pod}${b.pdb ? ` (PodDisruptionBudget ${b.pdb})` : ''}: ${b.reason}${b.kind ? ` ${b.kind}` : ''}${tries} — ${b.message}${blockerHint(b)}`,
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

/**
 * Why a Pending node has not started: the plan's pause (by the user, or outside the maintenance
 * windows: no node starts then), else the order and maxUnavailableNodes.
 */
export function pendingWords(s: Pick<MaintenancePlanStatus, 'phase' | 'reason'>): string {
  if (s.phase !== PlanPhase.Paused)
    return 'not started yet: nodes start in plan order, at most maxUnavailableNodes at a time';
  return s.reason === WindowReason.OutsideMaintenanceWindow
    ? 'not started yet: outside the maintenance windows no node starts; nodes start in plan order when the next window opens'
    : 'not started yet: the plan is paused, no node starts; nodes start in plan order after drainflow resume';
}
