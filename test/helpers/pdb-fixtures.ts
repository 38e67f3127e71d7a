/**
 * Fixtures of the PDB budget tables (test/unit/pdb-budget.test.ts, pdb-reporters.test.ts): a
 * budget request and report, pods behind PDBs, an observation, and a node drain holding three
 * pods behind two PDBs (`app/a`: a1, a2; `app/b`: b1) after one observation. Plain data over the
 * pure reducers of src/drain; no Temporal, no I/O.
 */
import type { NodeObservation, ObservedPod } from '../../src/contract/observation.js';
import type { PdbBudgetRequest, PdbReport } from '../../src/contract/budget.js';
import { applyObservation } from '../../src/drain/node/observation.js';
import { initialNodeState, type NodeDrainState } from '../../src/drain/node/state.js';

/** The tables' clock, ms since epoch. */
export const NOW = 1_700_000_000_000;
/** eviction.retryBackoff of the tables, seconds. */
export const BACKOFF = { initialSeconds: 1, maxSeconds: 30 };
/** The node drain settings of the tables. */
export const SETTINGS = { maxConcurrentPerNode: 4, retryBackoff: BACKOFF };

/** A budget request of `node` holding and wanting nothing, with `over` applied. */
export const req = (node: string, over: Partial<PdbBudgetRequest> = {}): PdbBudgetRequest => ({
  node,
  grantSeq: 0,
  holding: {},
  wants: {},
  pdbs: [],
  ...over,
});

/** A node's report of PDB `key`: `allowed` disruptions at resourceVersion `rv`, refused when set. */
export const rep = (key: string, allowed: number, rv: string, refused?: boolean): PdbReport => ({
  key,
  allowed,
  resourceVersion: rv,
  ...(refused ? { refused: true } : {}),
});

/** An evictable pod `app/<name>` (uid `uid-<name>`) behind PDB `pdb`. */
export const pdbPod = (name: string, pdb: string): ObservedPod => ({
  key: `app/${name}`,
  namespace: 'app',
  name,
  uid: `uid-${name}`,
  action: 'Evict',
  reason: 'Evictable',
  message: 'evictable',
  pdbs: [pdb],
});

let fingerprints = 0;

/** A changed observation of an existing, cordoned node with `pods` and `pdbs` (a new fingerprint each). */
export function observed(
  pods: ObservedPod[],
  pdbs: { key: string; disruptionsAllowed: number; resourceVersion?: string }[],
): Extract<NodeObservation, { changed: true }> {
  return {
    changed: true,
    fingerprint: `fp-${++fingerprints}`,
    node: { exists: true, unschedulable: true },
    pods,
    pdbs,
  };
}

/**
 * Node `n1` (deadline in an hour), claimed, in a plan that hands out budgets (`budget`), after one
 * observation of a1 and a2 behind `app/a` (`allowedA` disruptions, version 7) and b1 behind `app/b`
 * (`allowedB`, version 8).
 */
export function budgetedNode(
  allowedA: number,
  allowedB: number,
  budget: NonNullable<NodeDrainState['budget']>,
): NodeDrainState {
  const s = initialNodeState('n1', NOW + 3600_000, false);
  s.claimed = true;
  s.budget = budget;
  s.observeSeq = 1;
  applyObservation(
    s,
    observed(
      [pdbPod('a1', 'app/a'), pdbPod('a2', 'app/a'), pdbPod('b1', 'app/b')],
      [
        { key: 'app/a', disruptionsAllowed: allowedA, resourceVersion: '7' },
        { key: 'app/b', disruptionsAllowed: allowedB, resourceVersion: '8' },
      ],
    ),
    1,
    NOW,
  );
  return s;
}
