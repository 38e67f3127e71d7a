/**
 * The messages of the plan's PodDisruptionBudget budget: a node's request and the plan's grant
 * (signals `pdbBudget` and `pdbGrant` of src/contract/node-messages.ts). The protocol and the
 * ledger that keeps the sum of every node's disruptions within each PDB's allowance are in
 * src/drain/pdb-budget.ts.
 *
 * Ground floor (src/contract): pure, JSON-plain types.
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
  /**
   * The PDBs covering the node's pods, as the node last observed them: all of them, or, with
   * `tracked`, only those whose report changed since the node's previous request.
   */
  pdbs: PdbReport[];
  /**
   * Keys of every PDB the node watches, sorted. Sent by nodes that take part in reporter
   * assignment (see src/drain/pdb-budget.ts); absent from older nodes' requests.
   */
  tracked?: string[];
}

/** Plan → node (signal `pdbGrant`): disruptions the node may spend, per PDB key. */
export interface PdbGrant {
  /** Increasing per node, from 1. */
  seq: number;
  grants: Record<string, number>;
  /**
   * Keys of the PDBs this node reports (absolute, sorted; replaces the node's previous set).
   * Absent: unchanged; a node that never received one reports every change it sees.
   */
  reports?: string[];
}
