/**
 * The node's side of the PDB budgets: what it may spend behind a PDB by its own view, the plan's
 * grants it holds, the request it sends the plan (src/drain/pdb-budget.ts is the plan's side), and
 * what the plan believes of it, so that only news is sent. PURE: imported by workflow code.
 */
import type { PdbBudgetRequest, PdbGrant, PdbReport } from '../../contract/budget.js';
import { currentOrderGroup } from '../pod-policy.js';
import { byKey, type NodeDrainSettings, type NodeDrainState, type PdbRecord } from './state.js';

/** Disruptions this drain may still spend behind `pdb` now. */
export function budgetOf(s: NodeDrainState, pdb: PdbRecord, nowMs: number): number {
  if (pdb.refusedUntilMs !== undefined) {
    if (nowMs < pdb.refusedUntilMs) return 0;
    // The probe bound passed without the budget changing: let one pod try (the status may be stale).
    // An eviction answered since the refusal is that one try until an observation accounts for it.
    return 1 - pdb.spentAtSeq.length - evictingBehind(s, pdb.key);
  }
  return pdb.observedAllowed - pdb.spentAtSeq.length - evictingBehind(s, pdb.key);
}

/** Eviction calls in flight behind PDB `key` (exempt pods spend no budget). */
export function evictingBehind(s: NodeDrainState, key: string): number {
  let n = 0;
  for (const p of Object.values(s.pods))
    if (p.state === 'Evicting' && p.pdbExempt === undefined && p.pdbs.includes(key)) n++;
  return n;
}

/** Applies a grant of the plan (signal `pdbGrant`); repeated or older grants change nothing. */
export function applyGrant(s: NodeDrainState, g: PdbGrant): NodeDrainState {
  const b = s.budget;
  if (!b || g.seq <= b.grantSeq) return s;
  b.grantSeq = g.seq;
  for (const [key, n] of Object.entries(g.grants)) b.grants[key] = (b.grants[key] ?? 0) + n;
  if (g.reports !== undefined) b.reports = [...g.reports];
  return s;
}

/**
 * The node's budget request to the plan now (see src/drain/pdb-budget.ts), or undefined when the
 * plan hands out no budgets. Gives back grants the node cannot use now (more than the pods that
 * could be evicted now behind that PDB), so other nodes get them.
 *
 * - holding: unused grants + evictions in flight + evictions answered 201 that no observation of
 *   this node shows yet;
 * - wants: per PDB, the pods that could be evicted now (not cooling down, not paused, node
 *   cordoned, before the deadline), bounded by the node's own view of the budget, minus the
 *   grants it holds;
 * - room: how many more evictions `maxConcurrentPerNode` lets it start beyond those grants (the
 *   plan spreads that room over the PDBs, so nodes do not all crowd the first PDB by name).
 *
 * Once the plan named the node's reporting set ({@link NodeBudget.reports}), wants are bounded
 * only by a refusal the node counts now, not by its own view of the allowance (the plan bounds
 * them by its freshest report, so a PDB's rise does not change every waiting node's wants), and
 * the request carries `tracked`; {@link budgetRequestToSend} then leaves out unchanged reports.
 */
export function nodeBudgetRequest(
  s: NodeDrainState,
  nowMs: number,
  settings: NodeDrainSettings,
  quiesce = false,
): PdbBudgetRequest | undefined {
  const b = s.budget;
  if (!b) return undefined;
  const pods = Object.values(s.pods).sort(byKey);
  const eligible = new Map<string, number>();
  const canEvict =
    !s.paused &&
    !s.aborted &&
    !quiesce &&
    s.view?.exists === true &&
    s.view.unschedulable &&
    nowMs < s.deadlineMs;
  const group = currentOrderGroup(pods.map((p) => p.order));
  if (canEvict)
    for (const p of pods) {
      if (p.state !== 'Pending' || p.pdbs.length !== 1 || p.notBeforeMs > nowMs) continue;
      if (p.pdbExempt !== undefined) continue; // needs no grant (src/drain/eviction-gate.ts)
      if (group !== undefined && (p.order ?? 0) !== group) continue;
      if (p.checkAfterSeq !== undefined && s.view!.seq < p.checkAfterSeq) continue;
      eligible.set(p.pdbs[0]!, (eligible.get(p.pdbs[0]!) ?? 0) + 1);
    }
  for (const key of Object.keys(b.grants)) {
    const keep = Math.min(b.grants[key]!, eligible.get(key) ?? 0);
    if (keep > 0) b.grants[key] = keep;
    else delete b.grants[key];
  }
  const holding: Record<string, number> = {};
  const wants: Record<string, number> = {};
  const pdbs: PdbReport[] = [];
  let room = settings.maxConcurrentPerNode - pods.filter((p) => p.state === 'Evicting').length;
  for (const n of Object.values(b.grants)) room -= n;
  for (const pdb of Object.values(s.pdbs).sort(byKey)) {
    const held = (b.grants[pdb.key] ?? 0) + evictingBehind(s, pdb.key) + pdb.spentAtSeq.length;
    if (held > 0) holding[pdb.key] = held;
    const refusal = pdb.refusedUntilMs !== undefined;
    const refused = refusal && nowMs < pdb.refusedUntilMs!;
    const bound = b.reports === undefined ? budgetOf(s, pdb, nowMs) : refused ? 0 : Infinity;
    const want = Math.min(eligible.get(pdb.key) ?? 0, bound) - (b.grants[pdb.key] ?? 0);
    if (want > 0) wants[pdb.key] = want;
    pdbs.push({
      key: pdb.key,
      allowed: refused ? 0 : refusal ? 1 : pdb.observedAllowed,
      ...(pdb.resourceVersion !== undefined ? { resourceVersion: pdb.resourceVersion } : {}),
      ...(refused ? { refused: true } : {}),
    });
  }
  return {
    node: s.node,
    grantSeq: b.grantSeq,
    holding,
    wants,
    room: Math.max(0, room),
    pdbs,
    ...(b.reports !== undefined ? { tracked: pdbs.map((p) => p.key) } : {}),
  };
}

/**
 * What the plan believes of this node's budget: the node's last request as sent, plus the grants
 * it applied since (each one raises what the node holds and lowers what it still wants).
 */
export interface BudgetBelief {
  holding: Record<string, number>;
  wants: Record<string, number>;
  room: number;
  /** Every report the plan has from this node (the last of each PDB it sent). */
  pdbs: PdbReport[];
  /** The `tracked` last sent (absent: none sent). */
  tracked?: string[];
  /** The node's reporting set when it sent its last request (absent: it had none). */
  reports?: string[];
}

/**
 * The belief after the node sent `full` (the request before {@link budgetRequestToSend} filtered
 * it) while it reported `reports`.
 */
export function beliefAfterRequest(full: PdbBudgetRequest, reports?: string[]): BudgetBelief {
  return {
    holding: { ...full.holding },
    wants: { ...full.wants },
    room: full.room ?? 0,
    pdbs: full.pdbs,
    ...(full.tracked ? { tracked: [...full.tracked] } : {}),
    ...(reports ? { reports: [...reports] } : {}),
  };
}

/** The belief after the node applied grant `g` (see {@link BudgetBelief}). Mutates and returns `b`. */
export function beliefAfterGrant(b: BudgetBelief, g: PdbGrant): BudgetBelief {
  for (const [key, n] of Object.entries(g.grants)) {
    b.holding[key] = (b.holding[key] ?? 0) + n;
    const left = (b.wants[key] ?? 0) - n;
    if (left > 0) b.wants[key] = left;
    else delete b.wants[key];
    b.room = Math.max(0, b.room - n);
  }
  return b;
}

const sameReport = (a: PdbReport, b: PdbReport | undefined) =>
  b !== undefined &&
  a.allowed === b.allowed &&
  a.resourceVersion === b.resourceVersion &&
  (a.refused ?? false) === (b.refused ?? false);

/**
 * What the node sends of request `req` (from {@link nodeBudgetRequest}), or undefined when it is
 * no news to the plan. A node without a reporting set (`reports` undefined) sends the whole
 * request when {@link budgetRequestIsNews}. One with a set sends when the plan's belief of its
 * holdings, wants or room is wrong, when the PDBs it tracks changed (the plan may have to name
 * another reporter), when a PDB refused it anew (the plan must stop granting it), or when its
 * report of a PDB it reports differs from the last one it sent — any new version, not only a
 * changed allowance: another node's request may have brought the plan a version this
 * reporter's observations skipped (a lower allowance), and only the reporter's next version
 * brings the rise after it; a node just named reporter sends nothing while its view is the one
 * it last sent (the plan has that one or a newer one). A PDB it does not report is some other
 * node's to report. The request sent then carries only the reports that differ from the
 * ones the plan has from this node. A reporter with no belief (a new run) sends its baseline.
 */
export function budgetRequestToSend(
  belief: BudgetBelief | undefined,
  req: PdbBudgetRequest,
  reports: string[] | undefined,
): PdbBudgetRequest | undefined {
  if (reports === undefined) return budgetRequestIsNews(belief, req) ? req : undefined;
  const last = new Map((belief?.pdbs ?? []).map((r) => [r.key, r]));
  const changed = req.pdbs.filter((r) => !sameReport(r, last.get(r.key)));
  const send = () => ({ ...req, pdbs: changed });
  if (!belief)
    return Object.keys(req.wants).length > 0 || Object.keys(req.holding).length > 0 || reports.length > 0
      ? send()
      : undefined;
  const total = (w: Record<string, number>) => Object.values(w).reduce((a, n) => a + n, 0);
  const takes = (room: number | undefined, w: Record<string, number>) => Math.min(room ?? Infinity, total(w));
  const tracked = req.tracked ?? [];
  const news =
    !sameCounts(req.holding, belief.holding) ||
    !sameCounts(req.wants, belief.wants) ||
    takes(req.room, req.wants) !== takes(belief.room, belief.wants) ||
    belief.tracked === undefined ||
    tracked.length !== belief.tracked.length ||
    tracked.some((k, i) => k !== belief.tracked![i]) ||
    changed.some((r) => reports.includes(r.key) || (r.refused === true && !last.get(r.key)?.refused));
  return news ? send() : undefined;
}

const sameCounts = (a: Record<string, number>, b: Record<string, number>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if ((a[k] ?? 0) !== (b[k] ?? 0)) return false;
  return true;
};

/**
 * Whether request `req` tells the plan something it does not believe already: the node holds less
 * (it gave disruptions back) or more, it wants more or less, it can take more or fewer at once
 * (the smaller of its room and its wants), or, while it wants something, it saw a PDB change.
 * Applying a grant or spending one is no news (the plan counted it when it issued it).
 */
export function budgetRequestIsNews(belief: BudgetBelief | undefined, req: PdbBudgetRequest): boolean {
  const wanting = Object.keys(req.wants).length > 0;
  if (!belief) return wanting || Object.keys(req.holding).length > 0;
  const total = (w: Record<string, number>) => Object.values(w).reduce((a, n) => a + n, 0);
  const takes = (room: number | undefined, w: Record<string, number>) => Math.min(room ?? Infinity, total(w));
  return (
    !sameCounts(req.holding, belief.holding) ||
    !sameCounts(req.wants, belief.wants) ||
    takes(req.room, req.wants) !== takes(belief.room, belief.wants) ||
    (wanting && JSON.stringify(req.pdbs) !== JSON.stringify(belief.pdbs))
  );
}
