/**
 * One PodDisruptionBudget budget per plan: the plan workflow hands out each PDB's allowed
 * disruptions to its node drains, so two nodes never spend the same disruption.
 *
 * Why: the eviction subresource checks `status.disruptionsAllowed` of the pod's PDB and answers
 * 429 when it is 0; a successful eviction lowers it in the same write. Each node drain only knows
 * the evictions it made itself, so two nodes that saw the same PDB allow 2 would send 4 calls and
 * get two 429s. The plan sees every node's requests, so it can keep the sum in bounds.
 *
 * Protocol (signals, see src/workflows/messages.ts):
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
 *   of the PDB is reported, or the refused node reports the same version unrefused (its probe
 *   bound passed: one pod may try, as the node's own rule says).
 *
 * The budget is an optimisation, never the safety rule: the API server still refuses what a PDB
 * does not allow, and the node's own accounting (src/drain/node-drain.ts) still applies.
 *
 * Pure and JSON-plain: the ledger is part of the plan's state, carried across continue-as-new.
 */

/** A PDB as a node last observed it. */
export interface PdbReport {
  /** `namespace/name`. */
  key: string;
  /**
   * status.disruptionsAllowed as observed; 0 while the node counts a refusal, at most 1 once the
   * refusal's probe bound passed without the PDB changing (one pod may try, whatever it shows).
   */
  allowed: number;
  /** metadata.resourceVersion of that observation. */
  resourceVersion?: string;
  /** The node was refused (429) by this PDB, its probe bound has not passed, and the PDB did not change. */
  refused?: boolean;
}

/** Node → plan (signal `pdbBudget`): what one node holds and wants now. */
export interface PdbBudgetRequest {
  node: string;
  /** Sequence number of the last {@link PdbGrant} the node applied (0: none). */
  grantSeq: number;
  /** PDB key → disruptions the node holds: unused grants + calls in flight + 201s not yet observed. */
  holding: Record<string, number>;
  /** PDB key → disruptions the node could use now beyond what it holds (each PDB on its own). */
  wants: Record<string, number>;
  /** How many more evictions the node can start at once beyond its grants (absent: no bound). */
  room?: number;
  /** The PDBs covering the node's pods, as the node last observed them. */
  pdbs: PdbReport[];
}

/** Plan → node (signal `pdbGrant`): disruptions the node may spend, per PDB key. */
export interface PdbGrant {
  /** Increasing per node, from 1. */
  seq: number;
  grants: Record<string, number>;
}

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
}

/** The plan's ledger: the freshest report of each PDB and every node's holdings, JSON-plain. */
export interface PdbBudgetLedger {
  pdbs: Record<string, { allowed: number; resourceVersion?: string; refused?: boolean }>;
  /** By node name, in the order of their first request (the earlier node is served first). */
  nodes: Record<string, NodeBudgetLedger>;
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

/** Applies a node's request: its PDB reports, holdings and wants. Mutates and returns `ledger`. */
export function applyBudgetRequest(ledger: PdbBudgetLedger, req: PdbBudgetRequest): PdbBudgetLedger {
  for (const r of req.pdbs) {
    const known = ledger.pdbs[r.key];
    const rv = r.resourceVersion;
    if (!known || newerResourceVersion(rv, known.resourceVersion))
      ledger.pdbs[r.key] = {
        allowed: r.allowed,
        ...(rv !== undefined ? { resourceVersion: rv } : {}),
        ...(r.refused ? { refused: true } : {}),
      };
    else if (r.refused) {
      // Refused at a version not newer: nothing is allowed now.
      known.allowed = 0;
      known.refused = true;
    } else if (known.refused && rv === known.resourceVersion) {
      // The refused node's probe bound passed without the PDB changing: what it may try now.
      known.allowed = r.allowed;
      delete known.refused;
    }
  }
  const n = (ledger.nodes[req.node] ??= { grantSeq: 0, holding: {}, wants: {}, issued: [], nextSeq: 1 });
  n.grantSeq = Math.max(n.grantSeq, req.grantSeq);
  n.issued = n.issued.filter((g) => g.seq > n.grantSeq);
  n.holding = { ...req.holding };
  n.wants = { ...req.wants };
  if (req.room !== undefined) n.room = req.room;
  else delete n.room;
  return ledger;
}

/** Forgets a node whose drain ended: what it held is free again. Mutates and returns `ledger`. */
export function forgetBudgetNode(ledger: PdbBudgetLedger, node: string): PdbBudgetLedger {
  // The PDB reports stay: a later report of an older version must not look like news.
  delete ledger.nodes[node];
  return ledger;
}

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
 * Mutates `ledger`. @returns the grants to send, at most one per node.
 */
export function allocateBudget(ledger: PdbBudgetLedger): { node: string; grant: PdbGrant }[] {
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
    if (Object.keys(grants).length === 0) continue;
    const grant = { seq: n.nextSeq++, grants };
    n.issued.push(grant);
    out.push({ node, grant });
  }
  return out;
}
