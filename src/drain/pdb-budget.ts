/**
 * One PodDisruptionBudget budget per plan: the plan workflow hands out each PDB's allowed
 * disruptions to its node drains, so two nodes never spend the same disruption.
 *
 * Why: the eviction subresource checks `status.disruptionsAllowed` of the pod's PDB and answers
 * 429 when it is 0; a successful eviction lowers it in the same write. Each node drain only knows
 * the evictions it made itself, so two nodes that saw the same PDB allow 2 would send 4 calls and
 * get two 429s. The plan sees every node's requests, so it can keep the sum in bounds.
 *
 * Protocol (signals, see src/contract/node-messages.ts; the messages are in src/contract/budget.ts):
 * - A node sends a {@link PdbBudgetRequest}: per PDB what it holds (grants not yet used, calls in
 *   flight, calls answered 201 that its own observations do not yet show), what more it could use
 *   now, and the PDBs as it last observed them. The request is absolute, so a lost or repeated
 *   one corrects itself with the next; `grantSeq` names the last grant it had applied.
 * - The plan answers with {@link PdbGrant}s (numbered per node). What the plan counts against a PDB
 *   is what every node holds plus the grants issued after the node's last request.
 * - The freshest observation of a PDB wins: resourceVersions of the same resource compare as
 *   integers on etcd-backed API servers (KEP-5504, "comparable resource versions"); one that is not
 *   a canonical positive integer counts as newer when it differs, a report without one always.
 * - A 429 seen by a node reports the PDB with `refused`: it allows nothing until a newer version
 *   of the PDB is reported, or the refused node reports it unrefused (its probe bound passed: one
 *   pod may try, as the node's own rule says). The refused node may report an older version than
 *   the plan's freshest: a node that does not report a PDB is not woken by its status writes, so
 *   its view can lag. Its unrefused report then still ends the refusal it made (see
 *   {@link applyBudgetRequest}): kept until the PDB changed again, such a refusal would last for
 *   good when nothing else changed it.
 * - One reporting node per PDB ({@link allocateBudget}): every node watches the PDBs of its own pods, so a PDB shared by five running nodes
 *   used to be reported five times per change. The plan names one reporter per PDB among the
 *   running nodes that track it (in a grant's `reports`, absolute); only the reporter sends a
 *   request for nothing but a new version of that PDB. Every request still carries the
 *   node's reports that changed since its previous one, so a node that gives back a disruption
 *   because its observation shows the eviction in the PDB also brings that observation (the
 *   ledger is never older than what a holding is lowered for). Such nodes send `tracked` (every
 *   PDB key they watch), `pdbs` then holds only the changed reports, and their `wants` are no
 *   longer bounded by their own view of the allowance (the plan's freshest report bounds them), and
 *   they spend the plan's grants as they come (the eviction subresource's PDB check stays the
 *   safety rule). A decrease of an allowance that
 *   no eviction explains (a pod turned unready) reaches the plan with the next request of any
 *   node tracking the PDB; until then the nodes' own views and the API server refuse the excess.
 *
 * The budget is an optimisation, never the safety rule: the API server still refuses what a PDB
 * does not allow, and the node's own accounting (src/drain/node/budget.ts) still applies.
 *
 * Pure and JSON-plain: the ledger is part of the plan's state, carried across continue-as-new.
 */
import type { PdbBudgetRequest, PdbGrant } from '../contract/budget.js';

/** What the plan knows of one node's budget. */
export interface NodeBudgetLedger {
  /** The node's last request's `grantSeq`. */
  grantSeq: number;
  holding: Record<string, number>;
  wants: Record<string, number>;
  /** The node's last `room` (absent: no bound). */
  room?: number;
  /** Grants issued after `grantSeq`, oldest first. */
  issued: PdbGrant[];
  /** Sequence number of the next grant to this node. */
  nextSeq: number;
  /** The node's last `tracked` (absent: the node takes no part in reporter assignment). */
  tracked?: string[];
  /** The reporting set last sent to the node (absent: none sent yet). */
  reports?: string[];
}

/** The plan's ledger: the freshest report of each PDB and every node's holdings, JSON-plain. */
export interface PdbBudgetLedger {
  /**
   * By PDB key: the freshest report. `refusedBy` names the node whose 429 made `refused` (absent
   * in ledgers from before it was recorded).
   */
  pdbs: Record<string, { allowed: number; resourceVersion?: string; refused?: boolean; refusedBy?: string }>;
  /** By node name, in the order of their first request (the earlier node is served first). */
  nodes: Record<string, NodeBudgetLedger>;
  /** PDB key → the node that reports it (plans that assign reporters). */
  reporters?: Record<string, string>;
}

/** An empty ledger. */
export function emptyLedger(): PdbBudgetLedger {
  return { pdbs: {}, nodes: {} };
}

const CANONICAL_RV = /^[1-9][0-9]*$/;

/**
 * Whether resourceVersion `a` is newer than `b` (KEP-5504 order: canonical positive integers,
 * compared by length, then digit by digit). Unknown or non-canonical versions: newer when they differ.
 */
export function newerResourceVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return true; // nothing to compare: the latest report wins
  if (!CANONICAL_RV.test(a) || !CANONICAL_RV.test(b)) return a !== b;
  return a.length !== b.length ? a.length > b.length : a > b;
}

/**
 * Applies a node's request: its PDB reports, holdings and wants. Mutates and returns `ledger`.
 *
 * Per PDB report: a newer version replaces the plan's (refused or not); a refusal at a version
 * not newer makes the PDB allow nothing now; an unrefused report ends a refusal when it carries
 * the plan's version, or when it comes from the node that was refused (even when that node's
 * view of the PDB is older than the plan's: kept, such a refusal stalled a PDB whose status no
 * longer changed): its probe bound passed, or it saw the PDB change. The PDB then allows what that node
 * reports (1 after a probe bound), and the plan's version stays.
 */
export function applyBudgetRequest(ledger: PdbBudgetLedger, req: PdbBudgetRequest): PdbBudgetLedger {
  for (const r of req.pdbs) {
    const known = ledger.pdbs[r.key];
    const rv = r.resourceVersion;
    if (!known || newerResourceVersion(rv, known.resourceVersion))
      ledger.pdbs[r.key] = {
        allowed: r.allowed,
        ...(rv !== undefined ? { resourceVersion: rv } : {}),
        ...(r.refused ? { refused: true, refusedBy: req.node } : {}),
      };
    else if (r.refused) {
      // Refused at a version not newer: nothing is allowed now.
      known.allowed = 0;
      known.refused = true;
      known.refusedBy = req.node;
    } else if (known.refused && (rv === known.resourceVersion || known.refusedBy === req.node)) {
      // The refused node's probe bound passed (or its view changed): what it may try now.
      known.allowed = r.allowed;
      delete known.refused;
      delete known.refusedBy;
    }
  }
  const n = (ledger.nodes[req.node] ??= { grantSeq: 0, holding: {}, wants: {}, issued: [], nextSeq: 1 });
  n.grantSeq = Math.max(n.grantSeq, req.grantSeq);
  // The next grant is numbered past what the node applied: a node ignores a number it has seen.
  n.nextSeq = Math.max(n.nextSeq, n.grantSeq + 1);
  n.issued = n.issued.filter((g) => g.seq > n.grantSeq);
  n.holding = { ...req.holding };
  n.wants = { ...req.wants };
  if (req.room !== undefined) n.room = req.room;
  else delete n.room;
  if (req.tracked !== undefined) n.tracked = [...req.tracked];
  else delete n.tracked;
  return ledger;
}

/** Forgets a node whose drain ended: what it held is free again. Mutates and returns `ledger`. */
export function forgetBudgetNode(ledger: PdbBudgetLedger, node: string): PdbBudgetLedger {
  // The PDB reports stay: a later report of an older version must not look like news.
  delete ledger.nodes[node];
  // Its PDBs get another reporter at the next allocation.
  if (ledger.reporters)
    for (const [key, r] of Object.entries(ledger.reporters)) if (r === node) delete ledger.reporters[key];
  return ledger;
}

/**
 * Names one reporter per PDB: the current one while it still tracks the PDB, else the latest
 * requester that tracks it (the node whose drain began last is likely to run longest, so the PDB
 * changes hands less often; nodes that send no `tracked` are never chosen). Mutates `ledger`.
 * @returns node name → the PDB keys it reports, sorted (nodes that report none are absent).
 */
export function assignReporters(ledger: PdbBudgetLedger): Map<string, string[]> {
  const reporters = (ledger.reporters ??= {});
  const tracks = (node: string, key: string) => ledger.nodes[node]?.tracked?.includes(key) === true;
  const keys = new Set<string>(Object.keys(reporters));
  for (const n of Object.values(ledger.nodes)) for (const k of n.tracked ?? []) keys.add(k);
  for (const key of keys) {
    const current = reporters[key];
    if (current !== undefined && tracks(current, key)) continue;
    const next = Object.keys(ledger.nodes)
      .reverse()
      .find((node) => tracks(node, key));
    if (next !== undefined) reporters[key] = next;
    else delete reporters[key];
  }
  const out = new Map<string, string[]>();
  for (const key of Object.keys(reporters).sort()) {
    const node = reporters[key]!;
    out.set(node, [...(out.get(node) ?? []), key]);
  }
  return out;
}

const sameKeys = (a: string[] | undefined, b: string[] | undefined) =>
  a !== undefined && b !== undefined && a.length === b.length && a.every((k, i) => k === b[i]);

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, n) => a + n, 0);
const sumIssued = (n: NodeBudgetLedger, key: string) =>
  n.issued.reduce((a, g) => a + (g.grants[key] ?? 0), 0);

/** Disruptions of PDB `key` the plan can still hand out (its freshest allowance minus what nodes hold). */
export function budgetAvailable(ledger: PdbBudgetLedger, key: string): number {
  const pdb = ledger.pdbs[key];
  if (!pdb) return 0;
  let used = 0;
  for (const n of Object.values(ledger.nodes)) used += (n.holding[key] ?? 0) + sumIssued(n, key);
  return pdb.allowed - used;
}

/**
 * Hands out what each PDB still allows to the nodes that want it, earliest requester first (it
 * finishes sooner and frees its slot of maxUnavailableNodes), within each node's `room`, one
 * disruption at a time from the PDB with the most left (so the nodes' room is spread over the
 * PDBs instead of all nodes waiting on the same one), and records the grants as issued.
 *
 * It also names each PDB's reporter ({@link assignReporters}) and tells each node that takes part its reporting set in a
 * grant's `reports` when that set changed: with the node's next grant, or at once in a grant of
 * no disruptions when the node gained a PDB to report (without it nobody might report that PDB's
 * next rise). A node that lost one only reports more than needed until its next grant.
 *
 * Mutates `ledger`. @returns the grants to send, at most one per node.
 */
export function allocateBudget(ledger: PdbBudgetLedger): { node: string; grant: PdbGrant }[] {
  const reportsOf = assignReporters(ledger);
  const out: { node: string; grant: PdbGrant }[] = [];
  const available = new Map<string, number>();
  for (const key of Object.keys(ledger.pdbs)) available.set(key, budgetAvailable(ledger, key));
  for (const [node, n] of Object.entries(ledger.nodes)) {
    const grants: Record<string, number> = {};
    let room = (n.room ?? Infinity) - n.issued.reduce((a, g) => a + total(g.grants), 0);
    const want = new Map<string, number>();
    for (const [key, w] of Object.entries(n.wants)) want.set(key, w - sumIssued(n, key));
    while (room > 0) {
      let best: string | undefined;
      for (const [key, w] of want) {
        const left = available.get(key) ?? 0;
        if (w > 0 && left > 0 && (best === undefined || left > (available.get(best) ?? 0))) best = key;
      }
      if (best === undefined) break;
      grants[best] = (grants[best] ?? 0) + 1;
      available.set(best, available.get(best)! - 1);
      want.set(best, want.get(best)! - 1);
      room--;
    }
    let reports: string[] | undefined;
    let gained = false;
    if (n.tracked !== undefined) {
      const mine = reportsOf.get(node) ?? [];
      if (!sameKeys(mine, n.reports)) {
        reports = mine;
        gained = mine.some((k) => !(n.reports ?? []).includes(k));
      }
    }
    if (Object.keys(grants).length === 0 && !gained) continue;
    const grant: PdbGrant = { seq: n.nextSeq++, grants, ...(reports ? { reports } : {}) };
    if (reports) n.reports = reports;
    n.issued.push(grant);
    out.push({ node, grant });
  }
  return out;
}
