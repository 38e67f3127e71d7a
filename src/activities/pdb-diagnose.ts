/**
 * Gathers what src/drain/pdb-diagnosis.ts needs to say why a PodDisruptionBudget blocks a node's
 * pod, for the observeNode activity: the PDB (from the caller's cache), every pod it
 * selects on any node (one LIST of the PDB's namespace, one page), the pods' owner and its replicas
 * (a GET of the ReplicaSet or StatefulSet), and who spent the budget (pods terminating or listed in
 * `status.disruptedPods`: on the drained node or on a node claimed by the same plan, this plan's;
 * elsewhere, another's).
 *
 * Bounded (the rule is `diagnosisStep` in src/drain/pdb-diagnosis.ts): a block younger than
 * {@link LASTING_BLOCK_MS} is diagnosed from the PDB's spec and status alone, which shows a Never
 * block at once and reads nothing but the owner's name (a GET of the ReplicaSet, remembered) and,
 * for a Deployment's pods, its replicas and strategy (a GET, reused for {@link DIAGNOSIS_TTL_MS}:
 * they decide the remedy by surge, src/drain/remedy.ts); a
 * lasting block is read, at most {@link MAX_DIAGNOSED_PDBS} PDBs per call, and the read reused for
 * {@link DIAGNOSIS_TTL_MS}. A failed read leaves the PDB without a diagnosis (logged): the drain
 * goes on as before. `nextDueMs` tells the observeNode activity when a blocked PDB's diagnosis is
 * due again (a block turning lasting, a read growing old), so that a block nothing moves is read
 * then rather than on the next change, which may never come.
 */
import type { Logger } from 'pino';
import {
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  type V1Node,
  type V1Pod,
  type V1PodDisruptionBudget,
} from '../k8s/client.js';
import { NODE_CLAIM_ANNOTATION } from '../api/plan.js';
import {
  diagnosePdb,
  diagnosisDueMs,
  diagnosisStep,
  type DiagnosisInput,
  type DiagnosisMemo,
  type DiagnosisPod,
} from '../drain/pdb-diagnosis.js';
import { DisruptionBlockKind } from '../api/reasons.js';
import type { DeploymentShape } from '../drain/remedy.js';
import { isPodReady } from '../drain/eviction-gate.js';
import { pdbSelectsPod } from './node-pods.js';
import type { ObservedPod, PdbDiagnosis, PdbObservation } from '../contract/observation.js';

/** PDBs diagnosed at most per call (the first blocked ones, by key). */
export const MAX_DIAGNOSED_PDBS = 3;
/** How long a PDB must have allowed no disruption (as this worker saw it) before its pods are read, ms. */
export const LASTING_BLOCK_MS = 30_000;
/** How long a diagnosis read from a PDB's pods is reused, ms. */
export const DIAGNOSIS_TTL_MS = 30_000;
/** PDBs and owners remembered at most (the memory is cleared beyond). */
const MEMO_CAP = 256;
/** Pods listed at most per namespace (one page). */
const POD_LIST_LIMIT = 500;

/** A diagnosis input's pod from a Pod. */
export function diagnosisPod(p: V1Pod): DiagnosisPod {
  const sched = (p.status?.conditions ?? []).find((c) => c.type === 'PodScheduled');
  const unschedulable =
    sched?.status === 'False' && !p.spec?.nodeName
      ? {
          ...(sched.reason ? { reason: sched.reason } : {}),
          ...(sched.message ? { message: sched.message } : {}),
        }
      : undefined;
  return {
    key: `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`,
    ...(p.spec?.nodeName ? { node: p.spec.nodeName } : {}),
    ...(p.status?.phase ? { phase: p.status.phase } : {}),
    ready: isPodReady({ status: p.status } as Parameters<typeof isPodReady>[0]),
    ...(p.metadata?.deletionTimestamp ? { terminating: true } : {}),
    ...(unschedulable ? { unschedulable } : {}),
  };
}

/** The diagnoser: see the module comment. */
export type PdbDiagnoser = ((args: {
  /** The node drained (its claim annotation tells this plan's other nodes apart). */
  node: V1Node | undefined;
  nodeName: string;
  pods: readonly ObservedPod[];
  pdbs: PdbObservation[];
  pdbsIn: (namespace: string) => readonly V1PodDisruptionBudget[];
}) => Promise<void>) & {
  /**
   * The next time after `nowMs` (ms since epoch) at which a diagnosis of one of these blocked PDBs
   * may read otherwise than the last call made it ({@link diagnosisDueMs}: a block turning
   * lasting, a read growing old), so that an observation that sees no change looks again then;
   * undefined when none is due. Reads nothing.
   */
  nextDueMs(pdbs: readonly PdbObservation[], nowMs: number): number | undefined;
};

/** Builds a {@link PdbDiagnoser} that sets `diagnosis` on the blocked PDBs it is given. */
export function createPdbDiagnoser(kubeConfig: KubeConfig, log: Logger): PdbDiagnoser {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const memo = new Map<string, DiagnosisMemo>();
  /** `Kind ns/name` of a ReplicaSet → its Deployment's (ownership does not change). */
  const owners = new Map<string, string>();
  /** `ns/name` of a Deployment → its replicas and strategy as read, reused for {@link DIAGNOSIS_TTL_MS}. */
  const deployments = new Map<string, { atMs: number; shape: DeploymentShape | undefined }>();

  /** A Deployment's replicas and strategy (one GET, remembered); undefined when it cannot be read. */
  async function deploymentOf(ns: string, name: string): Promise<DeploymentShape | undefined> {
    const key = `${ns}/${name}`;
    const known = deployments.get(key);
    if (known && Date.now() - known.atMs < DIAGNOSIS_TTL_MS) return known.shape;
    const dep = await apps.readNamespacedDeployment({ name, namespace: ns }).catch((err: unknown) => {
      log.warn(
        { deployment: key, err: err instanceof Error ? err.message : String(err) },
        'Deployment read failed',
      );
      return undefined;
    });
    const ru = dep?.spec?.strategy?.rollingUpdate;
    const shape: DeploymentShape | undefined = dep && {
      ...(dep.spec?.replicas !== undefined ? { replicas: dep.spec.replicas } : {}),
      strategy: {
        ...(dep.spec?.strategy?.type ? { type: dep.spec.strategy.type } : {}),
        ...(ru
          ? {
              rollingUpdate: {
                ...(ru.maxUnavailable !== undefined ? { maxUnavailable: ru.maxUnavailable } : {}),
                ...(ru.maxSurge !== undefined ? { maxSurge: ru.maxSurge } : {}),
              },
            }
          : {}),
      },
    };
    deployments.set(key, { atMs: Date.now(), shape });
    return shape;
  }

  /**
   * A Never block of a Deployment's pods: its replicas and strategy say whether a rollout restart
   * is a safe remedy (src/drain/remedy.ts). One GET of the Deployment, only then (remembered).
   */
  async function withRemedy(
    d: PdbDiagnosis | undefined,
    input: DiagnosisInput,
  ): Promise<PdbDiagnosis | undefined> {
    const [kind, key] = input.owner?.ref.split(' ') ?? [];
    if (d?.kind !== DisruptionBlockKind.Never || kind !== 'Deployment' || !key || !input.owner) return d;
    const [ns = '', name = ''] = key.split('/');
    const deployment = await deploymentOf(ns, name);
    return deployment ? diagnosePdb({ ...input, owner: { ...input.owner, deployment } }) : d;
  }

  /** `Kind ns/name` of the owner behind a pod's controller, with its replicas when read. */
  async function ownerOf(ns: string, ref: string): Promise<{ ref: string; replicas?: number }> {
    const [kind, key] = ref.split(' ');
    const name = key?.slice(ns.length + 1) ?? '';
    if (kind === 'ReplicaSet') {
      const rs = await apps.readNamespacedReplicaSet({ name, namespace: ns });
      const dep = (rs.metadata?.ownerReferences ?? []).find((o) => o.controller && o.kind === 'Deployment');
      const replicas = rs.spec?.replicas;
      return {
        ref: dep ? `Deployment ${ns}/${dep.name}` : ref,
        ...(replicas !== undefined ? { replicas } : {}),
      };
    }
    if (kind === 'StatefulSet') {
      const replicas = (await apps.readNamespacedStatefulSet({ name, namespace: ns })).spec?.replicas;
      return { ref, ...(replicas !== undefined ? { replicas } : {}) };
    }
    return { ref };
  }

  /** Disruptions spent by this plan and by others. */
  async function spentBy(
    pdb: V1PodDisruptionBudget,
    selected: V1Pod[],
    nodeName: string,
    claim: string | undefined,
  ): Promise<{ byPlan: number; byOthers: number }> {
    const disrupted = new Set(Object.keys(pdb.status?.disruptedPods ?? {}));
    const spent = selected.filter(
      (p) => p.metadata?.deletionTimestamp || disrupted.has(p.metadata?.name ?? ''),
    );
    let byPlan = 0;
    let byOthers = 0;
    const claims = new Map<string, string | undefined>();
    for (const p of spent) {
      const on = p.spec?.nodeName;
      if (on === nodeName) {
        byPlan++;
        continue;
      }
      if (on && !claims.has(on) && claims.size < MAX_DIAGNOSED_PDBS)
        claims.set(
          on,
          await core.readNode({ name: on }).then(
            (n) => n.metadata?.annotations?.[NODE_CLAIM_ANNOTATION],
            () => undefined,
          ),
        );
      if (claim !== undefined && on !== undefined && claims.get(on) === claim) byPlan++;
      else byOthers++;
    }
    return { byPlan, byOthers };
  }

  async function diagnoseOne(
    args: Parameters<PdbDiagnoser>[0],
    o: PdbObservation,
    blocked: ObservedPod,
  ): Promise<PdbDiagnosis | undefined> {
    const ns = blocked.namespace;
    const pdb = args.pdbsIn(ns).find((p) => `${ns}/${p.metadata?.name ?? ''}` === o.key);
    if (!pdb) return undefined;
    const list = await core.listNamespacedPod({ namespace: ns, limit: POD_LIST_LIMIT });
    const selected = list.items.filter((p) => pdbSelectsPod(pdb, p.metadata?.labels));
    const owner = blocked.controller ? await ownerOf(ns, blocked.controller.ref) : undefined;
    const claim = args.node?.metadata?.annotations?.[NODE_CLAIM_ANNOTATION];
    const spent = await spentBy(pdb, selected, args.nodeName, claim);
    const input: DiagnosisInput = {
      pdb: { key: o.key, ...specAndStatus(pdb, o) },
      node: args.nodeName,
      pod: blocked.key,
      pods: selected.map(diagnosisPod),
      ...(owner ? { owner } : {}),
      spent,
    };
    return withRemedy(diagnosePdb(input), input);
  }

  /** The diagnosis the PDB's spec and status prove alone (a Never block), naming the owner. */
  async function quick(o: PdbObservation, blocked: ObservedPod, pdb: V1PodDisruptionBudget) {
    const input = { pdb: { key: o.key, ...specAndStatus(pdb, o) }, node: '', pods: [] };
    if (diagnosePdb(input)?.kind !== DisruptionBlockKind.Never) return undefined;
    const ref = blocked.controller?.ref;
    if (ref && !owners.has(ref)) owners.set(ref, (await ownerOf(blocked.namespace, ref)).ref);
    const owner = ref ? owners.get(ref) : undefined;
    const full: DiagnosisInput = { ...input, ...(owner ? { owner: { ref: owner } } : {}) };
    return withRemedy(diagnosePdb(full), full);
  }

  const nextDueMs = (pdbs: readonly PdbObservation[], nowMs: number): number | undefined => {
    let next: number | undefined;
    for (const o of pdbs) {
      const m = o.disruptionsAllowed > 0 ? undefined : memo.get(o.key);
      const due = m ? diagnosisDueMs(m, LASTING_BLOCK_MS, DIAGNOSIS_TTL_MS) : undefined;
      // A due time passed belongs to a PDB the last call did not diagnose (no blocked pod of its
      // own, or beyond MAX_DIAGNOSED_PDBS): nothing to look again for.
      if (due !== undefined && due > nowMs && (next === undefined || due < next)) next = due;
    }
    return next;
  };

  const diagnoser = async (args: Parameters<PdbDiagnoser>[0]): Promise<void> => {
    const now = Date.now();
    if (memo.size > MEMO_CAP) memo.clear();
    if (owners.size > MEMO_CAP) owners.clear();
    if (deployments.size > MEMO_CAP) deployments.clear();
    for (const o of args.pdbs) {
      const m = memo.get(o.key) ?? {};
      if (o.disruptionsAllowed > 0) delete m.blockedSinceMs;
      else m.blockedSinceMs ??= now;
      memo.set(o.key, m);
    }
    let n = 0;
    for (const o of args.pdbs) {
      if (o.disruptionsAllowed > 0) continue;
      const blocked = args.pods.find(
        (p) =>
          p.action === 'Evict' && p.pdbExempt === undefined && p.pdbs.length === 1 && p.pdbs[0] === o.key,
      );
      if (!blocked || n++ >= MAX_DIAGNOSED_PDBS) continue;
      const m = memo.get(o.key)!;
      try {
        const step = diagnosisStep(m, now, LASTING_BLOCK_MS, DIAGNOSIS_TTL_MS);
        let d: PdbDiagnosis | undefined;
        if (step === 'reuse') d = m.read!.d;
        else if (step === 'read') {
          d = await diagnoseOne(args, o, blocked);
          m.read = { atMs: now, d };
        } else {
          const pdb = args
            .pdbsIn(blocked.namespace)
            .find((p) => `${blocked.namespace}/${p.metadata?.name ?? ''}` === o.key);
          d = pdb ? await quick(o, blocked, pdb) : undefined;
        }
        if (d) o.diagnosis = d;
      } catch (err) {
        log.warn(
          { pdb: o.key, err: err instanceof Error ? err.message : String(err) },
          'PDB diagnosis failed',
        );
      }
    }
  };
  return Object.assign(diagnoser, { nextDueMs });
}

/** The PDB's spec and status as a diagnosis reads them (`disruptionsAllowed` as observed). */
function specAndStatus(
  pdb: V1PodDisruptionBudget,
  o: PdbObservation,
): { spec: DiagnosisInput['pdb']['spec']; status: DiagnosisInput['pdb']['status'] } {
  const st = pdb.status;
  return {
    spec: {
      ...(pdb.spec?.minAvailable !== undefined ? { minAvailable: pdb.spec.minAvailable } : {}),
      ...(pdb.spec?.maxUnavailable !== undefined ? { maxUnavailable: pdb.spec.maxUnavailable } : {}),
      ...(pdb.spec?.unhealthyPodEvictionPolicy
        ? { unhealthyPodEvictionPolicy: pdb.spec.unhealthyPodEvictionPolicy }
        : {}),
    },
    status: {
      disruptionsAllowed: o.disruptionsAllowed,
      ...(st?.currentHealthy !== undefined ? { currentHealthy: st.currentHealthy } : {}),
      ...(st?.desiredHealthy !== undefined ? { desiredHealthy: st.desiredHealthy } : {}),
      ...(st?.expectedPods !== undefined ? { expectedPods: st.expectedPods } : {}),
    },
  };
}
