/**
 * An in-memory cluster implementing the activity contract ({@link DrainActivities}) for workflow
 * tests in the time-skipping environment. It models what the workflow depends on — node claims and
 * cordons, PodDisruptionBudgets whose allowance is spent by evictions and restored when a
 * replacement is "ready", scripted Eviction API answers (429 with or without Retry-After, 500) —
 * and records every call with the Temporal server's (skipped) time, so tests can assert orderings
 * and cooldowns. Real-cluster behaviour is covered by the e2e tests.
 */
import { Context } from '@temporalio/activity';
import type {
  CordonResult,
  DrainActivities,
  EvictResult,
  NodePods,
  PodItem,
  PodState,
  ResolvedNodes,
} from '../../src/activities/types.js';
import type { MaintenancePlanStatus } from '../../src/api/plan.js';
import { statusEquals } from '../../src/drain/conditions.js';

export interface SimPod {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  action?: PodItem['action'];
  reason?: string;
  pdbs?: string[];
  /** Scripted answers for the next eviction calls (consumed in order; then the PDB rules apply). */
  script?: EvictResult[];
  gone?: boolean;
}

export interface SimNode {
  unschedulable: boolean;
  heldBy?: string;
  wasUnschedulable?: boolean;
}

export interface CallRecord {
  name: string;
  /** Server (skipped) time of the call, ms since epoch. */
  atMs: number;
  arg: unknown;
  result?: unknown;
}

/** Time of the current activity attempt on the Temporal server's clock (skipped time). */
function serverNow(): number {
  return Context.current().info.currentAttemptScheduledTimestampMs;
}

export class SimCluster {
  nodes = new Map<string, SimNode>();
  pods = new Map<string, SimPod>();
  /** PDB key → disruptions allowed now. */
  pdbs = new Map<string, number>();
  /** PDBs whose allowance comes back when an evicted pod is gone (its replacement is Ready). */
  refill = new Set<string>();
  calls: CallRecord[] = [];
  statuses: { atMs: number; status: MaintenancePlanStatus }[] = [];
  events: { reason: string; message: string }[] = [];

  addNode(name: string, unschedulable = false): this {
    this.nodes.set(name, { unschedulable });
    return this;
  }

  addPod(p: Omit<SimPod, 'uid'> & { uid?: string }): this {
    const key = `${p.namespace}/${p.name}`;
    this.pods.set(key, { uid: `uid-${key}`, ...p });
    return this;
  }

  evictions(): CallRecord[] {
    return this.calls.filter((c) => c.name === 'evictPod');
  }

  lastStatus(): MaintenancePlanStatus | undefined {
    return this.statuses.at(-1)?.status;
  }

  private record(name: string, arg: unknown, result?: unknown): void {
    this.calls.push({ name, atMs: serverNow(), arg, result });
  }

  activities(): DrainActivities {
    return {
      resolveNodes: async (input): Promise<ResolvedNodes> => {
        const names = new Set(input.nodeNames ?? []);
        if (input.nodeSelector) for (const n of this.nodes.keys()) names.add(n);
        const nodes = [...names].filter((n) => this.nodes.has(n)).sort();
        const missing = [...names].filter((n) => !this.nodes.has(n)).sort();
        this.record('resolveNodes', input, { nodes, missing });
        return { nodes, missing };
      },
      cordonNode: async ({ plan, node }): Promise<CordonResult> => {
        const n = this.nodes.get(node);
        let res: CordonResult;
        if (!n) res = { outcome: 'NodeNotFound' };
        else if (n.heldBy && n.heldBy !== plan.uid) res = { outcome: 'HeldByOtherPlan', heldBy: n.heldBy };
        else {
          if (!n.heldBy) {
            n.heldBy = plan.uid;
            n.wasUnschedulable = n.unschedulable;
          }
          n.unschedulable = true;
          res = { outcome: 'Cordoned', wasUnschedulable: n.wasUnschedulable ?? false };
        }
        this.record('cordonNode', { node }, res);
        return res;
      },
      releaseNode: async ({ plan, node, uncordon }) => {
        const n = this.nodes.get(node);
        let uncordoned = false;
        if (n && n.heldBy === plan.uid) {
          if (uncordon && !n.wasUnschedulable) {
            n.unschedulable = false;
            uncordoned = true;
          }
          delete n.heldBy;
          delete n.wasUnschedulable;
        }
        this.record('releaseNode', { node, uncordon }, { uncordoned });
        return { uncordoned };
      },
      listNodePods: async ({ node }): Promise<NodePods> => {
        const pods: PodItem[] = [...this.pods.values()]
          .filter((p) => p.node === node && !p.gone)
          .map((p) => ({
            key: `${p.namespace}/${p.name}`,
            namespace: p.namespace,
            name: p.name,
            uid: p.uid,
            action: p.action ?? 'Evict',
            reason: p.reason ?? 'Evictable',
            message: p.reason ?? 'evictable',
            pdbs: p.pdbs ?? [],
          }))
          .sort((a, b) => a.key.localeCompare(b.key));
        const keys = new Set(pods.flatMap((p) => p.pdbs));
        const pdbs = [...keys].sort().map((key) => ({ key, disruptionsAllowed: this.pdbs.get(key) ?? 0 }));
        this.record('listNodePods', { node });
        return { pods, pdbs };
      },
      evictPod: async (input): Promise<EvictResult> => {
        const key = `${input.namespace}/${input.name}`;
        const pod = this.pods.get(key);
        let res: EvictResult;
        if (!pod || pod.gone || pod.uid !== input.uid) res = { outcome: 'Gone' };
        else if (pod.script?.length) res = pod.script.shift()!;
        else if ((pod.pdbs ?? []).length > 1)
          res = {
            outcome: 'Failed',
            code: 500,
            reason: 'MultiplePodDisruptionBudgets',
            message: 'more than one PDB',
          };
        else if (pod.pdbs?.length === 1 && (this.pdbs.get(pod.pdbs[0]!) ?? 0) <= 0)
          res = {
            outcome: 'TooManyRequests',
            cause: 'DisruptionBudget',
            pdb: pod.pdbs[0]!,
            message: `Cannot evict pod as it would violate the pod's disruption budget.`,
          };
        else res = { outcome: 'Evicted' };
        if (res.outcome === 'Evicted' && pod) {
          const pdb = pod.pdbs?.[0];
          if (pdb) this.pdbs.set(pdb, (this.pdbs.get(pdb) ?? 0) - 1);
        }
        this.record('evictPod', input, res);
        return res;
      },
      checkPod: async ({ namespace, name, uid }): Promise<PodState> => {
        const pod = this.pods.get(`${namespace}/${name}`);
        const res: PodState = !pod || pod.gone || pod.uid !== uid ? 'Gone' : 'Present';
        this.record('checkPod', { namespace, name }, res);
        return res;
      },
      waitPodGone: async ({ namespace, name }) => {
        const key = `${namespace}/${name}`;
        const pod = this.pods.get(key);
        if (pod && !pod.gone) {
          pod.gone = true;
          const pdb = pod.pdbs?.[0];
          if (pdb && this.refill.has(pdb)) this.pdbs.set(pdb, (this.pdbs.get(pdb) ?? 0) + 1);
        }
        this.record('waitPodGone', { key });
        return { gone: true };
      },
      waitDisruptionAllowed: async ({ pdb }) => {
        // Like the real activity's watch: return as soon as the budget frees (polled here for up
        // to 2 s of real time; the workflow's own timer enforces the bound in skipped time).
        for (let i = 0; i < 200 && (this.pdbs.get(pdb) ?? 0) <= 0 && this.pdbs.has(pdb); i++) {
          await new Promise((r) => setTimeout(r, 10));
        }
        const allowed = this.pdbs.get(pdb);
        const res = { disruptionsAllowed: Math.max(0, allowed ?? 0), exists: allowed !== undefined };
        this.record('waitDisruptionAllowed', { pdb }, res);
        return res;
      },
      publishStatus: async ({ status }) => {
        const last = this.lastStatus();
        if (last && statusEquals(last, status)) return { written: false, exists: true };
        this.statuses.push({ atMs: serverNow(), status });
        return { written: true, exists: true };
      },
      recordEvent: async ({ reason, message }) => {
        this.events.push({ reason, message });
      },
    };
  }
}
