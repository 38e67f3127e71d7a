/**
 * The benchmark scenarios of issue 6. Every run of a scenario builds the same workload on fresh kwok
 * nodes (see lib/workload.ts): `targets` nodes to drain holding `perTarget` pods of each of
 * `deployments` Deployments, optional `others` nodes holding `perOther` pods of each Deployment (not
 * drained), and `spares` empty nodes for the replacements.
 */

/** One scenario. */
export interface Scenario {
  name: string;
  description: string;
  /** Nodes drained. */
  targets: number;
  /** Deployments; each has perTarget pods on every target and perOther on every other node. */
  deployments: number;
  perTarget: number;
  /** Pods of each Deployment per target, target by target (overrides perTarget; length = targets). */
  perTargetByNode?: number[];
  /** Nodes that hold replicas but are not drained. */
  others: number;
  perOther: number;
  /** Empty, schedulable nodes for replacement pods. */
  spares: number;
  /**
   * One PodDisruptionBudget per Deployment with this maxUnavailable; none when absent. 0 makes a
   * budget that never allows a disruption (see `blocked`).
   */
  pdbMaxUnavailable?: number | string;
  /** Nodes drained at once (plan maxUnavailableNodes; parallel `kubectl drain` processes). */
  maxUnavailableNodes: number;
  /** Plan drainTimeoutSeconds and `kubectl drain --timeout`. */
  timeoutSeconds: number;
  /** Nodes filled at once while building the workload (1 = exact pods per node). */
  fillGroup: number;
  /**
   * When the targets are cordoned (plan spec.cordon) [PerNode]. With AllAtStart the kubectl side
   * first runs one `kubectl cordon` over every target (inside its wall time), so both tools keep
   * replacements off the targets.
   */
  cordon?: 'PerNode' | 'AllAtStart';
  /**
   * No pod can be evicted (PDBs at maxUnavailable 0): a run succeeds when the tool gives up at its
   * deadline (plan Blocked; every `kubectl drain` exits) with every pod still in place. Its figures
   * are per minute of the run, not per evicted pod.
   */
  blocked?: boolean;
}

/** Pod settings shared by every scenario. */
export const POD_GRACE_SECONDS = 2;
export const POD_READY_DELAY = '3s';

/** 20 nodes drained 5 at once, every node's pods behind the same 10 PDBs. */
const FLEET: Scenario = {
  name: 'fleet',
  description: '20 nodes × 30 pods (10 Deployments × 60 replicas), PDB maxUnavailable 10%, 5 nodes at once',
  targets: 20,
  deployments: 10,
  perTarget: 3,
  others: 0,
  perOther: 0,
  spares: 5,
  pdbMaxUnavailable: '10%',
  maxUnavailableNodes: 5,
  timeoutSeconds: 1800,
  fillGroup: 1,
};

export const SCENARIOS: Record<string, Scenario> = {
  free: {
    name: 'free',
    description: '1 node, 60 pods from 6 Deployments, no PDBs',
    targets: 1,
    deployments: 6,
    perTarget: 10,
    others: 0,
    perOther: 0,
    spares: 2,
    maxUnavailableNodes: 1,
    timeoutSeconds: 300,
    fillGroup: 1,
  },
  tight: {
    name: 'tight',
    description:
      '1 node with 12 pods of 3 Deployments × 8 replicas (other 12 on 2 other nodes), PDB maxUnavailable 1 each',
    targets: 1,
    deployments: 3,
    perTarget: 4,
    others: 2,
    perOther: 2,
    spares: 1,
    pdbMaxUnavailable: 1,
    maxUnavailableNodes: 1,
    timeoutSeconds: 300,
    fillGroup: 1,
  },
  fleet: FLEET,
  'fleet-all': {
    ...FLEET,
    name: 'fleet-all',
    description:
      'fleet with every target cordoned at the start (plan spec.cordon AllAtStart; kubectl cordon first): 600 pods, no replacement lands on a target',
    cordon: 'AllAtStart',
  },
  scale: {
    name: 'scale',
    description:
      '200 nodes × 20 pods (20 Deployments × 200 replicas), PDB maxUnavailable 10%, 20 nodes at once, all targets cordoned at the start',
    targets: 200,
    deployments: 20,
    perTarget: 1,
    others: 0,
    perOther: 0,
    spares: 10,
    pdbMaxUnavailable: '10%',
    maxUnavailableNodes: 20,
    timeoutSeconds: 3600,
    fillGroup: 1,
    cordon: 'AllAtStart',
  },
  blocked: {
    name: 'blocked',
    description:
      '3 nodes with 20 pods of 2 Deployments (8/6/6 per node) behind PDBs that never allow a disruption (maxUnavailable 0), all 3 at once, until the deadline',
    targets: 3,
    deployments: 2,
    perTarget: 0,
    perTargetByNode: [4, 3, 3],
    others: 0,
    perOther: 0,
    spares: 0,
    pdbMaxUnavailable: 0,
    maxUnavailableNodes: 3,
    timeoutSeconds: 600,
    fillGroup: 1,
    blocked: true,
  },
};

/** Pods of each Deployment on each target, target by target. */
export function perTargetList(s: Scenario): number[] {
  return s.perTargetByNode ?? Array.from({ length: s.targets }, () => s.perTarget);
}

/** Pods on the targets at the start of a run. */
export function podsOnTargets(s: Scenario): number {
  return s.deployments * perTargetList(s).reduce((a, b) => a + b, 0);
}
